// tessel/attention/kernel/sm80_attention_backward.hpp -- the sm_80 flash-attention backward
// kernels (mma.sync, ldmatrix, cp.async): FlashAttention-2's algorithm.
//
//   preprocess   per (query row, head), 8 to 32 lanes of a warp: Dsum = <dO, O> in fp32, LSE * log2(e) (+inf where
//                the row sees no key, so its P is exp2(-inf) = 0, never NaN), into the workspace
//   dK, dV       one CTA per (key block, KV head, batch). K and V stay in shared memory; the CTA
//                walks the query heads of its KV head and, for each, the query blocks that see the
//                block (query_blocks), always in the same order:
//                  load Q[m], dO[m], their LSE and Dsum        cp.async, CTA barrier
//                  S  = Q K^T,  dP = dO V^T                     ldmatrix, mma.sync
//                  P  = exp2(z * log2e*scale' - LSE * log2e)    z: the forward's scores (softcap,
//                                                               negated for a negative scale); 0 where masked
//                  dS = P * (dP - Dsum) * (1 - tanh^2)          the tanh's derivative under a softcap
//                  P^T, dS^T and dS to shared memory (16-bit)
//                  dV += P^T dO,  dK += dS^T Q                  dO^T and Q^T by ldmatrix.trans
//                  [default] dQ_accum += dS K                   fp32 atomics, a chunk of columns at a time
//                dK (times the scale) and dV stored once at the end; keys that no row sees get 0.
//   dQ           deterministic mode: one CTA per (query block, head, batch) walks its key blocks
//                (key_blocks), recomputes S and dP, and accumulates dQ = sum dS K in registers;
//                default: a conversion kernel scales dQ_accum into dQ.
// The CTA's warps form a WarpsM x WarpsN grid over every GEMM's output (the backward needs no row
// reductions, so the score tile may be split along keys too); each GEMM is an (M, N, K) tile of the
// one TiledMMA. Scaling: S holds t = <q, k>; every gradient through S carries dz/dt = scale (signed),
// applied once to dK and dQ at the end, times 1 - tanh^2 per element under a softcap.
// Tensor names: docs/glossary.md (tSrQ: Q in registers for S = Q K^T; tVsdOt: dO^T partitioned for
// dV = P^T dO ...).
#pragma once

#include <tessel/algorithm/copy.hpp>
#include <tessel/algorithm/fill.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/attention/attention_mask.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>
#include <tessel/attention/kernel/attention_math.hpp>
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

namespace tessel::kernel {

// One sm_80 attention-backward configuration: element type, head dims, query and key tiles, and
// the warp grid over every GEMM's output.
//   e.g. Sm80AttentionBackwardConfig<bfloat16_t, 128, 128>: 64 x 64 tiles, 8 warps (4 x 2), smem
//        (64 x 128) x 2 B x 4 (Q, dO, K, V) + (64 x 64) x 2 B x 3 (P^T, dS, dS^T) + 512 B = 88.5 KiB
template <class Element_, int D_, int Dv_, int BlkM_ = 64, int BlkN_ = 64, int WarpsM_ = 4, int WarpsN_ = 2>
struct Sm80AttentionBackwardConfig {
  using Element = Element_;
  static constexpr int D = D_, Dv = Dv_, BlkM = BlkM_, BlkN = BlkN_, WarpsM = WarpsM_, WarpsN = WarpsN_;
  static constexpr int Threads = 32 * WarpsM * WarpsN;

  // Every GEMM's M is BLK_M or BLK_N, its N one of BLK_N, D, D_v or a column chunk, its K one of
  // D, D_v, BLK_M, BLK_N: each a whole number of the TiledMMA's tile (16 WarpsM, 16 WarpsN, 16).
  static constexpr int TileM = 16 * WarpsM, TileN = 16 * WarpsN;
  static_assert(BlkM % TileM == 0 && BlkN % TileM == 0,
                "Sm80AttentionBackwardConfig: BLK_M and BLK_N are the M of the GEMMs; make them multiples of 16 x WarpsM");
  static_assert(BlkN % TileN == 0 && D % TileN == 0 && Dv % TileN == 0,
                "Sm80AttentionBackwardConfig: BLK_N, D and D_v are the N of the GEMMs; make them multiples of 16 x WarpsN");

  using MmaOp = typename collective::Sm80MmaOf<Element>::Op;
  using TiledMma = decltype(make_tiled_mma(MMA_Atom<MmaOp>{}, Layout<Shape<Int<WarpsM>, Int<WarpsN>, _1>>{},
                                           Tile<Int<TileM>, Int<TileN>, _16>{}));

