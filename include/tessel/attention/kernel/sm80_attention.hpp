// tessel/attention/kernel/sm80_attention.hpp -- the sm_80 flash-attention forward kernel
// (mma.sync, ldmatrix, cp.async): one CTA per (query tile, head, batch).
//
// Seed 001's pieces, assembled into attention. Each of the CTA's warps owns BLK_M / Warps query
// rows (the TiledMMA's warps lie along M), so a row's softmax never leaves its warp: the four
// threads of a quad hold one row's scores and reduce with two shuffles.
//
//   shared memory   sQ (BLK_M,D)   sK (BLK_N,D)   sV (BLK_N,D_v)   one buffer each, swizzled
//                   16-byte chunks (Sw<3,3,3> on 128-byte rows, Sw<2,3,3> on 64-byte ones)
//   per key block n, walked from the last block to the first (the masked blocks come first):
//     wait K[n]                          cp.async group, CTA barrier
//     issue V[n]                         lands while S is computed
//     S = Q K[n]^T                       ldmatrix Q and K (non-transposed), mma.sync
//     softcap, mask                      the mask only where key_block_needs_mask says
//     wait V[n]; issue K[n-1]            K[n-1] lands during the softmax and P V
//     online softmax                     row max; O and the row sum rescaled by exp2(old - new) only
//                                        when the max grew by more than 2^8 (lazy), P = exp2(S *
//                                        log2e*scale - max * log2e*scale): one FFMA
//     O += P V[n]                        P from the score registers (the accumulator fragment of
//                                        two n8 atoms is the A fragment of one k16 atom), V by
//                                        ldmatrix.trans
//   end: O /= row sum, LSE = max * scale + log(sum); rows with no key: O = 0, LSE = -inf.
// Tensor names: docs/glossary.md (tSrQ: Q in registers partitioned for S = Q K^T, tOrVt: V^T
// partitioned for O = P V ...).
#pragma once

#include <tessel/algorithm/copy.hpp>
#include <tessel/algorithm/fill.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/attention/attention_mask.hpp>
#include <tessel/attention/kernel/attention_math.hpp>
#include <tessel/attention/kernel/attention_params.hpp>
#include <tessel/atom/copy_atom.hpp>
#include <tessel/atom/mma_atom.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm80_gemm_config.hpp>
#include <tessel/layout.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/tensor.hpp>
#include <tessel/tiled/tiled_copy.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// One sm_80 attention configuration: element type, head dims, the CTA's query and key tiles, warps.
//   e.g. Sm80AttentionConfig<bfloat16_t, 128, 128, 128, 64, 4>: 128 threads, 32 query rows per
//        warp, smem (128 + 64) x 128 x 2 B + 64 x 128 x 2 B = 64 KiB
// LazyRescale: O and the row sums are rescaled only when a row's max grows by more than 2^8 (see
// the softmax below), else after every block (measured on the H200: lazy +3-7% at D 64 and 128
// with 4 warps, -11% at D 256 with 8).
template <class Element_, int D_, int Dv_, int BlkM_, int BlkN_, int Warps_, bool LazyRescale_ = true>
struct Sm80AttentionConfig {
  using Element = Element_;
  static constexpr int D = D_, Dv = Dv_, BlkM = BlkM_, BlkN = BlkN_, Warps = Warps_;
  static constexpr bool LazyRescale = LazyRescale_;
  static constexpr int Threads = 32 * Warps;

  static_assert(BlkM % (16 * Warps) == 0, "Sm80AttentionConfig: each warp takes whole m16 atoms; BLK_M must be a multiple of 16 x Warps");
  static_assert(BlkN % 16 == 0 && D % 16 == 0 && Dv % 16 == 0,
                "Sm80AttentionConfig: BLK_N, D and D_v must be multiples of 16 (the k16 atom and ldmatrix.x4)");

  using MmaOp = typename collective::Sm80MmaOf<Element>::Op;
  using TiledMma = decltype(make_tiled_mma(MMA_Atom<MmaOp>{}, Layout<Shape<Int<Warps>, _1, _1>>{},
                                           Tile<Int<16 * Warps>, _16, _16>{}));

