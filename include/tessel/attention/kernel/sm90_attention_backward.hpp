// tessel/attention/kernel/sm90_attention_backward.hpp -- the sm_90a flash-attention backward's
// dK/dV kernel: TMA loads, wgmma for all five GEMMs, a producer warpgroup and two consumer
// warpgroups; one CTA per (key block of 128, KV head, batch). The preprocess (Dsum = <dO, O>,
// LSE * log2 e) and the dQ conversion are the sm_80 path's kernels (sm80_attention_backward.hpp).
//
//   warpgroup 0, the producer: one thread loads the CTA's K and V block once, then per step --
//       every (query head of the KV head's group, query block of 64 rows that sees the key block),
//       always in the same order -- Q[m] and dO[m] by TMA into a Stages-deep ring.
//   warpgroups 1 and 2, the consumers: keys [64 wg, 64 wg + 64) of the block each. Per step (the
//       block's LSE * log2 e and Dsum loaded by the warpgroup while its first GEMMs run), with
//       every score tile transposed (rows: keys, columns: queries) so that P^T and dS^T come out
//       of the accumulators already in the A-operand layout of the next GEMMs:
//
//         S^T  = K Q^T          wgmma SS, m64 n64, K and Q K-major
//         dP^T = V dO^T         wgmma SS, m64 n64, V and dO K-major
//         P^T  = exp2(S^T * log2e scale' - LSE_q log2e)         (0 where masked)
//         dS^T = P^T * (dP^T - Dsum_q) * dz/dt                  (dz/dt: the softcap's 1 - tanh^2)
//         dS^T -> shared memory (16-bit, 128-byte swizzle: keys are rows, 64 queries a row)
//         dV  += P^T dO         wgmma RS: P^T from registers, dO MN-major (its rows are queries)
//         dK  += dS^T Q         wgmma RS: dS^T from registers, Q MN-major
//         dQ_part = dS K        wgmma SS: dS read MN-major from shared memory, K MN-major
//         dq_accum += dQ_part   red.global.add.v2.f32
//
//       dQ's GEMM: at D >= 128 each consumer takes half of dQ's columns over all 128 keys (the two
//       halves of dS^T meet at a named barrier, dS double-buffered so the next step's writes do
//       not wait for this step's reads); at D = 64 each takes all 64 columns over its own 64 keys
//       (the two partial sums meet in the atomics instead, no barrier).
//   end: dK (times the signed softmax scale) and dV stored from registers (keys past S_k are not
//       written; a key block that no query sees stores zeros).
// Scaling as on sm_80: S holds t = <q, k>, every gradient through S carries dz/dt = scale, applied
// once at the end to dK and, in the conversion kernel, to dQ.
//
// What this kernel does not take (the host sends those problems to the sm_80 kernels): variable
// lengths, strides that are not multiples of 16 bytes, head dims other than 64 and 128 (D = D_v),
// and the deterministic mode (its dQ atomics sum in no fixed order).
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/attention/attention_mask.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>
#include <tessel/attention/kernel/attention_math.hpp>
#include <tessel/config.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cstdint>

namespace tessel::kernel {

// The kernel's parameters: the tensor maps of Q and dO ((D, S_q, H, B), boxes of 64 columns by
// 64 rows) and of K and V ((D, S_k, H_kv, B), boxes of 64 by BLK_N), 128-byte swizzle, and the rest.
struct Sm90AttentionBackwardParams {
  TmaDescriptor tma_q, tma_do, tma_k, tma_v;
  AttentionBackwardParams b;
};

// One sm_90a attention-backward configuration: element type and head dim (D = D_v).
//   e.g. Sm90AttentionBackwardConfig<bfloat16_t, 128>: 384 threads; smem K 32 KiB + V 32 KiB +
//        2 stages x (Q 16 + dO 16) KiB + 2 x dS 16 KiB + LSE/Dsum 2 KiB = 162 KiB
template <class Element_, int D_, int Stages_ = 2>
struct Sm90AttentionBackwardConfig {
  using Element = Element_;
  static constexpr int D = D_, Dv = D_, Stages = Stages_;
  static constexpr int BlkM = 64;   // queries per step
  static constexpr int BlkN = 128;  // keys per CTA: 64 per consumer warpgroup
  static constexpr int Threads = 384;
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;  // 128 x 40 + 256 x 232 <= 65536
  static constexpr int Cols = 64;                                        // elements per 128-byte swizzled row
  static_assert(D == 64 || D == 128, "Sm90AttentionBackwardConfig: head dims 64 and 128 (D = D_v)");