  // Shared memory: the forward's swizzle atoms, 128-byte rows where D allows, else 64-byte.
  static constexpr int AtomCols = D % 64 == 0 ? 64 : 32;
  static_assert(D % AtomCols == 0 && Dv % AtomCols == 0 && BlkM % 64 == 0 && BlkN % 64 == 0,
                "Sm80AttentionBackwardConfig: D and D_v must be multiples of the swizzle atom's width (64, or 32 when D "
                "is not a multiple of 64), BLK_M and BLK_N multiples of 64");
  static_assert(AtomCols % TileN == 0, "Sm80AttentionBackwardConfig: a dQ column chunk (the swizzle atom's width) must be a multiple of 16 x WarpsN");
  template <int Cols>
  using SmemAtom = decltype(composition(Swizzle<Cols == 64 ? 3 : 2, 3, 3>{},
                                        Layout<Shape<_8, Int<Cols>>, Stride<Int<Cols>, _1>>{}));
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom<AtomCols>{}, Shape<Int<BlkM>, Int<D>>{}));    // (BLK_M,D)
  using SmemLayoutDO = decltype(tile_to_shape(SmemAtom<AtomCols>{}, Shape<Int<BlkM>, Int<Dv>>{}));  // (BLK_M,D_v)
  using SmemLayoutK = decltype(tile_to_shape(SmemAtom<AtomCols>{}, Shape<Int<BlkN>, Int<D>>{}));    // (BLK_N,D)
  using SmemLayoutV = decltype(tile_to_shape(SmemAtom<AtomCols>{}, Shape<Int<BlkN>, Int<Dv>>{}));   // (BLK_N,D_v)
  using SmemLayoutMN = decltype(tile_to_shape(SmemAtom<64>{}, Shape<Int<BlkM>, Int<BlkN>>{}));      // (BLK_M,BLK_N): dS
  using SmemLayoutNM = decltype(tile_to_shape(SmemAtom<64>{}, Shape<Int<BlkN>, Int<BlkM>>{}));      // (BLK_N,BLK_M): P^T, dS^T
  // Transposed views, the B operands whose K mode is the tile's rows (read by ldmatrix.trans):
  // element (c, r) = s(r, c).
  using SmemLayoutQt = decltype(composition(SmemLayoutQ{}, Layout<Shape<Int<D>, Int<BlkM>>, Stride<Int<BlkM>, _1>>{}));     // (D,BLK_M)
  using SmemLayoutDOt = decltype(composition(SmemLayoutDO{}, Layout<Shape<Int<Dv>, Int<BlkM>>, Stride<Int<BlkM>, _1>>{}));  // (D_v,BLK_M)
  using SmemLayoutKt = decltype(composition(SmemLayoutK{}, Layout<Shape<Int<D>, Int<BlkN>>, Stride<Int<BlkN>, _1>>{}));     // (D,BLK_N)
  // One swizzle atom's width of K's columns: tile_to_shape places the atoms column-major, so
  // chunk c is the (BLK_N, AtomCols) block at element offset c * BLK_N * AtomCols, swizzled alike.
  using SmemLayoutKChunk = decltype(tile_to_shape(SmemAtom<AtomCols>{}, Shape<Int<BlkN>, Int<AtomCols>>{}));
  using SmemLayoutKChunkT =
      decltype(composition(SmemLayoutKChunk{}, Layout<Shape<Int<AtomCols>, Int<BlkN>>, Stride<Int<BlkN>, _1>>{}));  // (AtomCols,BLK_N)

  static constexpr int ThreadsPerRow = AtomCols / 8;
  static constexpr int CopyRows = Threads / ThreadsPerRow;
  static_assert(BlkM % CopyRows == 0 && BlkN % CopyRows == 0,
                "Sm80AttentionBackwardConfig: one pass of the CTA's copies covers CopyRows rows; BLK_M and BLK_N must be multiples of it");
  using GmemTiledCopy = decltype(make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, Element>{},
                                                 Layout<Shape<Int<CopyRows>, Int<ThreadsPerRow>>, Stride<Int<ThreadsPerRow>, _1>>{},
                                                 Layout<Shape<_1, _8>>{}));

  struct SharedStorage {
    alignas(128) Element q[decltype(cosize(SmemLayoutQ{}))::value];
    alignas(128) Element d_o[decltype(cosize(SmemLayoutDO{}))::value];
    alignas(128) Element k[decltype(cosize(SmemLayoutK{}))::value];
    alignas(128) Element v[decltype(cosize(SmemLayoutV{}))::value];
    alignas(128) Element pt[decltype(cosize(SmemLayoutNM{}))::value];
    alignas(128) Element ds[decltype(cosize(SmemLayoutMN{}))::value];
    alignas(128) Element dst[decltype(cosize(SmemLayoutNM{}))::value];
    float lse_log2[BlkM];  // the query block's LSE * log2(e) (+inf: P = 0)
    float dsum[BlkM];
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage));
};

