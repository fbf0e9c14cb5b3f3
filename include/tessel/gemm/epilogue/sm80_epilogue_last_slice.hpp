// tessel/gemm/epilogue/sm80_epilogue_last_slice.hpp -- parallel split-K for the sm_80 TiledMMA
// accumulators: the slices of an output tile write fp32 partial tiles, the last to arrive sums
// them in slice order and writes D = alpha * sum + beta * C at any strides.
//
// CollectiveEpilogue<EpilogueSm80LastSliceReduce, Config, ElementOut16>:
//   1. The accumulators (mma.sync's C layout: column pairs, rows 8 apart) go to a (BLK_M, BLK_N)
//      fp32 tile in shared memory, rows padded to BLK_N + 8 floats (a half-warp's 4 rows x 4
//      column pairs then cover 32 distinct banks).
//   2. The tile is read back in chunks of 4 elements that run along D's contiguous dimension:
//      along n when D steps by 1 along n (a row-major D), else along m. Chunk q of the tile is the
//      same elements in every slice.
//   3. One slice: chunk -> D. Several: each slice stores its chunks to its workspace slot
//      (16-byte L2 stores), fences, and bumps the tile's counter; the CTA that brings it to
//      `slices` is the last, resets it to 0, and for every chunk adds the slots 0, 1, ..., S-1 in
//      that order: the sum does not depend on which slice came last, so the result is
//      deterministic. No atomics touch the result.
//   D (C) element (m, n) of the tile at (m0, n0) sits at d + (m0+m)*d_stride_m + (n0+n)*d_stride_n;
//   rows past `rows` and columns past `cols` are not written. beta == 0 never reads C (NaN in C
//   does not propagate, as in BLAS). A fused epilogue (args.fusion: bias, activation,
//   epilogue_fusion.hpp) is applied to each element before the conversion. fp32 -> output rounds
//   to nearest even.
#pragma once

#include <tessel/algorithm/copy.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/dispatch_policy.hpp>
#include <tessel/gemm/epilogue/sm80_epilogue_staged.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::epilogue {

// Where the output goes, at any strides.
struct StridedEpilogueArgs {
  void* d;
  std::int64_t d_stride_m, d_stride_n;
  void const* c;
  std::int64_t c_stride_m, c_stride_n;
  float alpha, beta;
  bool out_f32;  // D and C are fp32; else ElementOut16
  EpilogueFusion fusion{};  // bias, activation on (m0 + m, n0 + n) (inactive: none)
};

// This CTA's slice of a parallel split-K (slices == 1: none).
struct LastSliceSplit {
  int slice = 0, slices = 1;
  float* workspace = nullptr;  // the tile's `slices` slots of BLK_M x BLK_N floats
  int* counter = nullptr;      // the tile's arrival counter, 0 before the first slice arrives
};

template <class Config, class ElementOut16>
struct CollectiveEpilogue<EpilogueSm80LastSliceReduce, Config, ElementOut16> {
  using TiledMma = typename Config::TiledMma;
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN;
  static constexpr int Threads = Config::Threads;
  static constexpr int Pitch = BlkN + 8;
  static constexpr int Chunks = BlkM * BlkN / 4;
  static constexpr int ChunksPerThread = Chunks / Threads;
  static constexpr bool HasOut16 = !std::is_void_v<ElementOut16>;
  static_assert(BlkM % 4 == 0 && BlkN % 4 == 0 && Chunks % Threads == 0,
                "last-slice epilogue: the threads must split the tile's 4-element chunks evenly; change the tile");

  struct SharedStorage {
    alignas(128) float acc[BlkM * Pitch];
    int last;  // this CTA brought the counter to `slices`
  };

  // Chunk q: its first element (m, n) and whether its 4 elements run along n (else along m).
  struct Chunk {
    int m, n;
  };
  TESSEL_HOST_DEVICE static constexpr Chunk chunk(int q, bool along_n) {
    return along_n ? Chunk{q / (BlkN / 4), (q % (BlkN / 4)) * 4} : Chunk{(q % (BlkM / 4)) * 4, q / (BlkM / 4)};
  }

  TESSEL_DEVICE static float4 read_chunk(float const* acc, Chunk c, bool along_n) {
    if (along_n) return *reinterpret_cast<float4 const*>(&acc[c.m * Pitch + c.n]);
    return make_float4(acc[c.m * Pitch + c.n], acc[(c.m + 1) * Pitch + c.n], acc[(c.m + 2) * Pitch + c.n],
                       acc[(c.m + 3) * Pitch + c.n]);
  }