  // dQ's GEMM per consumer: DqCols columns from DqCol0 (times wg) over DqKeys keys from DqKey0 (times wg).
  static constexpr bool DqSplit = D >= 128;
  static constexpr int DqCols = DqSplit ? D / 2 : D, DqKeys = DqSplit ? BlkN : 64;

  using MmaS = typename Sm90WgmmaOf<Element, BlkM>::Op;                          // S^T, dP^T: K-major A and B
  using MmaKV = typename Sm90WgmmaRsOf<Element, D>::template Op<1>;              // dV, dK: B MN-major
  using MmaQ = typename Sm90WgmmaOf<Element, DqCols>::template Transposed<1, 1>;  // dQ: A and B MN-major

  static constexpr std::uint32_t QBytes = std::uint32_t(BlkM * D * sizeof(Element));
  static constexpr std::uint32_t KBytes = std::uint32_t(BlkN * D * sizeof(Element));

  // Each tile: its 64-column chunks one after another, a chunk being rows x 128 bytes.
  struct SharedStorage {
    alignas(1024) Element k[BlkN * D];
    alignas(1024) Element v[BlkN * Dv];
    alignas(1024) Element q[Stages][BlkM * D];
    alignas(1024) Element d_o[Stages][BlkM * Dv];
    alignas(1024) Element ds[2][BlkN * BlkM];  // dS^T: keys x 64 queries
    float lse_log2[2][2][BlkM];  // [consumer warpgroup][step % 2]
    float dsum[2][2][BlkM];
    std::uint64_t kv_full;
    TmaPipeline<Stages> pipe;
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + the alignment of the base
};

namespace detail {

// 32-bit shared-memory offset of 16-bit element (row, col) of a tile of 128-byte rows in the
// 128-byte swizzle (the tile 1024-byte aligned): the 16-byte chunk index XOR row % 8.
TESSEL_HOST_DEVICE constexpr int sw128_offset(int row, int col) {
  return row * 128 + ((((col * 2) >> 4) ^ (row & 7)) << 4) + ((col * 2) & 15);
}

TESSEL_DEVICE inline void red_add_v2(float* at, float a, float b) {
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(at), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(at, a);
  atomicAdd(at + 1, b);
#endif
}

}  // namespace detail

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_attention_bwd_kernel(__grid_constant__ Sm90AttentionBackwardParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv, Stages = Config::Stages;
  constexpr int Cols = Config::Cols;
  extern __shared__ char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                                  ~std::uintptr_t(1023));
  AttentionBackwardParams const& bp = p.b;
  AttentionParams const& a = bp.fwd;
  int const tid = int(threadIdx.x);
  int const n_block = int(blockIdx.x), kv_head = int(blockIdx.y), batch = int(blockIdx.z);
  std::int64_t const n0 = std::int64_t(n_block) * BlkN;
  AttentionMask const mask{a.seqlen_k, a.bottom_right ? std::int64_t(a.seqlen_k) - a.seqlen_q : 0, a.window_left,
                           a.window_right};
  int const cols_k = a.seqlen_k - int(n0) < BlkN ? a.seqlen_k - int(n0) : BlkN;
  QueryBlockRange const blocks = query_blocks(mask, a.seqlen_q, n0, cols_k, BlkM);
  int const per_head = blocks.end - blocks.begin;
  int const steps = a.kv_group * per_head;
  int const head0 = kv_head * a.kv_group;