namespace detail {

// The rows of one (batch, head) problem: where its sequence starts and how long it is.
struct Sm80AttentionBwdSequence {
  std::int64_t q_row0, k_row0;  // first row in Q/O/dO/dQ and in K/V/dK/dV (packed when variable-length)
  int seqlen_q, seqlen_k;
};

TESSEL_DEVICE inline Sm80AttentionBwdSequence sm80_attention_bwd_sequence(AttentionParams const& p, int batch) {
  Sm80AttentionBwdSequence s{0, 0, p.seqlen_q, p.seqlen_k};
  if (p.cu_seqlens_q) {
    s.q_row0 = p.cu_seqlens_q[batch];
    s.k_row0 = p.cu_seqlens_k[batch];
    s.seqlen_q = p.cu_seqlens_q[batch + 1] - int(s.q_row0);
    s.seqlen_k = p.cu_seqlens_k[batch + 1] - int(s.k_row0);
  }
  return s;
}

// acc += A B^T over shared memory: sA (M,K) by ldmatrix, sB (N,K) by CopyB (ldmatrix, or
// ldmatrix.trans for a transposed view); the next k-block's fragments load while this one's
// MMAs run. The fragments' register tensors take their shapes from plain layouts of the same extents.
template <class Config, class CopyB, class Acc, class SA, class SB>
TESSEL_DEVICE void sm80_attention_bwd_gemm(int t, Acc& acc, SA const& sA, SB const& sB) {
  using Element = typename Config::Element;
  typename Config::TiledMma tiled_mma;
  auto s2r_a = make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, Element>{}, tiled_mma);
  auto s2r_b = make_tiled_copy_B(Copy_Atom<CopyB, Element>{}, tiled_mma);
  auto thr = tiled_mma.get_slice(t);
  Element* const none = nullptr;
  Tensor tXrA = thr.partition_fragment_A(make_tensor(make_smem_ptr(none), make_layout(shape(sA))));  // (MMA,MMA_M,MMA_K)
  Tensor tXrB = thr.partition_fragment_B(make_tensor(make_smem_ptr(none), make_layout(shape(sB))));  // (MMA,MMA_N,MMA_K)
  Tensor tXsA = s2r_a.get_slice(t).partition_S(sA);  // (CPY,CPY_M,CPY_K)
  Tensor tXrA_v = s2r_a.get_slice(t).retile_D(tXrA);
  Tensor tXsB = s2r_b.get_slice(t).partition_S(sB);  // (CPY,CPY_N,CPY_K)
  Tensor tXrB_v = s2r_b.get_slice(t).retile_D(tXrB);
  constexpr int KB = decltype(size<2>(tXrA))::value;
  copy(s2r_a, tXsA(_, _, 0), tXrA_v(_, _, 0));
  copy(s2r_b, tXsB(_, _, 0), tXrB_v(_, _, 0));
  TESSEL_UNROLL
  for (int kb = 0; kb < KB; ++kb) {
    if (kb + 1 < KB) {
      copy(s2r_a, tXsA(_, _, kb + 1), tXrA_v(_, _, kb + 1));
      copy(s2r_b, tXsB(_, _, kb + 1), tXrB_v(_, _, kb + 1));
    }
    gemm(tiled_mma, tXrA(_, _, kb), tXrB(_, _, kb), acc);
  }
}

// Global -> shared of whole rows of a (R, C) tile: row r exists when r < rows (the others are
// zero-filled, so their scores and gradients are 0).
template <class Config, class GX, class SX>
TESSEL_DEVICE void sm80_attention_bwd_load(int t, GX const& gX, SX const& sX, int rows) {
  typename Config::GmemTiledCopy g2s;
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
}

// The packed workspace row of query i of the sequence: b * S_q + i, or cu_seqlens_q[b] + i.
TESSEL_DEVICE inline std::int64_t sm80_attention_bwd_packed_row(AttentionParams const& p, int batch,
                                                                Sm80AttentionBwdSequence const& s, std::int64_t i) {
  return p.cu_seqlens_q ? s.q_row0 + i : std::int64_t(batch) * p.seqlen_q + i;
}

// The query block's LSE * log2(e) and Dsum into shared memory: +inf and 0 past the sequence's
// rows (their P is then 0). Threads [0, BLK_M) each write one row; a barrier follows before use.
template <class Config>
TESSEL_DEVICE void sm80_attention_bwd_load_rows(AttentionBackwardParams const& p, int t, int batch, int head,
                                                Sm80AttentionBwdSequence const& s, std::int64_t m0, float* lse_log2,
                                                float* dsum) {
  if (t < Config::BlkM) {
    std::int64_t const i = m0 + t;
    bool const inside = i < s.seqlen_q;
    std::int64_t const at = attention_bwd_stat_row(p, batch, head, s.q_row0, inside ? i : 0);
    lse_log2[t] = inside ? p.lse_log2[at] : INFINITY;
    dsum[t] = inside ? p.dsum[at] : 0.0f;
  }
}

// S and dP of one (query block, key block) tile into P and dS (in place, fp32): acc_s holds
// t = <q, k>, acc_dp <dO, v>. Row r's P = exp2(z * score_log2 - LSE_r * log2e), 0 where the mask
// removes the key or the row sees none; dS = P * (dP - Dsum_r) * dz/dt without the scale.
template <class Config, class AccS, class AccDP, class CS>
TESSEL_DEVICE void sm80_attention_bwd_scores(AttentionParams const& p, AttentionMask const& mask, bool masked,
                                             std::int64_t m0, std::int64_t n0, AccS& acc_s, AccDP& acc_dp, CS const& tScS,
                                             float const* lse_log2, float const* dsum) {
  TESSEL_UNROLL
  for (int i = 0; i < int(size(acc_s)); ++i) {
    int const r = int(get<0>(tScS(i))), c = int(get<1>(tScS(i)));
    float dzdt;
    float const z = detail::attention_score_z(acc_s(i), p.softcap, p.softcap_scale, p.negate_scores, dzdt);
    bool const keep = !masked || mask.keeps(m0 + r, n0 + c);
    float const prob = keep ? detail::attention_exp2(fmaf(z, p.score_log2, -lse_log2[r])) : 0.0f;
    acc_s(i) = prob;
    acc_dp(i) = prob * (acc_dp(i) - dsum[r]) * dzdt;
  }
}

}  // namespace detail

