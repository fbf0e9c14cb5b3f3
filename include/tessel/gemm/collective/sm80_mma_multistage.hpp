// tessel/gemm/collective/sm80_mma_multistage.hpp -- the sm_80 mainloop: a CTA's accumulators
// over a range of k-tiles, with a software pipeline of `Stages` shared-memory buffers.
//
// CollectiveMma<MainloopSm80CpAsync<Stages>, Config> (Config: collective/sm80_gemm_config.hpp).
// Seed 003's pipeline, with sm_80 instructions:
//   global -> shared   16-byte cp.async (zero-fill), Stages-1 k-tiles in flight ahead of the MMAs
//   shared -> regs     ldmatrix.x4 through make_tiled_copy_A/B, fragments double-buffered:
//                      k-block kb+1 loads while kb computes
//   regs -> tensor core  mma.sync through the TiledMMA
// At k-block 0 of each k-tile the copies of k-tile t+Stages-1 are issued before that tile's MMAs;
// at the last k-block the next stage is awaited (cp.async.wait_group Stages-2, one barrier), which
// also retires the reads of the stage the next copies overwrite.
// Config::Schedule (Sm80MainloopSchedule) varies this order: the copies spread over k-blocks
// 0..KBlocks-2 (committed as one group after the last of them), an unpredicated copy of the loop
// for interior tiles, and how fp32 operands are rounded to tf32.
//
// Residues. Rows past M (N) are predicated per copy (zero-fill, nothing read). K is cut into
// k-tiles at multiples of BLK_K, so only the last k-tile can be partial; it is loaded first (the
// pipeline then runs over full tiles): its chunks that lie wholly inside K use cp.async, those
// wholly outside are zero-filled, and the one chunk that straddles K is read element by element
// and stored with zeros past K. Operands must be K-major with 16-byte aligned rows (the host
// adapter stages anything else into such a copy first).
//
// operator()(gA, gB, accum, residue, k_tiles, thread, smem):
//   gA (BLK_M,BLK_K,k) and gB (BLK_N,BLK_K,k) -- the CTA's tile row/column of A and B in global memory
//   accum (MMA,MMA_M,MMA_N) fp32 -- accumulated into (not cleared)
//   residue: rows of A and B inside the problem for this tile (<= BLK_M, BLK_N), and K
//   k_tiles: [begin, end) k-tiles to reduce (a split-K slice, or all of them)
// Tensor names: docs/glossary.md (tAgA: A in gmem partitioned by the copy, tCrA: A in registers
// partitioned by the MMA, ...).
#pragma once

#include <tessel/algorithm/copy.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/gemm/collective/swizzle_hoist.hpp>
#include <tessel/gemm/dispatch_policy.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::collective {

template <class DispatchPolicy, class Config>
struct CollectiveMma {
  static_assert(sizeof(DispatchPolicy) == 0, "CollectiveMma: no mainloop is defined for this dispatch policy");
};

// Which rows of the tile exist, and K.
struct MainloopResidue {
  int rows_a;        // rows of A in this tile: min(BLK_M, M - m0)
  int rows_b;        // rows of B (columns of D) in this tile: min(BLK_N, N - n0)
  std::int64_t k;    // K
};

// [begin, end) k-tiles; `last` is the index of the problem's last k-tile (ceil(K/BLK_K) - 1).
struct KTileRange {
  int begin, end;
};

namespace detail {

// fp32 -> tf32 as the tf32 tensor cores expect their inputs (Tf32Rounding, sm80_gemm_config.hpp);
// NaN and infinities are kept.
template <Tf32Rounding R>
TESSEL_DEVICE inline float round_to_tf32(float x) {
#if defined(TESSEL_SINGLE_PTX)
  // Compiled once for every architecture, this would round with cvt.rna on Hopper too.
  static_assert(R != Tf32Rounding::nearest_even,
                "nearest_even takes an sm_90 path: compile this TU once per architecture (the per-architecture lists in src/ and tests/CMakeLists.txt)");
#endif
#if defined(TESSEL_ARCH_SM80)
  if constexpr (R == Tf32Rounding::truncate) {
    return x;  // the MMA ignores the 13 low mantissa bits
  } else {
    std::uint32_t r;
#if defined(TESSEL_ARCH_SM90)
    if constexpr (R == Tf32Rounding::nearest_even) {
      asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
      return __uint_as_float(r);
    }
#endif
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
  }
#else
  return x;
#endif
}

template <Tf32Rounding R, class Frg>
TESSEL_DEVICE void round_fragment_to_tf32(Frg&& frg) {
  if constexpr (R != Tf32Rounding::truncate) {
    TESSEL_UNROLL
    for (int i = 0; i < int(size(frg)); ++i) {
      auto& v = frg(i);
      v.storage = round_to_tf32<R>(v.storage);
    }
  }
}

}  // namespace detail