  if (tid == 0) {
    mbarrier_init(&smem.kv_full, 1);
    smem.pipe.init(8);  // one arrival per consumer warp
  }
  __syncthreads();

  if (tid < 128) {  // the producer warpgroup: its first thread
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (tid == 0 && steps > 0) {
      mbarrier_arrive_expect_tx(&smem.kv_full, 2 * Config::KBytes);
      TESSEL_UNROLL
      for (int c = 0; c < D / Cols; ++c) {
        SM90_TMA_LOAD::copy(&p.tma_k, &smem.kv_full, smem.k + c * BlkN * Cols, {c * Cols, int(n0), kv_head, batch});
        SM90_TMA_LOAD::copy(&p.tma_v, &smem.kv_full, smem.v + c * BlkN * Cols, {c * Cols, int(n0), kv_head, batch});
      }
      PipelineState st;
      for (int step = 0; step < steps; ++step) {
        int const head = head0 + step / per_head;
        int const m0 = (blocks.begin + step % per_head) * BlkM;
        std::uint64_t* const full = smem.pipe.producer_acquire(st, 2 * Config::QBytes);
        TESSEL_UNROLL
        for (int c = 0; c < D / Cols; ++c) {
          SM90_TMA_LOAD::copy(&p.tma_q, full, smem.q[st.index] + c * BlkM * Cols, {c * Cols, m0, head, batch});
          SM90_TMA_LOAD::copy(&p.tma_do, full, smem.d_o[st.index] + c * BlkM * Cols, {c * Cols, m0, head, batch});
        }
        st.advance<Stages>();
      }
    }
    return;
  }

  // A consumer warpgroup: keys [n0 + 64 wg, +64). Thread t holds rows r and r + 8 (r = 16 * warp +
  // lane / 4) of every accumulator: values 4j + {0, 1} and 4j + {2, 3}, columns 8j + 2 (lane % 4) + {0, 1}.
  warpgroup_reg_alloc<Config::ConsumerRegisters>();
  int const wg = tid / 128 - 1, t = tid % 128, lane = t % 32;
  int const row_in_wg = 16 * (t / 32) + lane / 4;
  int const col_in_block = 2 * (lane % 4);
  float dk[D / 2], dv[Dv / 2];
  TESSEL_UNROLL
  for (int i = 0; i < D / 2; ++i) dk[i] = 0.0f, dv[i] = 0.0f;