// dK and dV, and where bp.dq_accum is set (the default mode) dS K added to it: one CTA per (key
// block, KV head, batch). One kernel for both modes (the test is uniform; the deterministic mode's
// dQ kernel writes dQ instead): a second instantiation per configuration cost a third of the
// TU's compile time.
template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm80_attention_bwd_dkdv_kernel(AttentionBackwardParams const bp) {
#if defined(TESSEL_ARCH_SM80)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>(smem_raw);
  AttentionParams const& p = bp.fwd;
  int const tid = int(threadIdx.x);
  int const n_block = int(blockIdx.x), kv_head = int(blockIdx.y), batch = int(blockIdx.z);

  detail::Sm80AttentionBwdSequence const seq = detail::sm80_attention_bwd_sequence(p, batch);
  std::int64_t const n0 = std::int64_t(n_block) * BlkN;
  if (n0 >= seq.seqlen_k) return;
  int const cols_k = seq.seqlen_k - int(n0) < BlkN ? seq.seqlen_k - int(n0) : BlkN;
  std::int64_t const bb = p.cu_seqlens_q ? 0 : batch;

  auto const* k = static_cast<Element const*>(p.k) + bb * p.k_batch_stride + seq.k_row0 * p.k_row_stride + kv_head * p.k_head_stride;
  auto const* v = static_cast<Element const*>(p.v) + bb * p.v_batch_stride + seq.k_row0 * p.v_row_stride + kv_head * p.v_head_stride;
  Tensor gK = local_tile(make_tensor(make_gmem_ptr(k), make_shape(seq.seqlen_k, Int<D>{}), make_stride(p.k_row_stride, Int<1>{})),
                         make_shape(Int<BlkN>{}, Int<D>{}), make_coord(n_block, 0));  // (BLK_N,D)
  Tensor gV = local_tile(make_tensor(make_gmem_ptr(v), make_shape(seq.seqlen_k, Int<Dv>{}), make_stride(p.v_row_stride, Int<1>{})),
                         make_shape(Int<BlkN>{}, Int<Dv>{}), make_coord(n_block, 0));  // (BLK_N,D_v)

  Tensor sQ = make_tensor(make_smem_ptr(smem.q), typename Config::SmemLayoutQ{});       // (BLK_M,D)
  Tensor sQt = make_tensor(make_smem_ptr(smem.q), typename Config::SmemLayoutQt{});     // (D,BLK_M)
  Tensor sdO = make_tensor(make_smem_ptr(smem.d_o), typename Config::SmemLayoutDO{});   // (BLK_M,D_v)
  Tensor sdOt = make_tensor(make_smem_ptr(smem.d_o), typename Config::SmemLayoutDOt{}); // (D_v,BLK_M)
  Tensor sK = make_tensor(make_smem_ptr(smem.k), typename Config::SmemLayoutK{});       // (BLK_N,D)
  Tensor sV = make_tensor(make_smem_ptr(smem.v), typename Config::SmemLayoutV{});       // (BLK_N,D_v)
  Tensor sPt = make_tensor(make_smem_ptr(smem.pt), typename Config::SmemLayoutNM{});    // (BLK_N,BLK_M)
  Tensor sdS = make_tensor(make_smem_ptr(smem.ds), typename Config::SmemLayoutMN{});    // (BLK_M,BLK_N)
  Tensor sdSt = make_tensor(make_smem_ptr(smem.dst), typename Config::SmemLayoutNM{});  // (BLK_N,BLK_M)

  typename Config::TiledMma tiled_mma;
  auto thr_mma = tiled_mma.get_slice(tid);
  Tensor acc_dk = partition_fragment_C(tiled_mma, make_shape(Int<BlkN>{}, Int<D>{}));   // (MMA,MMA_N,MMA_D) fp32
  Tensor acc_dv = partition_fragment_C(tiled_mma, make_shape(Int<BlkN>{}, Int<Dv>{}));  // (MMA,MMA_N,MMA_DV) fp32
  clear(acc_dk);
  clear(acc_dv);

  AttentionMask const mask{seq.seqlen_k, p.bottom_right ? std::int64_t(seq.seqlen_k) - seq.seqlen_q : 0, p.window_left,
                           p.window_right};
  QueryBlockRange const blocks = query_blocks(mask, seq.seqlen_q, n0, cols_k, BlkM);
  int const head0 = kv_head * p.kv_group;
  if (blocks.end > blocks.begin) {
    detail::sm80_attention_bwd_load<Config>(tid, gK, sK, cols_k);
    detail::sm80_attention_bwd_load<Config>(tid, gV, sV, cols_k);
    cp_async_fence();
  }

  TESSEL_NO_UNROLL
  for (int step = 0; step < p.kv_group * (blocks.end - blocks.begin); ++step) {
    int const t = detail::opaque(tid);
    int const head = head0 + step / (blocks.end - blocks.begin);
    int const m_block = blocks.begin + step % (blocks.end - blocks.begin);
    std::int64_t const m0 = std::int64_t(m_block) * BlkM;
    int const rows_q = seq.seqlen_q - int(m0) < BlkM ? seq.seqlen_q - int(m0) : BlkM;

    auto const* q = static_cast<Element const*>(p.q) + bb * p.q_batch_stride + seq.q_row0 * p.q_row_stride + head * p.q_head_stride;
    auto const* d_o = static_cast<Element const*>(bp.d_o) + bb * bp.do_batch_stride + seq.q_row0 * bp.do_row_stride +
                      head * bp.do_head_stride;
    Tensor gQ = local_tile(make_tensor(make_gmem_ptr(q), make_shape(seq.seqlen_q, Int<D>{}), make_stride(p.q_row_stride, Int<1>{})),
                           make_shape(Int<BlkM>{}, Int<D>{}), make_coord(m_block, 0));  // (BLK_M,D)
    Tensor gdO = local_tile(make_tensor(make_gmem_ptr(d_o), make_shape(seq.seqlen_q, Int<Dv>{}), make_stride(bp.do_row_stride, Int<1>{})),
                            make_shape(Int<BlkM>{}, Int<Dv>{}), make_coord(m_block, 0));  // (BLK_M,D_v)

    __syncthreads();  // every read of the previous step's Q, dO, P^T, dS, dS^T, LSE, Dsum is done
    detail::sm80_attention_bwd_load<Config>(t, gQ, sQ, rows_q);
    detail::sm80_attention_bwd_load<Config>(t, gdO, sdO, rows_q);
    cp_async_fence();
    detail::sm80_attention_bwd_load_rows<Config>(bp, t, batch, head, seq, m0, smem.lse_log2, smem.dsum);
    cp_async_wait<0>();
    __syncthreads();  // Q, dO (and on the first step K, V) have landed; LSE and Dsum are written

    Tensor acc_s = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));   // (MMA,MMA_M,MMA_N) fp32
    Tensor acc_dp = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N) fp32
    clear(acc_s);
    clear(acc_dp);
    detail::sm80_attention_bwd_gemm<Config, SM75_U32x4_LDSM_N>(t, acc_s, sQ, sK);    // S  = Q K^T
    detail::sm80_attention_bwd_gemm<Config, SM75_U32x4_LDSM_N>(t, acc_dp, sdO, sV);  // dP = dO V^T

    Tensor tScS = tiled_mma.get_slice(t).partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<BlkN>{})));  // (MMA,MMA_M,MMA_N) -> (m,n)
    bool const masked = key_block_needs_mask(mask, m0, rows_q, n_block, BlkN);
    detail::sm80_attention_bwd_scores<Config>(p, mask, masked, m0, n0, acc_s, acc_dp, tScS, smem.lse_log2, smem.dsum);
    TESSEL_UNROLL
    for (int i = 0; i < int(size(acc_s)); ++i) {
      int const r = int(get<0>(tScS(i))), c = int(get<1>(tScS(i)));
      Element const ds(acc_dp(i));
      sPt(c, r) = Element(acc_s(i));
      sdS(r, c) = ds;
      sdSt(c, r) = ds;
    }
    __syncthreads();  // P^T, dS and dS^T are written

    detail::sm80_attention_bwd_gemm<Config, SM75_U16x8_LDSM_T>(t, acc_dv, sPt, sdOt);  // dV += P^T dO
    detail::sm80_attention_bwd_gemm<Config, SM75_U16x8_LDSM_T>(t, acc_dk, sdSt, sQt);  // dK += dS^T Q

    if (bp.dq_accum != nullptr) {
      // dQ_accum[rows of the block] += dS K, one swizzle atom's width of K's columns at a time
      // (a (BLK_M, AtomCols) accumulator instead of (BLK_M, D): fewer live registers).
      constexpr int Cols = Config::AtomCols;
      Tensor tQcQ = tiled_mma.get_slice(t).partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<Cols>{})));  // -> (m,d)
      TESSEL_UNROLL
      for (int chunk = 0; chunk < D / Cols; ++chunk) {
        Tensor sKt = make_tensor(make_smem_ptr(smem.k + chunk * BlkN * Cols), typename Config::SmemLayoutKChunkT{});  // (Cols,BLK_N)
        Tensor acc_dq = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<Cols>{}));  // (MMA,MMA_M,MMA_C) fp32
        clear(acc_dq);
        detail::sm80_attention_bwd_gemm<Config, SM75_U16x8_LDSM_T>(t, acc_dq, sdS, sKt);
        TESSEL_UNROLL
        for (int i = 0; i < int(size(acc_dq)); ++i) {
          int const r = int(get<0>(tQcQ(i))), c = int(get<1>(tQcQ(i)));
          if (r < rows_q) {
            std::int64_t const row = detail::sm80_attention_bwd_packed_row(p, batch, seq, m0 + r);
            atomicAdd(bp.dq_accum + (row * p.heads + head) * D + chunk * Cols + c, acc_dq(i));
          }
        }
      }
    }
  }

  // dK = scale * sum dS^T Q and dV = sum P^T dO of the block's keys (0 for keys no row sees).
  auto* dk = static_cast<Element*>(bp.dk) + bb * bp.dk_batch_stride + (seq.k_row0 + n0) * bp.dk_row_stride + kv_head * bp.dk_head_stride;
  auto* dv = static_cast<Element*>(bp.dv) + bb * bp.dv_batch_stride + (seq.k_row0 + n0) * bp.dv_row_stride + kv_head * bp.dv_head_stride;
  Tensor tKcK = thr_mma.partition_C(make_identity_tensor(make_shape(Int<BlkN>{}, Int<D>{})));   // -> (n,d)
  Tensor tVcV = thr_mma.partition_C(make_identity_tensor(make_shape(Int<BlkN>{}, Int<Dv>{})));  // -> (n,d)
  TESSEL_UNROLL
  for (int i = 0; i < int(size(acc_dk)); ++i) {
    int const r = int(get<0>(tKcK(i))), c = int(get<1>(tKcK(i)));
    if (r < cols_k) dk[std::int64_t(r) * bp.dk_row_stride + c] = Element(acc_dk(i) * bp.grad_scale);
  }
  TESSEL_UNROLL
  for (int i = 0; i < int(size(acc_dv)); ++i) {
    int const r = int(get<0>(tVcV(i))), c = int(get<1>(tVcV(i)));
    if (r < cols_k) dv[std::int64_t(r) * bp.dv_row_stride + c] = Element(acc_dv(i));
  }
