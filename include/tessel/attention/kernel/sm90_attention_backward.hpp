// tessel/attention/kernel/sm90_attention_backward.hpp -- the sm_90a flash-attention backward's
// dK/dV kernel: TMA loads, wgmma for all five GEMMs, a producer warpgroup and two consumer
// warpgroups (three in the default mode at D 64); one CTA per (key block of 64 per consumer, KV
// head, batch). The preprocess (Dsum = <dO, O>,
// LSE * log2 e) and the dQ conversion are the sm_80 path's kernels (sm80_attention_backward.hpp).
//
//   warpgroup 0, the producer: one thread loads the CTA's K and V block once, then per step --
//       every (query head of the KV head's group, query block of 64 rows that sees the key block),
//       always in the same order -- Q[m] and dO[m] by TMA, and the block's 64 values of LSE * log2 e
//       and of Dsum by bulk copy (the workspace pads each sequence to 64 rows), into a
//       Stages-deep ring.
//   warpgroups 1, 2 (and 3), the consumers: keys [64 wg, 64 wg + 64) of the block each. Per step, with
//       every score tile transposed (rows: keys, columns: queries) so that P^T and dS^T come out
//       of the accumulators already in the A-operand layout of the next GEMMs:
//
//         S^T  = K Q^T          wgmma SS, m64 n64, K and Q K-major
//         dP^T = V dO^T         wgmma SS, m64 n64, V and dO K-major
//         P^T  = exp2(S^T * log2e scale' - LSE_q log2e)         (0 where masked)
//         dS^T = P^T * (dP^T - Dsum_q) * dz/dt                  (dz/dt: the softcap's 1 - tanh^2)
//         dS^T -> shared memory (16-bit, 128-byte swizzle: keys are rows, 64 queries a row)
//         dQ_part = dS K        wgmma SS: dS read MN-major from shared memory, K MN-major
//         dV  += P^T dO         wgmma RS: P^T from registers, dO MN-major (its rows are queries)
//         dK  += dS^T Q         wgmma RS: dS^T from registers, Q MN-major
//         dq_accum += dQ_part   dQ_part -> shared memory (fp32, 128-byte swizzle), then one thread
//                               adds it to dq_accum by TMA (cp.reduce.async.bulk.tensor .add): the
//                               sum happens in L2, and no consumer waits on it
//
//       Three wgmma groups a step: S^T with dP^T, then dQ_part, then dV with dK. The last two are
//       issued back to back; dQ_part's staging runs while dV's and dK's GEMMs do.
//       dQ's GEMM: at D >= 128 each consumer takes half of dQ's columns over all 128 keys, one
//       step late (step i's dQ_part in step i + 1, the last after the loop): the other half of
//       dS^T has been written a step before it is read, so neither consumer waits for the other
//       (dS^T double-buffered, a named barrier per half and buffer each way, Config::DeferDq);
//       at D = 64 each takes all 64 columns over its own 64 keys (the partial sums meet in L2
//       instead). With three consumers (D 64, default mode: 160 registers each) dQ's GEMM comes
//       last, after dV's and dK's have completed (Config::DqLast): the third warpgroup keeps the
//       tensor cores busy through each one's softmax and staging (B4 H32 S4096 D 64 +8%).
//       At D 256 (Config::ColumnSplit) both consumers take the same 64 keys, each forming the whole
//       S^T and dP^T (K = 256) and owning half of the columns of dK, dV and dQ; dQ's GEMM comes
//       last, and its part is staged over the step's Q and dO columns the consumer owns. Without a
//       softcap (Config::SharedScores) they share the score tiles instead: consumer 0 forms S^T and
//       P^T, consumer 1 dP^T and dS^T, exchanged through shared memory (shared_step).
//   end: dK (times the signed softmax scale) and dV through the free Q/dO ring, stored by TMA
//       (keys past S_k are not written; a key block that no query sees stores zeros).
// Scaling as on sm_80: S holds t = <q, k>, every gradient through S carries dz/dt = scale, applied
// once at the end to dK and, in the conversion kernel, to dQ.
//
// What this kernel does not take (the host sends those problems to the sm_80 kernels): variable
// lengths, strides that are not multiples of 16 bytes, head dims other than 64, 128 and 256 (D =
// D_v), and the deterministic mode at D 256.
#pragma once

#include <tessel/arch/global_flag.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/attention/attention_mask.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>
#include <tessel/attention/kernel/attention_math.hpp>
#include <tessel/config.hpp>
#include <tessel/layout/swizzle.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// The kernel's parameters: the tensor maps of Q and dO ((D, S_q, H, B), boxes of 64 columns by
// 64 rows), of K and V ((D, S_k, H_kv, B), boxes of 64 by BLK_N), of dK and dV (as K and V, boxes
// of 64 by 64) and of the fp32 dQ accumulator ((D, S_q, H, B), boxes of 32 columns by 64 rows),
// 128-byte swizzle, and the rest.
struct Sm90AttentionBackwardParams {
  TmaDescriptor tma_q, tma_do, tma_k, tma_v, tma_dq, tma_dk, tma_dv;
  AttentionBackwardParams b;
};

// One sm_90a attention-backward configuration: element type, head dim (D = D_v) and the depth of
// the Q/dO ring.
//   e.g. Sm90AttentionBackwardConfig<bfloat16_t, 128>: 384 threads; smem K 32 KiB + V 32 KiB +
//        2 stages x (Q 16 + dO 16 + LSE/Dsum 0.5) KiB + 2 x dS 16 KiB + 2 x dQ 16 KiB = 193 KiB;
//        <bfloat16_t, 256>: K 32 + V 32 + 2 x (Q 32 + dO 32 + 0.5) + 2 x dS 8 KiB = 209 KiB;
//        SharedScores: one dS 8 KiB and P^T 16 KiB, 217 KiB
//   The library's instances (H200, same binary): D 64 takes 3 stages (+2% over 2), D 128 keeps 2
//   (a third measured 0.5-1% slower).
template <class Element_, int D_, int Stages_ = 2, bool Ordered_ = false, int Consumers_ = 2, bool SharedScores_ = false>
struct Sm90AttentionBackwardConfig {
  using Element = Element_;
  static constexpr int D = D_, Dv = D_, Stages = Stages_;
  static constexpr int BlkM = 64;   // queries per step
  static constexpr int Consumers = Consumers_;  // consumer warpgroups: 3 only at D 64, default mode
  static_assert(Consumers == 2 || (Consumers == 3 && D_ == 64 && !Ordered_),
                "Sm90AttentionBackwardConfig: three consumer warpgroups only at D 64 without ordered dQ");
  // ColumnSplit (D 256): both consumers take the same 64 keys, consumer c owning columns
  // [128 c, +128) of dK, dV and dQ. 64 x 256 accumulators of dK and dV would be 256 registers a
  // thread; split by columns they are 128, which leaves room for each consumer to form the whole S^T
  // and dP^T itself (K = 256: a quarter more MACs than sharing them, but P^T and dS^T stay in its
  // registers as the RS GEMMs' A operands, and neither consumer waits for the other's softmax).
  static constexpr bool ColumnSplit = D_ == 256;
  static_assert(!ColumnSplit || (Consumers == 2 && !Ordered_), "Sm90AttentionBackwardConfig: D 256 takes two consumers, default mode");
  static constexpr int BlkN = ColumnSplit ? 64 : 64 * Consumers;  // keys per CTA: 64 per consumer warpgroup (ColumnSplit: 64 shared)
  static constexpr int KvCols = ColumnSplit ? D_ / 2 : D_;      // columns of dK and dV a consumer holds
  // SharedScores (ColumnSplit without a softcap): the consumers share the score tiles instead of
  // each forming both. Consumer 0 forms S^T and P^T, consumer 1 dP^T; P^T goes to consumer 1
  // through shared memory in fp32 (pt), and dS^T, which consumer 1 forms, back to consumer 0 as
  // the A operand of its dK GEMM (SS). A step is then the five GEMMs' 5 M MACs instead of 7.3 M.
  // The softcap's dz/dt needs S^T where dS^T is formed, so a softcap runs the ColumnSplit form.
  static constexpr bool SharedScores = SharedScores_;
  static_assert(!SharedScores || ColumnSplit, "Sm90AttentionBackwardConfig: shared score tiles only at D 256");
  static constexpr int Threads = 128 * (Consumers + 1);
  // 128 x 24 + 256 x 240 = 384 x 168, the launch's allocation, which setmaxnreg only moves between
  // warpgroups (asking for more, 32 for the producer, hung the kernel). The Ordered kernel's dQ
  // writer spills within its 24 (ptxas: 136 bytes at D 128, 56 at D 64).
  static constexpr int ProducerRegisters = 24, ConsumerRegisters = Consumers == 2 ? 240 : 160;  // three: 128 x 24 + 384 x 160 <= 512 x 128
  static constexpr int Cols = 64;                                        // elements per 128-byte swizzled row
  static_assert(D == 64 || D == 128 || D == 256, "Sm90AttentionBackwardConfig: head dims 64, 128 and 256 (D = D_v)");