  // Shared memory: 8-row swizzle atoms of 128-byte rows (64 elements) where D allows, else 64-byte.
  static constexpr int AtomCols = D % 64 == 0 ? 64 : 32;
  static_assert(D % AtomCols == 0 && Dv % AtomCols == 0,
                "Sm80AttentionConfig: D and D_v must both be multiples of the swizzle atom's width (64, or 32 when D is not a multiple of 64)");
  using SmemAtom = decltype(composition(Swizzle<AtomCols == 64 ? 3 : 2, 3, 3>{},
                                        Layout<Shape<_8, Int<AtomCols>>, Stride<Int<AtomCols>, _1>>{}));
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom{}, Shape<Int<BlkM>, Int<D>>{}));    // (BLK_M,D)
  using SmemLayoutK = decltype(tile_to_shape(SmemAtom{}, Shape<Int<BlkN>, Int<D>>{}));    // (BLK_N,D)
  using SmemLayoutV = decltype(tile_to_shape(SmemAtom{}, Shape<Int<BlkN>, Int<Dv>>{}));   // (BLK_N,D_v)
  // V seen as the B operand of O = P V: (D_v, BLK_N), element (d, n) = sV(n, d).
  using SmemLayoutVt = decltype(composition(SmemLayoutV{}, Layout<Shape<Int<Dv>, Int<BlkN>>, Stride<Int<BlkN>, _1>>{}));

  // Global -> shared: 16-byte cp.async, a swizzle atom's row per AtomCols / 8 threads.
  static constexpr int ThreadsPerRow = AtomCols / 8;
  static constexpr int CopyRows = Threads / ThreadsPerRow;
  static_assert(BlkM % CopyRows == 0 && BlkN % CopyRows == 0,
                "Sm80AttentionConfig: one pass of the CTA's copies covers CopyRows rows; BLK_M and BLK_N must be multiples of it");
  using GmemTiledCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, Element>{},
                                                 Layout<Shape<Int<CopyRows>, Int<ThreadsPerRow>>, Stride<Int<ThreadsPerRow>, _1>>{},
                                                 Layout<Shape<_1, _8>>{}));

  struct SharedStorage {
    alignas(128) Element q[decltype(cosize(SmemLayoutQ{}))::value];
    alignas(128) Element k[decltype(cosize(SmemLayoutK{}))::value];
    alignas(128) Element v[decltype(cosize(SmemLayoutV{}))::value];
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
};