#else
  (void)bp;
#endif
}

// dQ without atomics (the deterministic mode): one CTA per (query block, head, batch) walks the
// key blocks its rows see, from the first to the last, recomputing S and dP.
template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm80_attention_bwd_dq_kernel(AttentionBackwardParams const bp) {
#if defined(TESSEL_ARCH_SM80)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv;
  extern __shared__ __align__(128) char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>(smem_raw);
  AttentionParams const& p = bp.fwd;
  int const tid = int(threadIdx.x);
  int const m_block = int(blockIdx.x), head = int(blockIdx.y), batch = int(blockIdx.z);
  int const kv_head = head / p.kv_group;

  detail::Sm80AttentionBwdSequence const seq = detail::sm80_attention_bwd_sequence(p, batch);
  std::int64_t const m0 = std::int64_t(m_block) * BlkM;
  if (m0 >= seq.seqlen_q) return;
  int const rows_q = seq.seqlen_q - int(m0) < BlkM ? seq.seqlen_q - int(m0) : BlkM;
  std::int64_t const bb = p.cu_seqlens_q ? 0 : batch;

  AttentionMask const mask{seq.seqlen_k, p.bottom_right ? std::int64_t(seq.seqlen_k) - seq.seqlen_q : 0, p.window_left,
                           p.window_right};
  KeyBlockRange const blocks = key_blocks(mask, m0, rows_q, BlkN);

  typename Config::TiledMma tiled_mma;
  Tensor acc_dq = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<D>{}));  // (MMA,MMA_M,MMA_D) fp32
  clear(acc_dq);

  Tensor sQ = make_tensor(make_smem_ptr(smem.q), typename Config::SmemLayoutQ{});      // (BLK_M,D)
  Tensor sdO = make_tensor(make_smem_ptr(smem.d_o), typename Config::SmemLayoutDO{});  // (BLK_M,D_v)
  Tensor sK = make_tensor(make_smem_ptr(smem.k), typename Config::SmemLayoutK{});      // (BLK_N,D)
  Tensor sKt = make_tensor(make_smem_ptr(smem.k), typename Config::SmemLayoutKt{});    // (D,BLK_N)
  Tensor sV = make_tensor(make_smem_ptr(smem.v), typename Config::SmemLayoutV{});      // (BLK_N,D_v)
  Tensor sdS = make_tensor(make_smem_ptr(smem.ds), typename Config::SmemLayoutMN{});   // (BLK_M,BLK_N)

  if (blocks.end > blocks.begin) {
    auto const* q = static_cast<Element const*>(p.q) + bb * p.q_batch_stride + seq.q_row0 * p.q_row_stride + head * p.q_head_stride;
    auto const* d_o = static_cast<Element const*>(bp.d_o) + bb * bp.do_batch_stride + seq.q_row0 * bp.do_row_stride +
                      head * bp.do_head_stride;
    Tensor gQ = local_tile(make_tensor(make_gmem_ptr(q), make_shape(seq.seqlen_q, Int<D>{}), make_stride(p.q_row_stride, Int<1>{})),
                           make_shape(Int<BlkM>{}, Int<D>{}), make_coord(m_block, 0));  // (BLK_M,D)
    Tensor gdO = local_tile(make_tensor(make_gmem_ptr(d_o), make_shape(seq.seqlen_q, Int<Dv>{}), make_stride(bp.do_row_stride, Int<1>{})),
                            make_shape(Int<BlkM>{}, Int<Dv>{}), make_coord(m_block, 0));  // (BLK_M,D_v)
    detail::sm80_attention_bwd_load<Config>(tid, gQ, sQ, rows_q);
    detail::sm80_attention_bwd_load<Config>(tid, gdO, sdO, rows_q);
    cp_async_fence();
    detail::sm80_attention_bwd_load_rows<Config>(bp, tid, batch, head, seq, m0, smem.lse_log2, smem.dsum);
  }
  auto const* k = static_cast<Element const*>(p.k) + bb * p.k_batch_stride + seq.k_row0 * p.k_row_stride + kv_head * p.k_head_stride;
  auto const* v = static_cast<Element const*>(p.v) + bb * p.v_batch_stride + seq.k_row0 * p.v_row_stride + kv_head * p.v_head_stride;

  TESSEL_NO_UNROLL
  for (int n = blocks.begin; n < blocks.end; ++n) {
    int const t = detail::opaque(tid);
    std::int64_t const n0 = std::int64_t(n) * BlkN;
    Tensor gK = local_tile(make_tensor(make_gmem_ptr(k), make_shape(seq.seqlen_k, Int<D>{}), make_stride(p.k_row_stride, Int<1>{})),
                           make_shape(Int<BlkN>{}, Int<D>{}), make_coord(n, 0));  // (BLK_N,D)
    Tensor gV = local_tile(make_tensor(make_gmem_ptr(v), make_shape(seq.seqlen_k, Int<Dv>{}), make_stride(p.v_row_stride, Int<1>{})),
                           make_shape(Int<BlkN>{}, Int<Dv>{}), make_coord(n, 0));  // (BLK_N,D_v)
    __syncthreads();  // every read of the previous block's K, V and dS is done
    detail::sm80_attention_bwd_load<Config>(t, gK, sK, seq.seqlen_k - int(n0));
    detail::sm80_attention_bwd_load<Config>(t, gV, sV, seq.seqlen_k - int(n0));
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();  // K, V (and on the first block Q, dO, LSE, Dsum) are in shared memory

    Tensor acc_s = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));   // (MMA,MMA_M,MMA_N) fp32
    Tensor acc_dp = partition_fragment_C(tiled_mma, make_shape(Int<BlkM>{}, Int<BlkN>{}));  // (MMA,MMA_M,MMA_N) fp32
    clear(acc_s);
    clear(acc_dp);
    detail::sm80_attention_bwd_gemm<Config, SM75_U32x4_LDSM_N>(t, acc_s, sQ, sK);    // S  = Q K^T
    detail::sm80_attention_bwd_gemm<Config, SM75_U32x4_LDSM_N>(t, acc_dp, sdO, sV);  // dP = dO V^T
    Tensor tScS = tiled_mma.get_slice(t).partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<BlkN>{})));  // -> (m,n)
    bool const masked = key_block_needs_mask(mask, m0, rows_q, n, BlkN);
    detail::sm80_attention_bwd_scores<Config>(p, mask, masked, m0, n0, acc_s, acc_dp, tScS, smem.lse_log2, smem.dsum);
    TESSEL_UNROLL
    for (int i = 0; i < int(size(acc_dp)); ++i) sdS(int(get<0>(tScS(i))), int(get<1>(tScS(i)))) = Element(acc_dp(i));
    __syncthreads();  // dS is written
    detail::sm80_attention_bwd_gemm<Config, SM75_U16x8_LDSM_T>(t, acc_dq, sdS, sKt);  // dQ += dS K
  }

  // dQ = scale * sum dS K (0 for rows that see no key).
  auto* dq = static_cast<Element*>(bp.dq) + bb * bp.dq_batch_stride + (seq.q_row0 + m0) * bp.dq_row_stride + head * bp.dq_head_stride;
  Tensor tQcQ = tiled_mma.get_slice(tid).partition_C(make_identity_tensor(make_shape(Int<BlkM>{}, Int<D>{})));  // -> (m,d)
  TESSEL_UNROLL
  for (int i = 0; i < int(size(acc_dq)); ++i) {
    int const r = int(get<0>(tQcQ(i))), c = int(get<1>(tQcQ(i)));
    if (r < rows_q) dq[std::int64_t(r) * bp.dq_row_stride + c] = Element(acc_dq(i) * bp.grad_scale);
  }