template <int Stages, class Config>
struct CollectiveMma<MainloopSm80CpAsync<Stages>, Config> {
  static_assert(Stages == Config::Stages, "CollectiveMma: the policy's Stages and the configuration's must agree");
  using Element = typename Config::Element;
  using TiledMma = typename Config::TiledMma;
  using SmemLayoutA = typename Config::SmemLayoutA;
  using SmemLayoutB = typename Config::SmemLayoutB;
  using GmemTiledCopyA = typename Config::GmemTiledCopyA;
  using GmemTiledCopyB = typename Config::GmemTiledCopyB;
  using SmemCopyAtomA = typename Config::SmemCopyAtomA;
  using SmemCopyAtomB = typename Config::SmemCopyAtomB;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN, BlkK = Config::TileK;
  static constexpr bool IsTf32 = std::is_same_v<Element, float>;
  using Schedule = typename Config::Schedule;

  struct SharedStorage {
    alignas(128) Element a[decltype(cosize(SmemLayoutA{}))::value];
    alignas(128) Element b[decltype(cosize(SmemLayoutB{}))::value];
  };

  // The first k-tile the CTA loads is the problem's partial last one when it owns it (file comment).
  TESSEL_HOST_DEVICE static constexpr int k_tile_at(int i, KTileRange r, bool partial_last) {
    if (!partial_last) return r.begin + i;
    return i == 0 ? r.end - 1 : r.begin + i - 1;
  }

  // Rows -> predicate for a copy partition: tXpX(m) = the rows of copy row-block m exist.
  template <class TXcX>
  TESSEL_DEVICE static auto row_predicates(TXcX const& tXcX, int rows) {
    Tensor tXpX = make_tensor<bool>(make_shape(size<1>(tXcX)));  // (CPY_M)
    TESSEL_UNROLL
    for (int m = 0; m < int(size<1>(tXcX)); ++m) tXpX(m) = int(get<0>(tXcX(0, m, 0))) < rows;
    return tXpX;
  }

  // One 16-byte chunk of a full k-tile: cp.async, zero-filled where the row lies outside the
  // problem; Interior tiles (Schedule::UnpredicatedInterior) use the copy without a predicate.
  template <bool Interior, class TiledCopyT, class Src, class Dst>
  TESSEL_DEVICE static void copy_chunk(TiledCopyT const& tiled_copy, bool row_inside, Src const& src, Dst&& dst) {
    if constexpr (Interior) {
      copy(typename Config::GmemTiledCopyInterior{}, src, dst);
    } else {
      copy_if(tiled_copy, [&](int) { return row_inside; }, src, dst);
    }
  }

  // The partial k-tile: chunks inside K by cp.async, outside zero-filled, the straddling chunk by
  // element (file comment). k0: the k of the tile's first column.
  template <class TiledCopyT, class TXpX, class TXcX, class Src, class Dst>
  TESSEL_DEVICE static void load_partial_tile(TiledCopyT const& tiled_copy, TXpX const& tXpX, TXcX const& tXcX,
                                              Src const& tXgX, Dst&& tXsX, std::int64_t k0, std::int64_t k) {
    constexpr int Cpy = decltype(size<0>(tXgX))::value;
    TESSEL_UNROLL
    for (int m = 0; m < int(size<1>(tXgX)); ++m) {
      TESSEL_UNROLL
      for (int kk = 0; kk < int(size<2>(tXgX)); ++kk) {
        std::int64_t const kc = k0 + int(get<1>(tXcX(0, m, kk)));  // k of the chunk's first element
        std::int64_t const inside = k - kc;                          // elements of the chunk inside K
        if (!tXpX(m) || inside <= 0 || inside >= Cpy) {
          copy_if(tiled_copy, [&](int) { return tXpX(m) && inside > 0; }, tXgX(_, m, kk), tXsX(_, m, kk));
        } else {
          Element v[Cpy];
          TESSEL_UNROLL
          for (int e = 0; e < Cpy; ++e) v[e] = e < inside ? tXgX(e, m, kk) : Element(0);
          *reinterpret_cast<uint128_t*>(&tXsX(0, m, kk)) = *reinterpret_cast<uint128_t const*>(v);
        }
      }
    }
  }

  template <class TensorA, class TensorB, class FrgC>
  TESSEL_DEVICE void operator()(TensorA const& gA, TensorB const& gB, FrgC& accum, MainloopResidue residue,
                                KTileRange k_tiles, int thread_idx, SharedStorage& smem) const {
    if constexpr (Schedule::UnpredicatedInterior) {
      if (residue.rows_a == BlkM && residue.rows_b == BlkN) {
        mainloop<true>(gA, gB, accum, residue, k_tiles, thread_idx, smem);
        return;
      }
    }
    mainloop<false>(gA, gB, accum, residue, k_tiles, thread_idx, smem);
  }