// The rows of one (batch, head) problem a CTA works on: where its sequence starts and how long it is.
struct Sm80AttentionSequence {
  std::int64_t q_row0, k_row0;  // first row of the sequence in Q/O and in K/V (packed when variable-length)
  int seqlen_q, seqlen_k;
};

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm80_attention_kernel(AttentionParams const p) {
#if defined(TESSEL_ARCH_SM80)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>(smem_raw);
  int const tid = int(threadIdx.x);
  int const m_block = p.longest_first ? p.m_blocks - 1 - int(blockIdx.x) : int(blockIdx.x);
  int const head = int(blockIdx.y), batch = int(blockIdx.z);
  int const kv_head = head / p.kv_group;

  Sm80AttentionSequence seq{0, 0, p.seqlen_q, p.seqlen_k};
  if (p.cu_seqlens_q) {
    seq.q_row0 = p.cu_seqlens_q[batch];
    seq.k_row0 = p.cu_seqlens_k[batch];
    seq.seqlen_q = p.cu_seqlens_q[batch + 1] - int(seq.q_row0);
    seq.seqlen_k = p.cu_seqlens_k[batch + 1] - int(seq.k_row0);
  }
  std::int64_t const m0 = std::int64_t(m_block) * BlkM;
  if (m0 >= seq.seqlen_q) return;
  int const rows_q = seq.seqlen_q - int(m0) < BlkM ? seq.seqlen_q - int(m0) : BlkM;

  // This (batch, head)'s rows of Q, K, V, O.
  std::int64_t const bq = p.cu_seqlens_q ? 0 : batch, bk = p.cu_seqlens_q ? 0 : batch;
  auto const* q = static_cast<Element const*>(p.q) + bq * p.q_batch_stride + seq.q_row0 * p.q_row_stride + head * p.q_head_stride;
  auto const* k = static_cast<Element const*>(p.k) + bk * p.k_batch_stride + seq.k_row0 * p.k_row_stride + kv_head * p.k_head_stride;
  auto const* v = static_cast<Element const*>(p.v) + bk * p.v_batch_stride + seq.k_row0 * p.v_row_stride + kv_head * p.v_head_stride;
  auto* o = static_cast<Element*>(p.o) + bq * p.o_batch_stride + seq.q_row0 * p.o_row_stride + head * p.o_head_stride;

  Tensor mQ = make_tensor(make_gmem_ptr(q), make_shape(seq.seqlen_q, Int<D>{}), make_stride(p.q_row_stride, Int<1>{}));  // (S_q,D)
  Tensor mK = make_tensor(make_gmem_ptr(k), make_shape(seq.seqlen_k, Int<D>{}), make_stride(p.k_row_stride, Int<1>{}));  // (S_k,D)
  Tensor mV = make_tensor(make_gmem_ptr(v), make_shape(seq.seqlen_k, Int<Dv>{}), make_stride(p.v_row_stride, Int<1>{}));  // (S_k,D_v)
  Tensor gQ = local_tile(mQ, make_shape(Int<BlkM>{}, Int<D>{}), make_coord(m_block, 0));  // (BLK_M,D)
  Tensor gK = local_tile(mK, make_shape(Int<BlkN>{}, Int<D>{}), make_coord(_, 0));        // (BLK_N,D,n)
  Tensor gV = local_tile(mV, make_shape(Int<BlkN>{}, Int<Dv>{}), make_coord(_, 0));       // (BLK_N,D_v,n)

  Tensor sQ = make_tensor(make_smem_ptr(smem.q), typename Config::SmemLayoutQ{});    // (BLK_M,D)
  Tensor sK = make_tensor(make_smem_ptr(smem.k), typename Config::SmemLayoutK{});    // (BLK_N,D)
  Tensor sV = make_tensor(make_smem_ptr(smem.v), typename Config::SmemLayoutV{});    // (BLK_N,D_v)
  Tensor sVt = make_tensor(make_smem_ptr(smem.v), typename Config::SmemLayoutVt{});  // (D_v,BLK_N)

  // Partitions hold per-thread shared and global addresses. They are built inside the key loop,
  // from the thread index laundered through an empty asm: built once before it, the compiler
  // keeps every address of every k-block live across the loop (over 100 registers at D = 128)
  // and spills the accumulators instead.
  typename Config::GmemTiledCopy g2s;
  typename Config::TiledMma tiled_mma;

  // Global -> shared of whole rows (CPY,CPY_R,CPY_C): row r of the tile exists when r < rows
  // (the others are zero-filled).
  auto const load_rows = [&](int t, auto const& gX, auto const& sX, int rows) {  // (R,C)
    auto g2s_thr = g2s.get_slice(t);
    Tensor tXgX = g2s_thr.partition_S(gX);  // (CPY,CPY_R,CPY_C)
    Tensor tXsX = g2s_thr.partition_D(sX);
    Tensor tXcX = g2s_thr.partition_S(make_identity_tensor(make_shape(size<0>(sX), size<1>(sX))));  // -> (r,c)
    TESSEL_UNROLL
    for (int r = 0; r < int(size<1>(tXgX)); ++r) {
      bool const inside = int(get<0>(tXcX(0, r, 0))) < rows;
      TESSEL_UNROLL
      for (int c = 0; c < int(size<2>(tXgX)); ++c) copy_if(g2s, [&](int) { return inside; }, tXgX(_, r, c), tXsX(_, r, c));
    }
  };
  auto const load_k = [&](int t, int n) { load_rows(t, gK(_, _, n), sK, seq.seqlen_k - n * BlkN); };
  auto const load_v = [&](int t, int n) { load_rows(t, gV(_, _, n), sV, seq.seqlen_k - n * BlkN); };

  Tensor acc_s = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N) fp32
  Tensor acc_o = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<Dv>{}));    // (MMA,MMA_M,MMA_DV) fp32
  auto thr_mma = tiled_mma.get_slice(tid);
  Tensor tScS = thr_mma.partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<BlkN>{})));  // (MMA,MMA_M,MMA_N) -> (m,n)
  Tensor tOcO = thr_mma.partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<Dv>{})));    // (MMA,MMA_M,MMA_DV) -> (m,d)
  // P as the A operand of O = P V.
  Tensor tOrP = thr_mma.partition_fragment_A(make_tensor(make_smem_ptr(smem.v), make_layout(make_shape(Int<BlkM>{}, Int<BlkN>{}))));  // (MMA,MMA_M,MMA_N)
  clear(acc_o);
  constexpr int MmaM = decltype(size<1>(acc_s))::value;
  constexpr int MmaN = decltype(size<2>(acc_s))::value;
  constexpr int MmaDv = decltype(size<2>(acc_o))::value;
  // A thread holds two rows per m atom: fragment values 0,1 of row half 0 and 2,3 of half 1.
  float row_max[MmaM][2], row_sum[MmaM][2];
  TESSEL_UNROLL
  for (int m = 0; m < MmaM; ++m) {
    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) row_max[m][h] = -INFINITY, row_sum[m][h] = 0.0f;
  }

  AttentionMask const mask{seq.seqlen_k, p.bottom_right ? std::int64_t(seq.seqlen_k) - seq.seqlen_q : 0, p.window_left,
                           p.window_right};
  KeyBlockRange const blocks = key_blocks(mask, m0, rows_q, BlkN);

  // acc_s = Q K^T: ldmatrix of Q and K, the next k-block's fragments loaded while this one's
  // MMAs run.
  auto const gemm_qk = [&](int t) {
    auto s2r_q = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, tiled_mma);
    auto s2r_k = make_tiled_copy_B(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, tiled_mma);
    auto thr = tiled_mma.get_slice(t);
    Tensor tSrQ = thr.partition_fragment_A(make_tensor(make_smem_ptr(smem.q), make_layout(make_shape(Int<BlkM>{}, Int<D>{}))));  // (MMA,MMA_M,MMA_D)
    Tensor tSrK = thr.partition_fragment_B(make_tensor(make_smem_ptr(smem.k), make_layout(make_shape(Int<BlkN>{}, Int<D>{}))));  // (MMA,MMA_N,MMA_D)
    Tensor tSsQ = s2r_q.get_slice(t).partition_S(sQ);  // (CPY,CPY_M,CPY_D)
    Tensor tSrQ_v = s2r_q.get_slice(t).retile_D(tSrQ);
    Tensor tSsK = s2r_k.get_slice(t).partition_S(sK);  // (CPY,CPY_N,CPY_D)
    Tensor tSrK_v = s2r_k.get_slice(t).retile_D(tSrK);
    constexpr int KB = decltype(size<2>(tSrQ))::value;
    copy(s2r_q, tSsQ(_, _, 0), tSrQ_v(_, _, 0));
    copy(s2r_k, tSsK(_, _, 0), tSrK_v(_, _, 0));
    TESSEL_UNROLL
    for (int kb = 0; kb < KB; ++kb) {
      if (kb + 1 < KB) {
        copy(s2r_q, tSsQ(_, _, kb + 1), tSrQ_v(_, _, kb + 1));
        copy(s2r_k, tSsK(_, _, kb + 1), tSrK_v(_, _, kb + 1));
      }
      gemm(tiled_mma, tSrQ(_, _, kb), tSrK(_, _, kb), acc_s);
    }
  };
  // acc_o += P V: V^T by ldmatrix.trans.
  auto const gemm_pv = [&](int t) {
    auto s2r_v = make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, Element>{}, tiled_mma);
    Tensor tOrVt = tiled_mma.get_slice(t).partition_fragment_B(make_tensor(make_smem_ptr(smem.v), make_layout(make_shape(Int<Dv>{}, Int<BlkN>{}))));  // (MMA,MMA_DV,MMA_N)
    Tensor tOsVt = s2r_v.get_slice(t).partition_S(sVt);  // (CPY,CPY_DV,CPY_N)
    Tensor tOrVt_v = s2r_v.get_slice(t).retile_D(tOrVt);
    constexpr int KB = decltype(size<2>(tOrP))::value;
    copy(s2r_v, tOsVt(_, _, 0), tOrVt_v(_, _, 0));
    TESSEL_UNROLL
    for (int kb = 0; kb < KB; ++kb) {
      if (kb + 1 < KB) copy(s2r_v, tOsVt(_, _, kb + 1), tOrVt_v(_, _, kb + 1));
      gemm(tiled_mma, tOrP(_, _, kb), tOrVt(_, _, kb), acc_o);
    }
  };

  if (blocks.end > blocks.begin) {
    load_rows(tid, gQ, sQ, rows_q);
    load_k(tid, blocks.end - 1);
    cp_async_fence();
  }

  TESSEL_NO_UNROLL
  for (int n = blocks.end - 1; n >= blocks.begin; --n) {
    int const t = detail::opaque(tid);
    clear(acc_s);
    cp_async_wait<0>();
    __syncthreads();  // K[n] has landed; every read of V[n+1] is done
    load_v(t, n);
    cp_async_fence();
    gemm_qk(t);

    if (p.softcap > 0.0f) {
      TESSEL_UNROLL
      for (int i = 0; i < int(size(acc_s)); ++i) acc_s(i) = p.softcap * detail::attention_tanh(acc_s(i) * p.softcap_scale);
    } else if (p.negate_scores) {  // a negative scale: the softmax of -s under |scale|
      TESSEL_UNROLL
      for (int i = 0; i < int(size(acc_s)); ++i) acc_s(i) = -acc_s(i);
    }
    if (key_block_needs_mask(mask, m0, rows_q, n, BlkN)) {
      // Per row, the block's seen keys as an interval of tile columns; each element compares its
      // column against it (a thread's columns differ from its first by constants).
      std::int64_t const n0 = std::int64_t(n) * BlkN;
      int const col0 = int(get<1>(tScS(0)));
      TESSEL_UNROLL
      for (int m = 0; m < MmaM; ++m) {
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          AttentionMask::Interval const keys = mask.keys_of(m0 + int(get<0>(tScS(2 * h, m, 0))));
          std::int64_t const lo64 = keys.begin - n0 - col0, hi64 = keys.end - n0 - col0;
          int const lo = lo64 < -1 ? -1 : (lo64 > BlkN ? BlkN : int(lo64));  // clamped: the block's columns only
          int const hi = hi64 < -1 ? -1 : (hi64 > BlkN ? BlkN : int(hi64));
          TESSEL_UNROLL
          for (int nn = 0; nn < MmaN; ++nn) {
            TESSEL_UNROLL
            for (int c = 0; c < 2; ++c) {
              int const col = int(get<1>(tScS(2 * h + c, m, nn))) - col0;  // a constant
              if (col < lo || col >= hi) acc_s(2 * h + c, m, nn) = -INFINITY;
            }
          }
        }
      }
    }

    cp_async_wait<0>();
    __syncthreads();  // V[n] has landed; every read of K[n] is done
    if (n > blocks.begin) {
      load_k(t, n - 1);
      cp_async_fence();
    }

    if constexpr (!Config::LazyRescale) {
      // Online softmax, every block: the row max, O and the row sum rescaled by exp2(old - new).
      TESSEL_UNROLL
      for (int m = 0; m < MmaM; ++m) {
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          float block_max = row_max[m][h];
          TESSEL_UNROLL
          for (int nn = 0; nn < MmaN; ++nn) block_max = fmaxf(block_max, fmaxf(acc_s(2 * h, m, nn), acc_s(2 * h + 1, m, nn)));
          float const new_max = detail::quad_max(block_max);
          // exp2 offsets stay finite: a row with no key yet keeps 0 (its scores are -inf, P = 0).
          float const max_scaled = new_max == -INFINITY ? 0.0f : new_max * p.score_log2;
          float const correction = detail::attention_exp2(row_max[m][h] * p.score_log2 - max_scaled);  // 0 when old = -inf
          row_max[m][h] = new_max;
          row_sum[m][h] *= correction;
          TESSEL_UNROLL
          for (int d = 0; d < MmaDv; ++d) acc_o(2 * h, m, d) *= correction, acc_o(2 * h + 1, m, d) *= correction;
          float sum = 0.0f;
          TESSEL_UNROLL
          for (int nn = 0; nn < MmaN; ++nn) {
            TESSEL_UNROLL
            for (int c = 0; c < 2; ++c) {
              float& sc = acc_s(2 * h + c, m, nn);
              sc = detail::attention_exp2(sc * p.score_log2 - max_scaled);
              sum += sc;
            }
          }
          row_sum[m][h] += sum;
        }
      }
    } else {
      // Online softmax with a lazy reference: a row's reference max (row_max) moves only when the
      // block's max passes it by more than kRescaleLog2 (in exp2 units), so most blocks leave O and
      // the row sum alone; until then P = exp2(s - reference) <= 2^kRescaleLog2, which the fp32 sums
      // and a bf16/fp16 P hold as well as values <= 1. The warp decides together (one vote): no
      // divergent rescale. A row with no key yet keeps reference -inf and offset 0 (its P are 0).
      constexpr float kRescaleLog2 = 8.0f;
      float block_max[MmaM][2];
      bool grow = false;
      TESSEL_UNROLL
      for (int m = 0; m < MmaM; ++m) {
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          float mx = row_max[m][h];
          TESSEL_UNROLL
          for (int nn = 0; nn < MmaN; ++nn) mx = fmaxf(mx, fmaxf(acc_s(2 * h, m, nn), acc_s(2 * h + 1, m, nn)));
          block_max[m][h] = detail::quad_max(mx);
          grow = grow || (block_max[m][h] - row_max[m][h]) * p.score_log2 > kRescaleLog2;  // -inf - -inf: NaN, false
        }
      }
      if (__any_sync(0xffffffffu, grow)) {
        TESSEL_UNROLL
        for (int m = 0; m < MmaM; ++m) {
          TESSEL_UNROLL
          for (int h = 0; h < 2; ++h) {
            float const new_max = block_max[m][h];
            float const max_scaled = new_max == -INFINITY ? 0.0f : new_max * p.score_log2;
            float const correction = detail::attention_exp2(row_max[m][h] * p.score_log2 - max_scaled);  // 0 when old = -inf
            row_max[m][h] = new_max;
            row_sum[m][h] *= correction;
            TESSEL_UNROLL
            for (int d = 0; d < MmaDv; ++d) acc_o(2 * h, m, d) *= correction, acc_o(2 * h + 1, m, d) *= correction;
          }
        }
      }
      TESSEL_UNROLL
      for (int m = 0; m < MmaM; ++m) {
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          float const max_scaled = row_max[m][h] == -INFINITY ? 0.0f : row_max[m][h] * p.score_log2;
          float sum = 0.0f;
          TESSEL_UNROLL
          for (int nn = 0; nn < MmaN; ++nn) {
            TESSEL_UNROLL
            for (int c = 0; c < 2; ++c) {
              float& sc = acc_s(2 * h + c, m, nn);
              sc = detail::attention_exp2(sc * p.score_log2 - max_scaled);
              sum += sc;
            }
          }
          row_sum[m][h] += sum;
        }
      }
    }
    // P in the input precision, laid out as the A operand: k16 block kb is n8 atoms 2kb and 2kb+1.
    TESSEL_UNROLL
    for (int m = 0; m < MmaM; ++m) {
      TESSEL_UNROLL
      for (int kb = 0; kb < MmaN / 2; ++kb) {
        TESSEL_UNROLL
        for (int v = 0; v < 8; v += 2) {  // A values (v, v+1): row half (v/2)%2, k half v/4
          int const nn = 2 * kb + v / 4, h = (v / 2) % 2;
          std::uint32_t const two = detail::attention_pack2<Element>(acc_s(2 * h, m, nn), acc_s(2 * h + 1, m, nn));
          tOrP(v, m, kb) = Element::bitcast(std::uint16_t(two & 0xffffu));
          tOrP(v + 1, m, kb) = Element::bitcast(std::uint16_t(two >> 16));
        }
      }
    }
    gemm_pv(t);
  }

  // Normalise and store: O (pairs of adjacent columns), LSE by the first thread of each quad.
  int const lane = tid % 32;
  TESSEL_UNROLL
  for (int m = 0; m < MmaM; ++m) {
    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) {
      float const sum = detail::quad_sum(row_sum[m][h]);
      float const inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      int const row = int(get<0>(tOcO(2 * h, m, 0)));
      bool const inside = row < rows_q;
      if (inside) {
        Element* o_row = o + (m0 + row) * p.o_row_stride;
        TESSEL_UNROLL
        for (int d = 0; d < MmaDv; ++d) {
          int const col = int(get<1>(tOcO(2 * h, m, d)));
          *reinterpret_cast<std::uint32_t*>(o_row + col) =
              detail::attention_pack2<Element>(acc_o(2 * h, m, d) * inv, acc_o(2 * h + 1, m, d) * inv);
        }
        if (p.lse && lane % 4 == 0) {
          std::int64_t const lse_row = p.cu_seqlens_q ? seq.q_row0 + m0 + row : m0 + row;
          float* lse = p.lse + (p.cu_seqlens_q ? 0 : std::int64_t(batch) * p.lse_batch_stride) + head * p.lse_head_stride;
          lse[lse_row] = sum > 0.0f ? row_max[m][h] * p.lse_scale + logf(sum) : -INFINITY;
        }
      }
    }
  }
#else
  (void)p;
#endif
}

}  // namespace tessel::kernel