#else
  (void)bp;
#endif
}

// Dsum = <dO, O> and LSE * log2(e) per (query row, head); grid (ceil(S_q' / rows), H, B), S_q' =
// stat_seqlen (S_q when variable-length), `lanes` lanes a row (a power of two, at least D_v / 8 where
// it can be: attention_bwd_preprocess_lanes), so a warp takes 32 / lanes rows and a CTA 8 times that.
// A lane reads 16 bytes of O and of dO at a time (the API's rule: rows 16-byte aligned, D_v a
// multiple of 8). The rows from S_q to S_q' get +inf and 0: a bulk copy of a query block then reads
// rows whose P is 0.
template <class Element>
__global__ void __launch_bounds__(256) sm80_attention_bwd_preprocess_kernel(AttentionBackwardParams const bp, int lanes) {
#if defined(TESSEL_ARCH_SM80)
  AttentionParams const& p = bp.fwd;
  int const warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, sub = lane % lanes;
  int const head = int(blockIdx.y), batch = int(blockIdx.z);
  detail::Sm80AttentionBwdSequence const seq = detail::sm80_attention_bwd_sequence(p, batch);
  std::int64_t const i = (std::int64_t(blockIdx.x) * 8 + warp) * (32 / lanes) + lane / lanes;
  float dot = 0.0f;
  if (i < seq.seqlen_q) {
    std::int64_t const bb = p.cu_seqlens_q ? 0 : batch;
    auto const* o = static_cast<Element const*>(p.o) + bb * p.o_batch_stride + (seq.q_row0 + i) * p.o_row_stride + head * p.o_head_stride;
    auto const* d_o = static_cast<Element const*>(bp.d_o) + bb * bp.do_batch_stride + (seq.q_row0 + i) * bp.do_row_stride +
                      head * bp.do_head_stride;
    for (int c = 8 * sub; c < bp.head_dim_v; c += 8 * lanes) {
      uint4 const ov = __ldg(reinterpret_cast<uint4 const*>(o + c)), dv = __ldg(reinterpret_cast<uint4 const*>(d_o + c));
      Element const* const oe = reinterpret_cast<Element const*>(&ov);
      Element const* const de = reinterpret_cast<Element const*>(&dv);
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e) dot = fmaf(float(oe[e]), float(de[e]), dot);
    }
  }
  for (int offset = 1; offset < lanes; offset *= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);  // within the row's lanes
  if (sub != 0) return;
  if (i < seq.seqlen_q) {
    float const lse = p.lse[(p.cu_seqlens_q ? 0 : std::int64_t(batch) * p.lse_batch_stride) + head * p.lse_head_stride +
                            (p.cu_seqlens_q ? seq.q_row0 + i : i)];
    std::int64_t const at = attention_bwd_stat_row(bp, batch, head, seq.q_row0, i);
    constexpr float kLog2e = 1.4426950408889634f;
    bp.dsum[at] = dot;
    bp.lse_log2[at] = lse == -INFINITY ? INFINITY : lse * kLog2e;
  } else if (!p.cu_seqlens_q && i < bp.stat_seqlen) {
    std::int64_t const at = attention_bwd_stat_row(bp, batch, head, seq.q_row0, i);
    bp.dsum[at] = 0.0f;
    bp.lse_log2[at] = INFINITY;
  }