  // Interior: every row of the tile lies inside M and N (the copies of full k-tiles need no predicate).
  template <bool Interior, class TensorA, class TensorB, class FrgC>
  TESSEL_DEVICE void mainloop(TensorA const& gA, TensorB const& gB, FrgC& accum, MainloopResidue residue,
                              KTileRange k_tiles, int thread_idx, SharedStorage& smem) const {
    Tensor sA = make_tensor(make_smem_ptr(smem.a), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(smem.b), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)

    // Global -> shared partitions, and the tile coordinates of the same elements (predicates).
    GmemTiledCopyA g2s_a;
    GmemTiledCopyB g2s_b;
    auto g2s_thr_a = g2s_a.get_slice(thread_idx);
    auto g2s_thr_b = g2s_b.get_slice(thread_idx);
    Tensor tAgA = g2s_thr_a.partition_S(gA);                 // (CPY,CPY_M,CPY_K,k)
    Tensor tAsA = hoist_swizzle(g2s_thr_a.partition_D(sA));  // (CPY,CPY_M,CPY_K,PIPE), swizzled once
    Tensor tBgB = g2s_thr_b.partition_S(gB);                 // (CPY,CPY_N,CPY_K,k)
    Tensor tBsB = hoist_swizzle(g2s_thr_b.partition_D(sB));  // (CPY,CPY_N,CPY_K,PIPE), swizzled once
    Tensor cA = make_identity_tensor(make_shape(Int<BlkM>{}, Int<BlkK>{}));  // (BLK_M,BLK_K) -> (m,k)
    Tensor cB = make_identity_tensor(make_shape(Int<BlkN>{}, Int<BlkK>{}));  // (BLK_N,BLK_K) -> (n,k)
    Tensor tAcA = g2s_thr_a.partition_S(cA);                                 // (CPY,CPY_M,CPY_K) -> (m,k)
    Tensor tBcB = g2s_thr_b.partition_S(cB);                                 // (CPY,CPY_N,CPY_K) -> (n,k)
    Tensor tApA = row_predicates(tAcA, residue.rows_a);                      // (CPY_M)
    Tensor tBpB = row_predicates(tBcB, residue.rows_b);                      // (CPY_N)

    // MMA partitions: register fragments, and ldmatrix views of shared memory onto them.
    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(thread_idx);
    Tensor sA_shape = make_tensor(make_smem_ptr(smem.a), make_layout(make_shape(Int<BlkM>{}, Int<BlkK>{})));  // (BLK_M,BLK_K)
    Tensor sB_shape = make_tensor(make_smem_ptr(smem.b), make_layout(make_shape(Int<BlkN>{}, Int<BlkK>{})));  // (BLK_N,BLK_K)
    Tensor tCrA = thr_mma.partition_fragment_A(sA_shape);  // (MMA,MMA_M,MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB_shape);  // (MMA,MMA_N,MMA_K)

    auto s2r_a = make_tiled_copy_A(SmemCopyAtomA{}, tiled_mma);
    auto s2r_b = make_tiled_copy_B(SmemCopyAtomB{}, tiled_mma);
    auto s2r_thr_a = s2r_a.get_slice(thread_idx);
    auto s2r_thr_b = s2r_b.get_slice(thread_idx);
    Tensor tCsA = s2r_thr_a.partition_S(sA);        // (CPY,CPY_M,CPY_K,PIPE)
    Tensor tCrA_view = s2r_thr_a.retile_D(tCrA);    // (CPY,CPY_M,CPY_K)
    Tensor tCsB = s2r_thr_b.partition_S(sB);        // (CPY,CPY_N,CPY_K,PIPE)
    Tensor tCrB_view = s2r_thr_b.retile_D(tCrB);    // (CPY,CPY_N,CPY_K)
    constexpr int KBlocks = decltype(size<2>(tCrA))::value;
    // k-block kb of stage `stage`, its swizzle hoisted (k-blocks move inside the swizzle period,
    // row blocks and stages by whole periods): the per-k-block bases are loop invariants.
    auto const tCsA_k = [&](int kb, int stage) { return hoist_swizzle(tCsA(_, _, kb, _))(_, _, stage); };  // (CPY,CPY_M)
    auto const tCsB_k = [&](int kb, int stage) { return hoist_swizzle(tCsB(_, _, kb, _))(_, _, stage); };  // (CPY,CPY_N)
    // Fragments of k-block kb from stage `stage` (rounded to tf32 for fp32 operands).
    auto const load_fragments = [&](int kb, int stage) {
      copy(s2r_a, tCsA_k(kb, stage), tCrA_view(_, _, kb));
      copy(s2r_b, tCsB_k(kb, stage), tCrB_view(_, _, kb));
      if constexpr (IsTf32) {
        detail::round_fragment_to_tf32<Schedule::Tf32>(tCrA(_, _, kb));
        detail::round_fragment_to_tf32<Schedule::Tf32>(tCrB(_, _, kb));
      }
    };

    int const k_tile_count = k_tiles.end - k_tiles.begin;
    bool const partial_last =
        k_tile_count > 0 && std::int64_t(k_tiles.end) * BlkK > residue.k;  // this CTA owns the partial k-tile

    // Copies of the full k-tile kt into stage `stage`: those of k-block kb of the schedule (file comment).
    constexpr int CopiesA = decltype(size<1>(tAgA) * size<2>(tAgA))::value;
    constexpr int CopiesB = decltype(size<1>(tBgB) * size<2>(tBgB))::value;
    constexpr int CopySlots = Schedule::SpreadCopies && KBlocks > 2 ? KBlocks - 1 : 1;  // k-blocks that issue copies
    auto const load_tile_slot = [&](int slot, int kt, int stage) {
      constexpr int CpyM = decltype(size<1>(tAgA))::value, CpyN = decltype(size<1>(tBgB))::value;
      constexpr int Copies = CopiesA + CopiesB;
      TESSEL_UNROLL
      for (int i = 0; i < Copies; ++i) {
        if (i * CopySlots / Copies != slot) continue;  // copy i belongs to slot i * CopySlots / Copies
        if (i < CopiesA) {
          int const m = i % CpyM, kk = i / CpyM;
          copy_chunk<Interior>(g2s_a, tApA(m), tAgA(_, m, kk, kt), tAsA(_, m, kk, stage));
        } else {
          int const n = (i - CopiesA) % CpyN, kk = (i - CopiesA) / CpyN;
          copy_chunk<Interior>(g2s_b, tBpB(n), tBgB(_, n, kk, kt), tBsB(_, n, kk, stage));
        }
      }
    };

    // Prologue: the first Stages-1 k-tiles in flight (the partial one first).
    TESSEL_UNROLL
    for (int s = 0; s < Stages - 1; ++s) {
      if (s < k_tile_count) {
        int const kt = k_tile_at(s, k_tiles, partial_last);
        if (s == 0 && partial_last) {
          load_partial_tile(g2s_a, tApA, tAcA, tAgA(_, _, _, kt), tAsA(_, _, _, s), std::int64_t(kt) * BlkK, residue.k);
          load_partial_tile(g2s_b, tBpB, tBcB, tBgB(_, _, _, kt), tBsB(_, _, _, s), std::int64_t(kt) * BlkK, residue.k);
        } else {
          TESSEL_UNROLL
          for (int slot = 0; slot < CopySlots; ++slot) load_tile_slot(slot, kt, s);
        }
      }
      cp_async_fence();
    }

    int smem_read = 0;
    int smem_write = Stages - 1;
    int k_load = Stages - 1;  // the next k-tile (position in the load order) to issue
    // The read stage's copies have landed (everyone's), and every read of the stage the next
    // copies overwrite is done: one CTA barrier.
    auto const wait_stage = [&] {
      cp_async_wait<Stages - 2>();
      __syncthreads();
    };

    wait_stage();
    load_fragments(0, smem_read);  // the first k-block's fragments

    // This k-block's share of the copies of k-tile t+Stages-1 (issued before its MMAs).
    auto const issue_copies = [&](int kb) {
      if (kb >= CopySlots) return;
      if (k_load < k_tile_count) load_tile_slot(kb, k_tile_at(k_load, k_tiles, partial_last), smem_write);
      if (kb == CopySlots - 1) {
        cp_async_fence();
        ++k_load;
        smem_write = smem_write == Stages - 1 ? 0 : smem_write + 1;
      }
    };

    TESSEL_NO_UNROLL
    for (int k_tile = 0; k_tile < k_tile_count; ++k_tile) {
      TESSEL_UNROLL
      for (int kb = 0; kb < KBlocks; ++kb) {
        if (kb == KBlocks - 1) {
          // The next k-tile's stage: wait for its copies (the CTA barrier also retires every read
          // of the stage the next copies will overwrite).
          smem_read = smem_read == Stages - 1 ? 0 : smem_read + 1;
          wait_stage();
        }
        // Fragments of the next k-block (of this tile, or the first of the next) while kb computes.
        load_fragments(kb + 1 == KBlocks ? 0 : kb + 1, smem_read);
        issue_copies(kb);
        gemm(tiled_mma, tCrA(_, _, kb), tCrB(_, _, kb), accum);
      }
    }
    // Shared memory may be reused (epilogue) once every copy has landed and every read is done.
    cp_async_wait<0>();
    __syncthreads();
  }
};

}  // namespace tessel::collective