  if (steps > 0) {
    using MmaS = typename Config::MmaS;
    using MmaKV = typename Config::MmaKV;
    using MmaQ = typename Config::MmaQ;
    constexpr int DqCols = Config::DqCols, DqKeys = Config::DqKeys;
    int const dq_col0 = Config::DqSplit ? wg * DqCols : 0;
    int const dq_key0 = Config::DqSplit ? 0 : 64 * wg;
    // This warpgroup's K and V rows (K-major A of S^T and dP^T) and K's dQ slice (MN-major B of dQ:
    // DqKeys rows from dq_key0 of the 64-column chunks from dq_col0).
    std::uint64_t const k_desc = wgmma_desc_k_major_sw128(smem.k + 64 * wg * Cols);
    std::uint64_t const v_desc = wgmma_desc_k_major_sw128(smem.v + 64 * wg * Cols);
    std::uint64_t const kt_desc =
        wgmma_desc_mn_major_sw128(smem.k + (dq_col0 / Cols) * BlkN * Cols + dq_key0 * Cols, std::uint32_t(BlkN * 128));
    mbarrier_wait(&smem.kv_full, 0);

    PipelineState st;
    float s[BlkM / 2], dp[BlkM / 2], dq[DqCols / 2];
    std::uint32_t pa[BlkM / 16][4], da[BlkM / 16][4];
    for (int step = 0; step < steps; ++step) {
      int const head = head0 + step / per_head;
      int const m0 = (blocks.begin + step % per_head) * BlkM;
      int const buf = step % 2;
      smem.pipe.consumer_wait(st);

      // S^T = K Q^T and dP^T = V dO^T: a k-step moves 32 bytes along a 128-byte row (2 units), a
      // chunk is rows x 128 bytes (rows x 8 units).
      std::uint64_t const q_desc = wgmma_desc_k_major_sw128(smem.q[st.index]);
      std::uint64_t const do_desc = wgmma_desc_k_major_sw128(smem.d_o[st.index]);
      wgmma_fence();
      TESSEL_UNROLL
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t const along = std::uint32_t((kk % 4) * 2), chunk = std::uint32_t(kk / 4);
        MmaS::fma(wgmma_desc_advance(k_desc, chunk * BlkN * 8 + along), wgmma_desc_advance(q_desc, chunk * BlkM * 8 + along), s,
                  kk > 0 ? 1 : 0);
      }
      TESSEL_UNROLL
      for (int kk = 0; kk < Dv / 16; ++kk) {
        std::uint32_t const along = std::uint32_t((kk % 4) * 2), chunk = std::uint32_t(kk / 4);
        MmaS::fma(wgmma_desc_advance(v_desc, chunk * BlkN * 8 + along), wgmma_desc_advance(do_desc, chunk * BlkM * 8 + along), dp,
                  kk > 0 ? 1 : 0);
      }
      wgmma_commit_group();
      // The step's LSE * log2 e and Dsum, while the GEMMs run: threads [0, 64) of the warpgroup
      // load one query each into the warpgroup's buffer (+inf and 0 past S_q: P = 0 there).
      float* const lse = smem.lse_log2[wg][buf];
      float* const dsum = smem.dsum[wg][buf];
      if (t < BlkM) {
        int const i = m0 + t;
        bool const inside = i < a.seqlen_q;
        std::int64_t const at = std::int64_t(head) * bp.rows + std::int64_t(batch) * a.seqlen_q + i;
        lse[t] = inside ? bp.lse_log2[at] : INFINITY;
        dsum[t] = inside ? bp.dsum[at] : 0.0f;
      }
      named_barrier_sync(2 + wg, 128);
      wgmma_wait_group<0>();
      wgmma_fence_operand(s);
      wgmma_fence_operand(dp);

      // P^T and dS^T in place; element i: key row_in_wg + 8 ((i / 2) % 2), query 8 (i / 4) + col_in_block + i % 2.
      bool const masked = key_block_needs_mask(mask, m0, a.seqlen_q - m0 < BlkM ? a.seqlen_q - m0 : BlkM, n_block, BlkN);
      std::int64_t const key_base = n0 + 64 * wg + row_in_wg;
      TESSEL_UNROLL
      for (int i = 0; i < BlkM / 2; ++i) {
        int const c = 8 * (i / 4) + col_in_block + i % 2;
        float dzdt;
        float const z = detail::attention_score_z(s[i], a.softcap, a.softcap_scale, a.negate_scores, dzdt);
        bool const keep = !masked || mask.keeps(m0 + c, key_base + 8 * ((i / 2) % 2));
        float const prob = keep ? detail::attention_exp2(fmaf(z, a.score_log2, -lse[c])) : 0.0f;
        s[i] = prob;
        dp[i] = prob * (dp[i] - dsum[c]) * dzdt;
      }
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) {
        TESSEL_UNROLL
        for (int r = 0; r < 4; ++r) {
          pa[j][r] = detail::attention_pack2<Element>(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
          da[j][r] = detail::attention_pack2<Element>(dp[8 * j + 2 * r], dp[8 * j + 2 * r + 1]);
        }
      }
      // dS^T to shared memory: register pair (8j + 2r, +1) is key row_in_wg + 8 (r % 2), queries
      // 16 j + 8 (r / 2) + col_in_block + {0, 1}.
      char* const ds_tile = reinterpret_cast<char*>(smem.ds[buf]);
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) {
        TESSEL_UNROLL
        for (int r = 0; r < 4; ++r) {
          int const key = 64 * wg + row_in_wg + 8 * (r % 2), query = 16 * j + 8 * (r / 2) + col_in_block;
          *reinterpret_cast<std::uint32_t*>(ds_tile + detail::sw128_offset(key, query)) = da[j][r];
        }
      }
      fence_proxy_async_shared();
      if constexpr (Config::DqSplit) named_barrier_sync(1, 256);  // both halves of dS^T are in