  // dQ's GEMM per consumer: DqCols columns from DqCol0 (times wg) over DqKeys keys from DqKey0 (times wg).
  static constexpr bool DqSplit = D >= 128;
  static constexpr int DqCols = DqSplit ? D / 2 : D, DqKeys = DqSplit ? BlkN : 64;
  // With DqSplit each step's dQ GEMM runs one step late, when the other warpgroup's half of that
  // dS^T has long been written: the two warpgroups then never wait for each other to reach the same
  // point of a step (a barrier of both there held each one's softmax against the other's GEMMs;
  // H200, B4 H32 S4096: 441-445 -> 480-484 TFLOP/s, causal 375-381 -> 410-413). A half of a dS^T
  // buffer has a named barrier each way: full (its writer arrives, the reader waits) and empty
  // (the reader arrives once its dQ GEMM is done, the writer waits before writing it again).
  static constexpr bool DeferDq = DqSplit && !ColumnSplit;
  // DqLast (three consumers, 160 registers each): dQ's GEMM waits for dV's and dK's, so that P^T and
  // dS^T (their A operands in registers) are free before dQ_part's accumulators are live (issued
  // before them, as with two consumers, ptxas serialized every wgmma: C7512); the other two
  // warpgroups' GEMMs fill the tensor cores meanwhile.
  // ColumnSplit takes it too: its dQ part is staged over the step's Q and dO (SharedStorage), which
  // only dQ-last frees in time, and 128 (dK, dV) + 64 (S^T, dP^T) + 64 (dQ) registers would not fit.
  static constexpr bool DqLast = Consumers == 3 || ColumnSplit;
  // Ordered (the deterministic mode): the key blocks add their dQ parts to a query block in a
  // fixed order, the order they arrive in (attention_bwd_dq_turns_before). A key block's part is
  // DqParts stagings: at D 128 each consumer's half of the columns; at D 64 one, warpgroup 1
  // adding its keys' dQ_part into warpgroup 0's staging (DqPartBarrier), so the sum of the two is
  // formed in a fixed order too. The reductions are issued by a writer, the producer warpgroup's
  // second warp: per step it waits until the query block's turn counter
  // (AttentionBackwardParams::dq_turns) shows the parts of every key block before its own, adds
  // each staging once it is in (DqFullBarrier + part), frees it once read (DqEmptyBarrier + part)
  // and adds DqParts to the counter once all are complete. A consumer thus waits on a turn only
  // when the writer has fallen a whole step behind.
  static constexpr bool Ordered = Ordered_;
  static constexpr int DqParts = DqSplit ? 2 : 1;
  static constexpr int DsFullBarrier = 4, DsEmptyBarrier = 8;  // D 128: + 2 * buffer + the half's warpgroup
  static constexpr int DqPartBarrier = 4;  // D 64, Ordered: warpgroup 0's part is staged (128 + 128; the dS^T barriers are D 128's)
  static constexpr int DqFullBarrier = 12, DqEmptyBarrier = 14;  // Ordered: + the part (its consumer's 128 + the writer's 32)
  // ColumnSplit: consumer c stages its dQ part over columns [128 c, +128) of the step's Q and dO,
  // which the other consumer's S^T and dP^T read too: it waits at SDoneBarrier + 2 (step % 2) + c,
  // which the other consumer arrives at once those GEMMs are done (two ids, as a consumer may be
  // one step ahead of the other; never two, as a stage is freed only after both staged into it).
  static constexpr int SDoneBarrier = 4;
  // SharedScores: pt and ds each have a full barrier (the writer arrives, the reader waits) and an
  // empty one (the reader arrives once done with it, the writer waits before the next step's write).
  // They also order the dQ staging: consumer 0 stages over its columns of Q and dO once it has seen
  // dS^T (consumer 1's dP^T is done), consumer 1 over its own once it has seen P^T (S^T is done).
  static constexpr int PtFullBarrier = 4, PtEmptyBarrier = 5, DsFullBarrier1 = 6, DsEmptyBarrier1 = 7;

  using MmaS = typename Sm90WgmmaOf<Element, BlkM>::Op;                          // S^T, dP^T: K-major A and B
  using MmaKV = typename Sm90WgmmaRsOf<Element, KvCols>::template Op<1>;         // dV, dK: B MN-major
  using MmaQ = typename Sm90WgmmaOf<Element, DqCols>::template Transposed<1, 1>;  // dQ: A and B MN-major
  using MmaKVss = typename Sm90WgmmaOf<Element, KvCols>::template Transposed<0, 1>;  // SharedScores' dK: dS^T from shared memory