#else
  (void)bp;
  (void)lanes;
#endif
}

// dQ = scale * dQ_accum in dQ's dtype and strides (the default mode's last step): a grid-stride
// loop over units of 8 consecutive elements of one (row, head) of the accumulator's [rows, H, D]
// (variable-length: the first cu_seqlens_q[B] rows), two 16-byte loads and one 16-byte store each
// (the API's rule: dQ's rows and the workspace aligned, D a multiple of 8). Index math in 32 bits
// where the units' count fits: three 64-bit divisions a unit would outweigh its 48 bytes.
template <class Element>
__global__ void __launch_bounds__(256) sm80_attention_bwd_dq_convert_kernel(AttentionBackwardParams const bp, int batches) {
#if defined(TESSEL_ARCH_SM80)
  AttentionParams const& p = bp.fwd;
  std::int64_t const rows = p.cu_seqlens_q ? std::int64_t(p.cu_seqlens_q[batches]) : bp.rows;
  int const per_head = bp.head_dim / 8, per_row = p.heads * per_head;
  std::int64_t const units = rows * per_row;
  auto const convert = [&](auto index) {
    using I = decltype(index);
    for (I u = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); u < I(units); u += I(gridDim.x) * I(blockDim.x)) {
      I const row = u / I(per_row), in_row = u - row * I(per_row);
      I const head = in_row / I(per_head), c = (in_row - head * I(per_head)) * 8;
      I const b = p.cu_seqlens_q ? I(0) : row / I(p.seqlen_q), r = p.cu_seqlens_q ? row : row - b * I(p.seqlen_q);
      Element* const out = static_cast<Element*>(bp.dq) + std::int64_t(b) * bp.dq_batch_stride + std::int64_t(r) * bp.dq_row_stride +
                           std::int64_t(head) * bp.dq_head_stride + c;
      float4 const* const in = reinterpret_cast<float4 const*>(bp.dq_accum) + 2 * std::int64_t(u);
      float4 const lo = __ldg(in), hi = __ldg(in + 1);
      float const x[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      uint4 packed;
      Element* const pe = reinterpret_cast<Element*>(&packed);
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e) pe[e] = Element(x[e] * bp.grad_scale);
      *reinterpret_cast<uint4*>(out) = packed;
    }
  };
  if (units < (std::int64_t(1) << 31) - std::int64_t(gridDim.x) * blockDim.x) {
    convert(unsigned{});
  } else {
    convert(std::int64_t{});
  }
#else
  (void)bp;
  (void)batches;
#endif
}

}  // namespace tessel::kernel