      // dV += P^T dO, dK += dS^T Q: k-step j is queries [16j, 16j + 16), 16 rows x 128 bytes further.
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
      wgmma_fence();
      std::uint64_t const do_mn = wgmma_desc_mn_major_sw128(smem.d_o[st.index], std::uint32_t(BlkM * 128));
      std::uint64_t const q_mn = wgmma_desc_mn_major_sw128(smem.q[st.index], std::uint32_t(BlkM * 128));
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) MmaKV::fma(pa[j], wgmma_desc_advance(do_mn, std::uint32_t(j * 128)), dv, 1);
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) MmaKV::fma(da[j], wgmma_desc_advance(q_mn, std::uint32_t(j * 128)), dk, 1);
      // dQ_part = dS K over keys [dq_key0, +DqKeys): dS MN-major (64 queries a row), 16 keys a k-step.
      std::uint64_t const ds_desc = wgmma_desc_mn_major_sw128(smem.ds[buf] + dq_key0 * BlkM, std::uint32_t(BlkN * 128));
      TESSEL_UNROLL
      for (int kk = 0; kk < DqKeys / 16; ++kk)
        MmaQ::fma(wgmma_desc_advance(ds_desc, std::uint32_t(kk * 128)), wgmma_desc_advance(kt_desc, std::uint32_t(kk * 128)), dq,
                  kk > 0 ? 1 : 0);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      wgmma_fence_operand(dv);
      wgmma_fence_operand(dk);
      wgmma_fence_operand(dq);
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
      if (lane == 0) smem.pipe.template consumer_release<1>(st.index);
      st.advance<Stages>();

      // dq_accum[rows, H, D] += dQ_part: rows past S_q are not written.
      TESSEL_UNROLL
      for (int h = 0; h < 2; ++h) {
        int const row = m0 + row_in_wg + 8 * h;
        if (row < a.seqlen_q) {
          float* const at = bp.dq_accum + ((std::int64_t(batch) * a.seqlen_q + row) * a.heads + head) * D + dq_col0 + col_in_block;
          TESSEL_UNROLL
          for (int j = 0; j < DqCols / 8; ++j) detail::red_add_v2(at + 8 * j, dq[4 * j + 2 * h], dq[4 * j + 2 * h + 1]);
        }
      }
    }
  }

  // dK = scale * sum dS^T Q and dV = sum P^T dO, in pairs of adjacent columns.
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    int const key = int(n0) + 64 * wg + row_in_wg + 8 * h;
    if (key < a.seqlen_k) {
      Element* const dk_row = static_cast<Element*>(bp.dk) + std::int64_t(batch) * bp.dk_batch_stride +
                              std::int64_t(key) * bp.dk_row_stride + std::int64_t(kv_head) * bp.dk_head_stride;
      Element* const dv_row = static_cast<Element*>(bp.dv) + std::int64_t(batch) * bp.dv_batch_stride +
                              std::int64_t(key) * bp.dv_row_stride + std::int64_t(kv_head) * bp.dv_head_stride;
      TESSEL_UNROLL
      for (int j = 0; j < D / 8; ++j)
        *reinterpret_cast<std::uint32_t*>(dk_row + 8 * j + col_in_block) =
            detail::attention_pack2<Element>(dk[4 * j + 2 * h] * bp.grad_scale, dk[4 * j + 2 * h + 1] * bp.grad_scale);
      TESSEL_UNROLL
      for (int j = 0; j < Dv / 8; ++j)
        *reinterpret_cast<std::uint32_t*>(dv_row + 8 * j + col_in_block) =
            detail::attention_pack2<Element>(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1]);
    }
  }
#else
  (void)p;
#endif
}

}  // namespace tessel::kernel