  // The tiles in the wgmma vocabulary (atom/gmma_smem_layout.hpp). Each is stored as its TMA boxes
  // (or the dS^T writes) fill it: per 64 columns a chunk of rows x 128 bytes, 128-byte swizzled.
  // Read with its columns as the GEMM's K it is K-major, (rows,cols): the SW128 atom tiled down the
  // rows, then chunk after chunk; read with its rows as K it is MN-major, (cols,rows): the MN SW128
  // atom tiled down the rows, then chunk after chunk.
  //   K, V (BLK_N,D) and Q, dO (BLK_M,D) K-major: S^T = K Q^T and dP^T = V dO^T
  //   K^T (D,BLK_N) MN-major: B of dQ = dS K;  dS (BLK_M,BLK_N) MN-major: A of dQ
  //   dS^T (BLK_N,BLK_M) K-major: A of SharedScores' dK
  // (Q^T and dO^T, the MN-major B of dK and dV, keep hand-made descriptors: see the kernel.)
  template <int Rows, int Width>
  static constexpr auto k_major_layout() {  // (Rows,Width)
    return tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<Int<Rows>, Int<Width>>{});
  }
  template <int Rows, int Width>
  static constexpr auto mn_major_layout() {  // (Width,Rows)
    return tile_to_shape(GMMA::Layout_MN_SW128_Atom<Element>{}, Shape<Int<Width>, Int<Rows>>{}, Step<_2, _1>{});
  }
  static constexpr auto kv_layout() { return k_major_layout<BlkN, D>(); }      // (BLK_N,D): K, V
  static constexpr auto kt_layout() { return mn_major_layout<BlkN, D>(); }     // (D,BLK_N): K^T
  static constexpr auto q_layout() { return k_major_layout<BlkM, D>(); }       // (BLK_M,D): Q, dO
  static constexpr auto ds_layout() { return mn_major_layout<BlkN, BlkM>(); }  // (BLK_M,BLK_N): dS
  static constexpr auto dst_layout() { return k_major_layout<BlkN, BlkM>(); }  // (BLK_N,BLK_M): dS^T

  static constexpr std::uint32_t QBytes = std::uint32_t(BlkM * D * sizeof(Element));
  static constexpr std::uint32_t KBytes = std::uint32_t(BlkN * D * sizeof(Element));
  static constexpr std::uint32_t RowBytes = std::uint32_t(BlkM * sizeof(float));  // LSE * log2 e (or Dsum) of a step
  static constexpr int DqBoxCols = 32;  // fp32 columns per 128-byte swizzled row of the dQ staging

  // dQ_part's fp32 stagings: one per consumer, in boxes of DqBoxCols columns. ColumnSplit has none
  // of its own: a consumer's 64 x 128 fp32 are exactly the step's Q and dO columns it owns (4 boxes
  // of 8 KiB), dead once its dV and dK GEMMs are done, and shared memory could not hold them apart.
  static constexpr int DqStagings = ColumnSplit ? 0 : Consumers;

  // Each tile: its 64-column chunks one after another, a chunk being rows x 128 bytes.
  struct SharedStorage {
    alignas(1024) Element k[BlkN * D];
    alignas(1024) Element v[BlkN * Dv];
    alignas(1024) Element q[Stages][BlkM * D];
    alignas(1024) Element d_o[Stages][BlkM * Dv];
    alignas(1024) Element ds[SharedScores ? 1 : 2][BlkN * BlkM];  // dS^T: keys x 64 queries (DeferDq: two steps'; ColumnSplit: a consumer's)
    alignas(1024) float dq[DqStagings > 0 ? DqStagings : 1][DqCols / DqBoxCols][DqStagings > 0 ? BlkM * DqBoxCols : 1];  // [consumer][box]
    alignas(16) float lse_log2[Stages][BlkM];
    alignas(16) float dsum[Stages][BlkM];
    std::uint64_t kv_full;
    TmaPipeline<Stages> pipe;
    alignas(16) float pt[SharedScores ? BlkN * BlkM : 4];  // SharedScores: P^T, in consumer 0's accumulator order
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + the alignment of the base
  static_assert(SmemBytes <= 227 * 1024, "Sm90AttentionBackwardConfig: over the 227 KiB of shared memory a CTA may have");
};

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_attention_bwd_kernel(__grid_constant__ Sm90AttentionBackwardParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv, Stages = Config::Stages;
  constexpr int Cols = Config::Cols;
  extern __shared__ char smem_raw[];
  // The storage at the first 1024-byte boundary, as an offset from smem_raw: the compiler then
  // knows every access below is to shared memory (ld/st.shared, not generic).
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>(smem_raw + ((1024u - (tessel::detail::smem_address(smem_raw) & 1023u)) & 1023u));
  AttentionBackwardParams const& bp = p.b;
  AttentionParams const& a = bp.fwd;
  int const tid = int(threadIdx.x);
  // Where the deterministic mode adds dQ last to first, the key blocks launch last to first too:
  // a CTA then waits only on CTAs launched before it (attention_bwd_dq_turns_before). The default
  // mode under a causal mask, on a grid of few waves, takes its CTAs in groups of (batch, KV head)
  // pairs, key block first (attention_bwd_block_of, attention_bwd_block_group): the longest first.
  bool const rotated = Config::Ordered && bp.dq_rotated;
  int n_block = Config::Ordered && !rotated ? int(gridDim.x - 1 - blockIdx.x) : int(blockIdx.x);
  int kv_head = int(blockIdx.y), batch = int(blockIdx.z);
  if constexpr (!Config::Ordered) {
    if (bp.block_group > 0) {
      int const linear = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
      AttentionBwdBlock const b = attention_bwd_block_of(linear, int(gridDim.x), int(gridDim.y * gridDim.z), bp.block_group);
      n_block = b.n_block, kv_head = b.pair % int(gridDim.y), batch = b.pair / int(gridDim.y);
    }
  }
  std::int64_t const n0 = std::int64_t(n_block) * BlkN;
  AttentionMask const mask{a.seqlen_k, a.bottom_right ? std::int64_t(a.seqlen_k) - a.seqlen_q : 0, a.window_left,
                           a.window_right};
  int const cols_k = a.seqlen_k - int(n0) < BlkN ? a.seqlen_k - int(n0) : BlkN;
  QueryBlockRange const blocks = query_blocks(mask, a.seqlen_q, n0, cols_k, BlkM);
  int const per_head = blocks.end - blocks.begin;
  int const steps = a.kv_group * per_head;
  int const head0 = kv_head * a.kv_group;
  // Step i's query block (of head head0 + i / per_head), from blocks.begin; rotated, from the
  // key block's own start.
  int const first = rotated ? attention_bwd_dq_rotation(n_block, per_head, int(gridDim.x)) : 0;
  auto const query_block = [&](int step) {
    int const i = step % per_head + first;
    return blocks.begin + (i < per_head ? i : i - per_head);
  };

  if (tid == 0) {
    mbarrier_init(&smem.kv_full, 1);
    smem.pipe.init(128 * Config::Consumers);  // one arrival per consumer thread: each reads the stage's LSE and Dsum itself
  }
  __syncthreads();

  if (tid < 128) {  // the producer warpgroup: its first thread loads; Ordered, its second warp is the dQ writer
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
        int const m0 = query_block(step) * BlkM;
        std::uint64_t* const full = smem.pipe.producer_acquire(st, 2 * Config::QBytes + 2 * Config::RowBytes);
        TESSEL_UNROLL
        for (int c = 0; c < D / Cols; ++c) {
          SM90_TMA_LOAD::copy(&p.tma_q, full, smem.q[st.index] + c * BlkM * Cols, {c * Cols, m0, head, batch});
          SM90_TMA_LOAD::copy(&p.tma_do, full, smem.d_o[st.index] + c * BlkM * Cols, {c * Cols, m0, head, batch});
        }
        std::int64_t const row = attention_bwd_stat_row(bp, batch, head, 0, m0);  // fixed lengths only here
        SM90_BULK_COPY_G2S::copy(full, smem.lse_log2[st.index], bp.lse_log2 + row, Config::RowBytes);
        SM90_BULK_COPY_G2S::copy(full, smem.dsum[st.index], bp.dsum + row, Config::RowBytes);
        st.advance<Stages>();
      }
    }
    if constexpr (Config::Ordered) {  // the dQ writer: warp 1, lane 0 issuing
      if (tid / 32 == 1 && steps > 0) {
        constexpr int Box = Config::DqBoxCols, DqCols = Config::DqCols, Parts = Config::DqParts;
        bool const lead = tid == 32;
        for (int step = 0; step < steps; ++step) {
          int const head = head0 + step / per_head;
          int const m0 = query_block(step) * BlkM;
          unsigned* const turn = bp.dq_turns + attention_bwd_stat_row(bp, batch, head, 0, m0) / BlkM;
          if (lead) {
            int const rows = a.seqlen_q - m0 < BlkM ? a.seqlen_q - m0 : BlkM;
            KeyBlockRange const seen_by = key_blocks(mask, m0, rows, BlkN);  // (exactly those that visit it)
            int const earlier = attention_bwd_dq_turns_before(rotated, n_block, m0 / BlkM, per_head, int(gridDim.x), seen_by.end);
            counter_await_at_least(turn, unsigned(Parts * earlier));
            fence_proxy_async_global();
          }
          TESSEL_UNROLL
          for (int part = 0; part < Parts; ++part) {
            named_barrier_sync(Config::DqFullBarrier + part, 160);
            if (lead) {
              TESSEL_UNROLL
              for (int c = 0; c < DqCols / Box; ++c)
                SM90_TMA_REDUCE_ADD::copy(&p.tma_dq, smem.dq[part][c], {part * DqCols + c * Box, m0, head, batch});
              tma_store_commit();
            }
          }
          if (lead) tma_store_wait_read<0>();
          __syncwarp();
          if (step + 1 < steps) {
            TESSEL_UNROLL
            for (int part = 0; part < Parts; ++part) named_barrier_arrive(Config::DqEmptyBarrier + part, 160);
          }
          if (lead) {
            tma_store_wait<0>();
            fence_proxy_async_global();
            counter_add_release(turn, unsigned(Parts));
          }
        }
      }
    }
    return;
  }

  // A consumer warpgroup: keys [n0 + 64 wg, +64). Thread t holds rows r and r + 8 (r = 16 * warp +
  // lane / 4) of every accumulator: values 4j + {0, 1} and 4j + {2, 3}, columns 8j + 2 (lane % 4) + {0, 1}.
  warpgroup_reg_alloc<Config::ConsumerRegisters>();
  int const wg = warpgroup_index() - 1, t = tid % 128, lane = t % 32;  // (uniform: arch/sm90_cluster.hpp)
  int const row_in_wg = 16 * (t / 32) + lane / 4;
  int const col_in_block = 2 * (lane % 4);
  constexpr int KvCols = Config::KvCols;
  int const kv_chunk0 = Config::ColumnSplit ? 2 * wg : 0;        // its first 64-column chunk of dK, dV (and dQ)
  float dk[KvCols / 2], dv[KvCols / 2];
  TESSEL_UNROLL
  for (int i = 0; i < KvCols / 2; ++i) dk[i] = 0.0f, dv[i] = 0.0f;

  if (steps > 0) {
    constexpr int DqCols = Config::DqCols, DqKeys = Config::DqKeys;
    int const dq_col0 = Config::DqSplit ? wg * DqCols : 0;
    int const dq_key0 = Config::DqSplit ? 0 : 64 * wg;
    // The GEMMs as one-warpgroup TiledMMAs on descriptor fragments (atom/gmma_desc_fragment.hpp).
    // A k-step of S^T or dP^T moves 32 bytes along a 128-byte row and a chunk is rows x 128 bytes
    // further; a k-step of dQ, dV or dK (16 keys or queries) is 16 rows x 128 bytes further.
    auto mma_s = make_tiled_mma(typename Config::MmaS{});         // S^T, dP^T: 64 x 64 x 16
    auto mma_q = make_tiled_mma(typename Config::MmaQ{});         // dQ_part: 64 x DqCols x 16, dS and K MN-major
    auto const mma_kv = make_tiled_mma(typename Config::MmaKV{});  // dV, dK: 64 x KvCols x 16, A from registers
    // This warpgroup's K and V rows (K-major A of S^T and dP^T) and K's dQ slice (MN-major B of dQ:
    // DqKeys rows from dq_key0 of the 64-column chunks from dq_col0).
    // (ColumnSplit: both on the block's 64 keys. The keys' offset is written out at each use:
    // computed once, ptxas kept the descriptors' arithmetic live across the loop and spilled at D 128.)
    auto const wg_rows = make_tile(Layout<_64>{}, Layout<Int<D>>{});
    Tensor sK = make_tensor(make_smem_ptr(smem.k + (Config::ColumnSplit ? 0 : 64 * wg) * Cols),
                            composition(Config::kv_layout(), wg_rows));  // (64,D)
    Tensor sV = make_tensor(make_smem_ptr(smem.v + (Config::ColumnSplit ? 0 : 64 * wg) * Cols),
                            composition(Config::kv_layout(), wg_rows));  // (64,D)
    Tensor sKt = make_tensor(make_smem_ptr(smem.k + (dq_col0 / Cols) * BlkN * Cols + dq_key0 * Cols),
                             composition(Config::kt_layout(), make_tile(Layout<Int<DqCols>>{}, Layout<Int<DqKeys>>{})));  // (DqCols,DqKeys)
    Tensor tSrK = mma_s.get_slice(0).partition_fragment_A(sK);    // (_1,_1,D/16) descriptors
    Tensor tSrV = mma_s.get_slice(0).partition_fragment_A(sV);    // (_1,_1,D/16)
    Tensor tQrKt = mma_q.get_slice(0).partition_fragment_B(sKt);  // (_1,_1,DqKeys/16)
    mbarrier_wait(&smem.kv_full, 0);

    PipelineState st;
    int held = 0;  // ColumnSplit: the last step's stage, freed once its dQ reduction has read it
    float s[BlkM / 2], dp[BlkM / 2], dq[DqCols / 2];
    std::uint32_t pa[BlkM / 16][4], da[BlkM / 16][4];
    Tensor tQrQ = make_tensor(&dq[0], Layout<Int<DqCols / 2>>{});  // (MMA) dQ_part
    Tensor tKrV = make_tensor(&dv[0], Layout<Int<KvCols / 2>>{});  // (MMA) dV
    Tensor tKrK = make_tensor(&dk[0], Layout<Int<KvCols / 2>>{});  // (MMA) dK
    // dQ_part = dS K over keys [dq_key0, +DqKeys), dS^T from buffer ds_buf: dS MN-major (64 queries a
    // row), 16 keys a k-step; one wgmma group.
    auto const issue_dq = [&](int ds_buf) TESSEL_ALWAYS_INLINE {
      wgmma_fence();
      Tensor sDs = make_tensor(make_smem_ptr(smem.ds[ds_buf] + dq_key0 * BlkM),
                               composition(Config::ds_layout(), make_tile(Layout<Int<BlkM>>{}, Layout<Int<DqKeys>>{})));  // (BLK_M,DqKeys)
      Tensor tQrDs = mma_q.get_slice(0).partition_fragment_A(sDs);  // (_1,_1,DqKeys/16)
      mma_q.accumulate_ = GMMA::ScaleOut::Zero;
      TESSEL_UNROLL
      for (int kk = 0; kk < DqKeys / 16; ++kk) {
        gemm(mma_q, tQrDs(_, 0, kk), tQrKt(_, 0, kk), tQrQ);
        mma_q.accumulate_ = GMMA::ScaleOut::One;
      }
      wgmma_commit_group();
    };
    // dV += P^T dO and dK += dS^T Q: B is this consumer's KvCols columns of the stage's dO or Q,
    // MN-major (its rows are the queries), a k-step 16 query rows x 128 bytes further; A is P^T or
    // dS^T from registers, k-step j the 8 values of queries [16 j, +16) (register_a), or
    // (SharedScores' dK) dS^T from shared memory.
    // B's descriptors are made by hand and carried as a fragment. Stated as the (KvCols,BLK_M)
    // MN-major tile, at D 64 one box, they get LBO 16 (unused) instead of BLK_M x 128 and are then
    // the stage's K-major Q and dO descriptors bit for bit; nvcc then formed every descriptor of
    // the D 64 kernels differently (64-bit add and mask for 32-bit add and zero-extension: 384 bytes
    // more SASS in the bf16 instances, no register or spill change), and moved a wgmma.fence at D 128.
    auto const kv_columns = [&](Element* tile) TESSEL_ALWAYS_INLINE {  // (_1,_1,BLK_M/16) descriptors
      std::uint64_t const desc = wgmma_desc_mn_major_sw128(tile + kv_chunk0 * BlkM * Cols, std::uint32_t(BlkM * 128));
      return make_tensor(GMMA::DescriptorIterator<Element>{desc}, Layout<Shape<_1, _1, Int<BlkM / 16>>, Stride<_0, _0, Int<16 * Cols>>>{});
    };
    auto const register_a = [&](std::uint32_t (&frag)[4]) TESSEL_ALWAYS_INLINE {
      return make_tensor(reinterpret_cast<Element*>(&frag[0]), Layout<_8>{});  // (MMA)
    };
    // P^T (s) and dS^T (dp) rounded into the A fragments of the dV and dK GEMMs (pa, da): k-step j
    // is the accumulator's columns [16 j, +16).
    auto const pack_fragments = [&] {
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) {
        TESSEL_UNROLL
        for (int r = 0; r < 4; ++r) {
          pa[j][r] = detail::attention_pack2<Element>(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
          da[j][r] = detail::attention_pack2<Element>(dp[8 * j + 2 * r], dp[8 * j + 2 * r + 1]);
        }
      }
    };
    // acc = A B^T over the head dim (S^T = K Q^T, dP^T = V dO^T): A this warpgroup's key rows, B the
    // stage's 64 query rows, both K-major; a k-step moves 32 bytes along a 128-byte row (2 units), a
    // chunk is rows x 128 bytes (rows x 8 units). Issued into the open wgmma group.
    auto const stage_rows = [&](Element* tile) TESSEL_ALWAYS_INLINE {  // the stage's Q or dO as B: (_1,_1,D/16)
      return mma_s.get_slice(0).partition_fragment_B(make_tensor(make_smem_ptr(tile), Config::q_layout()));
    };
    // (typed parameters: nvcc 13.0's front end crashed on this lambda taking `auto`)
    auto const score_gemm = [&](decltype(tSrK) const& tSrA, decltype(stage_rows(nullptr)) const& tSrB, float (&acc)[BlkM / 2])
                                TESSEL_ALWAYS_INLINE {
      Tensor tSrS = make_tensor(&acc[0], Layout<Int<BlkM / 2>>{});  // (MMA)
      mma_s.accumulate_ = GMMA::ScaleOut::Zero;
      TESSEL_UNROLL
      for (int kk = 0; kk < D / 16; ++kk) {
        gemm(mma_s, tSrA(_, 0, kk), tSrB(_, 0, kk), tSrS);
        mma_s.accumulate_ = GMMA::ScaleOut::One;
      }
    };
    // Thread 0, before the staging is written again: the last reduction has read it (Ordered: the
    // writer's, waited for in stage_dq).
    auto const staging_free = [&] {
      if constexpr (!Config::Ordered) tma_store_wait_read<0>();
    };
    // dq_accum[rows, H, D] += dQ_part of step `of` (head dq_head, query block from dq_m0): the pairs
    // of columns (8j + col_in_block, +1) of rows row_in_wg and + 8 into the staging's 32-column
    // boxes, then one TMA reduction per box (rows past S_q are not written). The last reduction has
    // read the staging (its wait, then a barrier of this warpgroup's threads, comes before; Ordered:
    // the writer's barrier, then the writer reduces). Ordered at D 64, warpgroup 1 adds its part to
    // warpgroup 0's staging, which the writer then reduces. ColumnSplit: the boxes are this
    // consumer's two chunks of stage `stage`'s Q, then of its dO, once the other consumer's S^T and
    // dP^T of the step are done.
    auto const stage_dq = [&](int of, int dq_head, int dq_m0, int stage) {
      constexpr int Box = Config::DqBoxCols;
      constexpr bool Summed = Config::Ordered && !Config::DqSplit;
      int const part = Summed ? 0 : wg;  // the staging written, and the writer's part
      bool const adds = Summed && wg == 1;
      auto const dq_box = [&](int b) -> float* {
        if constexpr (Config::ColumnSplit) {
          // A box (64 rows x 32 fp32) is one 64-column chunk (64 rows x 64 16-bit elements): the
          // first KvCols / Cols boxes over this consumer's chunks of Q, the rest over its chunks of dO.
          constexpr int PerTile = Config::KvCols / Cols;
          static_assert(Box * sizeof(float) == Cols * sizeof(Element) && 2 * PerTile * Box == DqCols);
          Element* const tile = b < PerTile ? smem.q[stage] : smem.d_o[stage];
          return reinterpret_cast<float*>(tile + (kv_chunk0 + b % PerTile) * BlkM * Cols);
        } else {
          return smem.dq[part][b];
        }
      };
      if constexpr (Config::Ordered) {
        if (adds) named_barrier_sync(Config::DqPartBarrier, 256);             // warpgroup 0's part is in
        else if (of > 0) named_barrier_sync(Config::DqEmptyBarrier + part, 160);  // the writer has read the last
      }
      if constexpr (Config::ColumnSplit && !Config::SharedScores)
        named_barrier_sync(Config::SDoneBarrier + 2 * (of % 2) + wg, 256);
      TESSEL_UNROLL
      for (int j = 0; j < DqCols / 8; ++j) {
        char* const box = reinterpret_cast<char*>(dq_box(8 * j / Box));
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          float2* const at = reinterpret_cast<float2*>(box + detail::sw128_offset(row_in_wg + 8 * h, (8 * j) % Box + col_in_block, 4));
          float2 v{dq[4 * j + 2 * h], dq[4 * j + 2 * h + 1]};
          if (adds) {
            float2 const first = *at;
            v = float2{first.x + v.x, first.y + v.y};
          }
          *at = v;
        }
      }
      if constexpr (Config::Ordered) {
        if (Summed && !adds) {
          named_barrier_arrive(Config::DqPartBarrier, 256);
        } else {
          fence_proxy_async_shared();
          named_barrier_arrive(Config::DqFullBarrier + part, 160);
        }
        return;
      }
      fence_proxy_async_shared();
      named_barrier_sync(2 + wg, 128);
      if (t == 0) {
        TESSEL_UNROLL
        for (int c = 0; c < DqCols / Box; ++c)
          SM90_TMA_REDUCE_ADD::copy(&p.tma_dq, dq_box(c), {dq_col0 + c * Box, dq_m0, dq_head, batch});
        tma_store_commit();
      }
    };
    // One step; WithDq: it issues and stages a dQ part (DeferDq: not the first step, whose dQ comes
    // one step late like every other). (Always inlined, as shared_step: left to the inliner, the
    // fragments' layers of calls changed what nvcc made of the D 128 step -- the softcap's loads
    // no longer hoisted, 16 more bytes spilled in the Ordered kernel.)
    auto const step_body = [&](int step, auto with_dq) TESSEL_ALWAYS_INLINE {
      constexpr bool DqNow = decltype(with_dq)::value;
      int const m0 = query_block(step) * BlkM;
      int const buf = Config::ColumnSplit ? wg : step % 2;
      smem.pipe.consumer_wait(st);

      // S^T = K Q^T and dP^T = V dO^T, one wgmma group.
      Tensor tSrQ = stage_rows(smem.q[st.index]);     // (_1,_1,D/16)
      Tensor tSrDo = stage_rows(smem.d_o[st.index]);  // (_1,_1,D/16)
      wgmma_fence();
      score_gemm(tSrK, tSrQ, s);
      score_gemm(tSrV, tSrDo, dp);  // (D = D_v)
      wgmma_commit_group();
      // The step's LSE * log2 e and Dsum came with Q (+inf and 0 past S_q: P = 0 there). While the
      // GEMMs run, the last step's dQ reduction is waited for (its staging is written below).
      float const* const lse = smem.lse_log2[st.index];
      float const* const dsum = smem.dsum[st.index];
      if (t == 0) staging_free();
      wgmma_wait_group<0>();
      wgmma_fence_operand(dp);
      wgmma_fence_operand(s);
      if constexpr (Config::ColumnSplit)  // the other consumer may stage its dQ over its columns of this stage
        named_barrier_arrive(Config::SDoneBarrier + 2 * (step % 2) + (1 - wg), 256);

      // P^T and dS^T in place. Element i: key key0 + 8 ((i / 2) % 2), row c = 8 (i / 4) + col_in_block
      // + i % 2 of the step. One of three loops per step: no softcap, no mask (an FMA, an exp2 and
      // three FP ops per element, no branch); no softcap, masked (each of the thread's two keys has
      // the interval of rows that see it, elements outside get exp2(-inf) = 0); a softcap (z and
      // dz/dt in a pass of their own, the mask tested per element: at D 128 the intervals'
      // registers would spill there).
      bool const masked = key_block_needs_mask(mask, m0, a.seqlen_q - m0 < BlkM ? a.seqlen_q - m0 : BlkM, n_block, BlkN);
      std::int64_t const key0 = n0 + (Config::ColumnSplit ? 0 : 64 * wg) + row_in_wg;
      auto const scores = [&](auto softcap, auto intervals) {
        constexpr bool Softcap = decltype(softcap)::value, Intervals = decltype(intervals)::value;
        int lo[2] = {0, 0}, hi[2] = {BlkM, BlkM};  // rows [m0 + lo, m0 + hi) see key key0 + 8h
        if constexpr (Intervals) {
          TESSEL_UNROLL
          for (int h = 0; h < 2; ++h) {
            AttentionMask::Interval const rows = mask.queries_of(key0 + 8 * h);
            auto const clamp = [&](std::int64_t x) { return int(x - m0 < 0 ? 0 : (x - m0 > BlkM ? BlkM : x - m0)); };
            lo[h] = clamp(rows.begin), hi[h] = clamp(rows.end);
          }
        }
        float const score_log2 = Softcap || !a.negate_scores ? a.score_log2 : -a.score_log2;
        auto const for_each = [&](auto&& f) {  // f(i, c, h, LSE_c log2e, Dsum_c)
          TESSEL_UNROLL
          for (int j = 0; j < BlkM / 8; ++j) {
            int const c0 = 8 * j + col_in_block;
            float2 const l2 = *reinterpret_cast<float2 const*>(lse + c0);
            float2 const d2 = *reinterpret_cast<float2 const*>(dsum + c0);
            TESSEL_UNROLL
            for (int r = 0; r < 4; ++r) f(4 * j + r, c0 + r % 2, r / 2, r % 2 ? l2.y : l2.x, r % 2 ? d2.y : d2.x);
          }
        };
        if constexpr (Softcap)  // s = z log2e scale' - LSE log2e, dp = (dP - Dsum) dz/dt
          for_each([&](int i, int, int, float l, float d) {
            float dzdt;
            s[i] = fmaf(detail::attention_score_z(s[i], a.softcap, a.softcap_scale, false, dzdt), score_log2, -l);
            dp[i] = (dp[i] - d) * dzdt;
          });
        auto const prob = [&](int i, int c, int h, float l) {
          float x = Softcap ? s[i] : fmaf(s[i], score_log2, -l);
          if constexpr (Intervals) x = c >= lo[h] && c < hi[h] ? x : -INFINITY;
          if constexpr (Softcap) x = !masked || mask.keeps(m0 + c, key0 + 8 * h) ? x : -INFINITY;
          return detail::attention_exp2(x);
        };
        for_each([&](int i, int c, int h, float l, float d) {
          s[i] = prob(i, c, h, l);
          dp[i] = Softcap ? s[i] * dp[i] : s[i] * (dp[i] - d);
        });
      };
      if (a.softcap > 0.0f)
        scores(std::true_type{}, std::false_type{});
      else if (masked)
        scores(std::false_type{}, std::true_type{});
      else
        scores(std::false_type{}, std::false_type{});
      pack_fragments();
      // dS^T to shared memory: register pair (8j + 2r, +1) is key row_in_wg + 8 (r % 2), queries
      // 16 j + 8 (r / 2) + col_in_block + {0, 1}.
      char* const ds_tile = reinterpret_cast<char*>(smem.ds[buf]);
      if constexpr (Config::DeferDq)  // the other warpgroup's dQ of two steps back has read this half
        if (step >= 2) named_barrier_sync(Config::DsEmptyBarrier + 2 * buf + wg, 256);
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) {
        TESSEL_UNROLL
        for (int r = 0; r < 4; ++r) {
          int const key = (Config::ColumnSplit ? 0 : 64 * wg) + row_in_wg + 8 * (r % 2), query = 16 * j + 8 * (r / 2) + col_in_block;
          *reinterpret_cast<std::uint32_t*>(ds_tile + detail::sw128_offset(key, query)) = da[j][r];
        }
      }
      fence_proxy_async_shared();
      // This half of dS^T is in (D 128: for the other warpgroup's next step; D 64 reads its own
      // now); the last dQ reduction has read smem.dq (D 128: the full barrier below orders that).
      if constexpr (Config::DeferDq)
        named_barrier_arrive(Config::DsFullBarrier + 2 * buf + wg, 256);
      else
        named_barrier_sync(2 + wg, 128);
      // ColumnSplit: the last step's dQ reduction has read its staging (thread 0 waited, before the
      // barrier above), so that step's stage is free.
      if constexpr (Config::ColumnSplit)
        if (step > 0) smem.pipe.template consumer_release<1>(held);

      // dQ_part: this step's, or (DeferDq) the last step's once the other half of its dS^T is in;
      // DqLast: after dV's and dK's (below).
      if constexpr (Config::DeferDq && DqNow) {
        named_barrier_sync(Config::DsFullBarrier + 2 * (buf ^ 1) + (1 - wg), 256);
        issue_dq(buf ^ 1);
      } else if constexpr (DqNow && !Config::DqLast) {
        issue_dq(buf);
      }
      // dV += P^T dO and dK += dS^T Q, a second wgmma group behind dQ's, so that dQ_part's staging
      // below runs while they do: k-step j is queries [16j, 16j + 16), 16 rows x 128 bytes further.
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
      wgmma_fence();
      Tensor tKrDot = kv_columns(smem.d_o[st.index]);  // (_1,_1,BLK_M/16)
      Tensor tKrQt = kv_columns(smem.q[st.index]);    // (_1,_1,BLK_M/16)
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv, register_a(pa[j]), tKrDot(_, 0, j), tKrV);
      TESSEL_UNROLL
      for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv, register_a(da[j]), tKrQt(_, 0, j), tKrK);
      wgmma_commit_group();
      if constexpr (DqNow && !Config::DqLast) {
        wgmma_wait_group<1>();  // dQ's
        wgmma_fence_operand(dq);
        if constexpr (Config::DeferDq)  // (the other warpgroup writes that half again next step, if any)
          if (step + 1 < steps) named_barrier_arrive(Config::DsEmptyBarrier + 2 * (buf ^ 1) + (1 - wg), 256);
        int const of = Config::DeferDq ? step - 1 : step;
        stage_dq(of, head0 + of / per_head, query_block(of) * BlkM, st.index);
      }

      wgmma_wait_group<0>();  // dV's and dK's: the stage's Q and dO are read (DqLast: P^T and dS^T free)
      wgmma_fence_operand(dv);
      wgmma_fence_operand(dk);
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
      int const stage = st.index;
      if constexpr (Config::ColumnSplit)
        held = stage;  // (freed next step: dQ is staged in it)
      else
        smem.pipe.template consumer_release<1>(stage);
      st.advance<Stages>();
      if constexpr (Config::DqLast) {  // this step's dQ_part, from its own dS^T
        issue_dq(buf);
        wgmma_wait_group<0>();
        wgmma_fence_operand(dq);
        stage_dq(step, head0 + step / per_head, m0, stage);
      }
    };
    // SharedScores: one step. Consumer 0: S^T = K Q^T, P^T -> pt, dV += P^T dO (RS), then, once
    // dS^T is in, dK += dS^T Q (SS). Consumer 1: dP^T = V dO^T, then, once P^T is in, dS^T =
    // P^T (dP^T - Dsum) -> ds, dV += P^T dO and dK += dS^T Q (RS). Each then dQ's part over its
    // columns (dS from ds, MN-major), staged over its columns of the step's Q and dO.
    auto const shared_step = [&](int step, auto first_wg) TESSEL_ALWAYS_INLINE {
      int const m0 = query_block(step) * BlkM;
      constexpr bool first = decltype(first_wg)::value;  // warpgroup 0: forms S^T and P^T (else dP^T and dS^T)
      smem.pipe.consumer_wait(st);
      Tensor tSrB = stage_rows(first ? smem.q[st.index] : smem.d_o[st.index]);  // (_1,_1,D/16)
      wgmma_fence();
      score_gemm(first ? tSrK : tSrV, tSrB, s);
      wgmma_commit_group();
      if (t == 0) staging_free();
      wgmma_wait_group<0>();
      wgmma_fence_operand(s);
      // The last step's dQ reduction has read its staging (thread 0 waited): that stage is free.
      named_barrier_sync(2 + wg, 128);
      if (step > 0) smem.pipe.template consumer_release<1>(held);

      float const* const lse = smem.lse_log2[st.index];
      float const* const dsum = smem.dsum[st.index];
      float4* const pt = reinterpret_cast<float4*>(smem.pt);
      char* const ds_tile = reinterpret_cast<char*>(smem.ds[0]);
      Tensor tKrDot = kv_columns(smem.d_o[st.index]);  // (_1,_1,BLK_M/16)
      Tensor tKrQt = kv_columns(smem.q[st.index]);    // (_1,_1,BLK_M/16)
      // Element i of the score tile: key row_in_wg + 8 ((i / 2) % 2), query 8 (i / 4) + col_in_block + i % 2.
      if constexpr (first) {
        // P^T = exp2(S^T log2e scale' - LSE log2e), 0 where masked (the rows that see each of the
        // thread's two keys as an interval, as in step_body).
        bool const masked = key_block_needs_mask(mask, m0, a.seqlen_q - m0 < BlkM ? a.seqlen_q - m0 : BlkM, n_block, BlkN);
        int lo[2] = {0, 0}, hi[2] = {BlkM, BlkM};
        if (masked) {
          TESSEL_UNROLL
          for (int h = 0; h < 2; ++h) {
            AttentionMask::Interval const rows = mask.queries_of(n0 + row_in_wg + 8 * h);
            auto const clamp = [&](std::int64_t x) { return int(x - m0 < 0 ? 0 : (x - m0 > BlkM ? BlkM : x - m0)); };
            lo[h] = clamp(rows.begin), hi[h] = clamp(rows.end);
          }
        }
        float const score_log2 = a.negate_scores ? -a.score_log2 : a.score_log2;
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 8; ++j) {
          int const c0 = 8 * j + col_in_block;
          float2 const l2 = *reinterpret_cast<float2 const*>(lse + c0);
          TESSEL_UNROLL
          for (int r = 0; r < 4; ++r) {
            int const c = c0 + r % 2, h = r / 2;
            float const x = fmaf(s[4 * j + r], score_log2, -(r % 2 ? l2.y : l2.x));
            s[4 * j + r] = detail::attention_exp2(c >= lo[h] && c < hi[h] ? x : -INFINITY);
          }
        }
        if (step > 0) named_barrier_sync(Config::PtEmptyBarrier, 256);  // consumer 1 has read the last P^T
        TESSEL_UNROLL
        for (int q = 0; q < BlkM / 8; ++q) pt[q * 128 + t] = float4{s[4 * q], s[4 * q + 1], s[4 * q + 2], s[4 * q + 3]};
        named_barrier_arrive(Config::PtFullBarrier, 256);
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) {
          TESSEL_UNROLL
          for (int r = 0; r < 4; ++r) pa[j][r] = detail::attention_pack2<Element>(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
        }
        detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
        wgmma_fence();
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv, register_a(pa[j]), tKrDot(_, 0, j), tKrV);
        wgmma_commit_group();
        named_barrier_sync(Config::DsFullBarrier1, 256);  // dS^T is in (and consumer 1's dP^T done)
        // dK += dS^T Q with dS^T from shared memory (SS): K-major, a k-step 32 bytes along its rows.
        auto const mma_kv_ss = make_tiled_mma(typename Config::MmaKVss{});  // 64 x KvCols x 16
        Tensor tKrDst = mma_kv_ss.get_slice(0).partition_fragment_A(make_tensor(make_smem_ptr(smem.ds[0]), Config::dst_layout()));  // (_1,_1,BLK_M/16)
        wgmma_fence();
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv_ss, tKrDst(_, 0, j), tKrQt(_, 0, j), tKrK);
        wgmma_commit_group();
      } else {
        named_barrier_sync(Config::PtFullBarrier, 256);  // P^T is in (and consumer 0's S^T done)
        TESSEL_UNROLL
        for (int q = 0; q < BlkM / 8; ++q) {
          float4 const p4 = pt[q * 128 + t];
          int const c0 = 8 * q + col_in_block;
          float2 const d2 = *reinterpret_cast<float2 const*>(dsum + c0);
          float const pv[4] = {p4.x, p4.y, p4.z, p4.w};
          TESSEL_UNROLL
          for (int r = 0; r < 4; ++r) {
            dp[4 * q + r] = pv[r] * (s[4 * q + r] - (r % 2 ? d2.y : d2.x));
            s[4 * q + r] = pv[r];
          }
        }
        if (step + 1 < steps) named_barrier_arrive(Config::PtEmptyBarrier, 256);
        pack_fragments();
        if (step > 0) named_barrier_sync(Config::DsEmptyBarrier1, 256);  // consumer 0's dK and dQ have read the last dS^T
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) {
          TESSEL_UNROLL
          for (int r = 0; r < 4; ++r) {
            int const key = row_in_wg + 8 * (r % 2), query = 16 * j + 8 * (r / 2) + col_in_block;
            *reinterpret_cast<std::uint32_t*>(ds_tile + detail::sw128_offset(key, query)) = da[j][r];
          }
        }
        fence_proxy_async_shared();
        named_barrier_arrive(Config::DsFullBarrier1, 256);
        named_barrier_sync(2 + wg, 128);  // (this warpgroup's own dQ GEMM reads dS^T too)
        detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
        detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
        wgmma_fence();
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv, register_a(pa[j]), tKrDot(_, 0, j), tKrV);
        TESSEL_UNROLL
        for (int j = 0; j < BlkM / 16; ++j) gemm(mma_kv, register_a(da[j]), tKrQt(_, 0, j), tKrK);
        wgmma_commit_group();
      }
      wgmma_wait_group<0>();
      wgmma_fence_operand(dv);
      wgmma_fence_operand(dk);
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(pa));
      detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkM / 4]>(da));
      int const stage = st.index;
      held = stage;  // (freed next step: dQ is staged in it)
      st.advance<Stages>();
      issue_dq(0);
      wgmma_wait_group<0>();
      wgmma_fence_operand(dq);
      if (first && step + 1 < steps) named_barrier_arrive(Config::DsEmptyBarrier1, 256);
      stage_dq(step, head0 + step / per_head, m0, stage);
    };
    if constexpr (Config::SharedScores) {  // (a loop per warpgroup: one loop branching on it serialized every wgmma, C7512)
      if (wg == 0)
        for (int step = 0; step < steps; ++step) shared_step(step, std::true_type{});
      else
        for (int step = 0; step < steps; ++step) shared_step(step, std::false_type{});
    } else if constexpr (Config::DeferDq) {
      if (steps > 0) step_body(0, std::false_type{});
      for (int step = 1; step < steps; ++step) step_body(step, std::true_type{});
    } else {
      for (int step = 0; step < steps; ++step) step_body(step, std::true_type{});
    }
    if constexpr (Config::DeferDq) {  // the last step's dQ
      int const last = steps - 1;
      if (t == 0) staging_free();
      named_barrier_sync(Config::DsFullBarrier + 2 * (last % 2) + (1 - wg), 256);
      issue_dq(last % 2);
      wgmma_wait_group<0>();
      wgmma_fence_operand(dq);
      stage_dq(last, head0 + last / per_head, query_block(last) * BlkM, 0);
    }
    if (t == 0) tma_store_wait<0>();  // the staging stays until the last reduction has read it (Ordered: the writer issues them)
  }

  // dK = scale * sum dS^T Q and dV = sum P^T dO through shared memory: once every consumer's last
  // step is done the Q/dO ring is free (the producer loads nothing more), and each warpgroup writes
  // its 64 keys of dK over stage wg's Q and of dV over its dO (ColumnSplit: its columns of stage
  // 0's), in the tiles' own 128-byte swizzled chunks of 64 columns; one thread then stores them by
  // TMA (keys past S_k are not written; a key block that no query sees stores zeros).
  static_assert(Stages >= Config::Consumers, "the epilogue stages each consumer's dK and dV in a stage of its own");
  named_barrier_sync(1, 128 * Config::Consumers);
  if constexpr (Config::ColumnSplit) {
    Element* const dk_tile = smem.q[0] + kv_chunk0 * BlkM * Cols;
    Element* const dv_tile = smem.d_o[0] + kv_chunk0 * BlkM * Cols;
    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) {
      int const row = row_in_wg + 8 * h;
      TESSEL_UNROLL
      for (int j = 0; j < KvCols / 8; ++j) {
        int const at = detail::sw128_offset(row, (8 * j) % Cols + col_in_block);
        *reinterpret_cast<std::uint32_t*>(reinterpret_cast<char*>(dk_tile + (8 * j / Cols) * BlkM * Cols) + at) =
            detail::attention_pack2<Element>(dk[4 * j + 2 * h] * bp.grad_scale, dk[4 * j + 2 * h + 1] * bp.grad_scale);
        *reinterpret_cast<std::uint32_t*>(reinterpret_cast<char*>(dv_tile + (8 * j / Cols) * BlkM * Cols) + at) =
            detail::attention_pack2<Element>(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1]);
      }
    }
    fence_proxy_async_shared();
    named_barrier_sync(2 + wg, 128);
    if (t == 0) {
      TESSEL_UNROLL
      for (int c = 0; c < KvCols / Cols; ++c) {
        int const col = (kv_chunk0 + c) * Cols;
        SM90_TMA_STORE::copy(&p.tma_dk, dk_tile + c * BlkM * Cols, {col, int(n0), kv_head, batch});
        SM90_TMA_STORE::copy(&p.tma_dv, dv_tile + c * BlkM * Cols, {col, int(n0), kv_head, batch});
      }
      tma_store_commit();
      tma_store_wait<0>();
    }
  } else {  // (a form shared with ColumnSplit made ptxas spill in the D 128 kernel)
    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) {
      int const row = row_in_wg + 8 * h;
      TESSEL_UNROLL
      for (int j = 0; j < D / 8; ++j) {
        char* const chunk = reinterpret_cast<char*>(smem.q[wg] + (8 * j / Cols) * BlkM * Cols);
        *reinterpret_cast<std::uint32_t*>(chunk + detail::sw128_offset(row, (8 * j) % Cols + col_in_block)) =
            detail::attention_pack2<Element>(dk[4 * j + 2 * h] * bp.grad_scale, dk[4 * j + 2 * h + 1] * bp.grad_scale);
      }
      TESSEL_UNROLL
      for (int j = 0; j < Dv / 8; ++j) {
        char* const chunk = reinterpret_cast<char*>(smem.d_o[wg] + (8 * j / Cols) * BlkM * Cols);
        *reinterpret_cast<std::uint32_t*>(chunk + detail::sw128_offset(row, (8 * j) % Cols + col_in_block)) =
            detail::attention_pack2<Element>(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1]);
      }
    }
    fence_proxy_async_shared();
    named_barrier_sync(2 + wg, 128);
    if (t == 0) {
      int const key0 = int(n0) + 64 * wg;
      TESSEL_UNROLL
      for (int c = 0; c < D / Cols; ++c) SM90_TMA_STORE::copy(&p.tma_dk, smem.q[wg] + c * BlkM * Cols, {c * Cols, key0, kv_head, batch});
      TESSEL_UNROLL
      for (int c = 0; c < Dv / Cols; ++c) SM90_TMA_STORE::copy(&p.tma_dv, smem.d_o[wg] + c * BlkM * Cols, {c * Cols, key0, kv_head, batch});
      tma_store_commit();
      tma_store_wait<0>();
    }
  }
#else
  (void)p;
#endif
}

}  // namespace tessel::kernel