  // Fused: act(. + bias) before the conversion (args.fusion active, a 16-bit Out).
  template <class Out, bool Fused = false>
  TESSEL_DEVICE static void store_chunk(StridedEpilogueArgs const& args, float4 v, Chunk c, bool along_n,
                                        std::int64_t m0, std::int64_t n0, int rows, int cols) {
    float const vals[4] = {v.x, v.y, v.z, v.w};
    TESSEL_UNROLL
    for (int e = 0; e < 4; ++e) {
      int const m = along_n ? c.m : c.m + e, n = along_n ? c.n + e : c.n;
      if (m >= rows || n >= cols) continue;
      float out = args.alpha * vals[e];
      if (args.beta != 0.0f) {
        Out const* cp = static_cast<Out const*>(args.c) + (m0 + m) * args.c_stride_m + (n0 + n) * args.c_stride_n;
        out += args.beta * detail::to_f32(*cp);
      }
      if constexpr (Fused) out = fusion_apply</*Fast=*/true>(args.fusion, out, m0 + m, n0 + n);
      static_cast<Out*>(args.d)[(m0 + m) * args.d_stride_m + (n0 + n) * args.d_stride_n] = detail::from_f32<Out>(out);
    }
  }

  template <bool Fused = false>
  TESSEL_DEVICE static void store(StridedEpilogueArgs const& args, float4 v, Chunk c, bool along_n, std::int64_t m0,
                                  std::int64_t n0, int rows, int cols) {
    if constexpr (Fused) {  // (a 16-bit D: the host finishes an fp32 one in a pass of its own)
      if constexpr (HasOut16) store_chunk<ElementOut16, true>(args, v, c, along_n, m0, n0, rows, cols);
    } else if (args.out_f32 || !HasOut16) {
      store_chunk<float>(args, v, c, along_n, m0, n0, rows, cols);
    } else if constexpr (HasOut16) {
      store_chunk<ElementOut16>(args, v, c, along_n, m0, n0, rows, cols);
    }
  }

  // f(j, with_fusion) for this thread's chunks j: with a fused epilogue (uniform) in a loop that
  // is not unrolled, one copy of its activations; else unrolled.
  template <class F>
  TESSEL_DEVICE static void each_chunk(bool fused, F const& f) {
    if (fused) {
      TESSEL_NO_UNROLL
      for (int j = 0; j < ChunksPerThread; ++j) f(j, std::true_type{});
    } else {
      TESSEL_UNROLL
      for (int j = 0; j < ChunksPerThread; ++j) f(j, std::false_type{});
    }
  }

  // accum: this thread's (MMA,MMA_M,MMA_N) of the tile at (m0, n0); rows, cols: the tile's extent
  // inside D (<= BLK_M, BLK_N); along_n: D steps by 1 along n (chunks run along n).
  template <class FrgC>
  TESSEL_DEVICE void operator()(FrgC const& accum, StridedEpilogueArgs const& args, std::int64_t m0, std::int64_t n0,
                                int rows, int cols, bool along_n, LastSliceSplit const& split, int thread_idx,
                                SharedStorage& smem) const {
    TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_slice(thread_idx);
    Tensor sAcc = make_tensor(make_smem_ptr(smem.acc),
                              Layout<Shape<Int<BlkM>, Int<BlkN>>, Stride<Int<Pitch>, _1>>{});  // (BLK_M,BLK_N)
    Tensor tCsAcc = thr_mma.partition_C(sAcc);                                                  // (MMA,MMA_M,MMA_N)
    copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<64>, float>{}, accum, tCsAcc);
    __syncthreads();

    // A fused epilogue walks the chunks in loops that are not unrolled (one copy of its
    // activations, not one per chunk: sm80_epilogue_staged.hpp says why).
    bool const fused = HasOut16 && !args.out_f32 && args.fusion.active();
    if (split.slices == 1) {
      auto const one = [&](int j, auto with_fusion) {
        Chunk const c = chunk(thread_idx + j * Threads, along_n);
        store<decltype(with_fusion)::value>(args, read_chunk(smem.acc, c, along_n), c, along_n, m0, n0, rows, cols);
      };
      each_chunk(fused, one);
      return;
    }

    // This slice's partial tile to its slot; then arrive.
    float4* const slots = reinterpret_cast<float4*>(split.workspace);  // (slice, chunk)
    TESSEL_UNROLL
    for (int j = 0; j < ChunksPerThread; ++j) {
      int const q = thread_idx + j * Threads;
      __stcg(slots + std::int64_t(split.slice) * Chunks + q, read_chunk(smem.acc, chunk(q, along_n), along_n));
    }
    __threadfence();  // every thread's partial is visible device-wide before the arrival
    __syncthreads();
    if (thread_idx == 0) {
      int const before = atomicAdd(split.counter, 1);
      smem.last = before == split.slices - 1;
      if (smem.last) *split.counter = 0;  // ready for the next launch on the same workspace
    }
    __syncthreads();
    if (!smem.last) return;
    __threadfence();  // the other slices' partials, read below from L2

    auto const reduce = [&](int j, auto with_fusion) {
      int const q = thread_idx + j * Threads;
      float4 sum = __ldcg(slots + q);
      for (int s = 1; s < split.slices; ++s) {
        float4 const v = __ldcg(slots + std::int64_t(s) * Chunks + q);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      store<decltype(with_fusion)::value>(args, sum, chunk(q, along_n), along_n, m0, n0, rows, cols);
    };
    each_chunk(fused, reduce);
  }
};

}  // namespace tessel::epilogue
