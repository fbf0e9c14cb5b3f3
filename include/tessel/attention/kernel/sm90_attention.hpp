// tessel/attention/kernel/sm90_attention.hpp -- the sm_90a flash-attention forward kernel: TMA loads,
// wgmma for both GEMMs, a producer warpgroup and two or three consumer warpgroups; one CTA per
// (query tile, head, batch), or (Persistent) one per SM walking those tiles.
//
//   warpgroup 0, the producer (registers lowered to 24 by setmaxnreg): one thread issues the TMA
//       loads -- the Q tile once, then per key block n (from the last to the first, the masked
//       blocks first) K[n] into the K ring and V[n] into the V ring (pipeline/sm90_pipeline.hpp,
//       Stages deep each). Each tile is D / 64 boxes of 64 columns (128-byte rows) in the
//       128-byte swizzle, the layout both the K-major and the MN-major wgmma descriptors read.
//   warpgroups 1 .. W, the consumers (registers raised to 240 for W = 2, 160 for W = 3): 64 query
//       rows each, so a row's softmax stays inside one warp's quad as on sm_80. Per key block, with
//       S and O in registers:
//
//         issue S' = Q K[n']^T      wgmma SS, m64 x BLK_N, D / 16 k-steps, K read K-major
//         issue O += P V[n]         wgmma RS: P (the previous block's probabilities) from
//                                   registers, V read MN-major (its rows are keys, D_v contiguous)
//         wait for S' (the PV group still in flight), free K[n']
//         softcap, mask, online softmax of S' -> P'    overlaps the PV wgmmas
//         wait for PV, free V[n]; O *= exp2(old max - new max); P = P'
//
//       The accumulator of m64nN wgmma holds, per thread, the same (row, column pair) pattern as
//       the A operand of a register-A wgmma k16 step, so P is S rounded to 16 bits in place: the
//       8 values of columns [16k, 16k + 16) are the k-th A fragment.
//       The warpgroups take turns issuing their GEMMs (ping-pong, at D <= 128; a ring of W), so
//       one's softmax runs while the tensor cores do another's GEMMs. Each warpgroup issues them
//       only for the blocks its own 64 rows see (a causal tile's first rows see fewer keys, rows
//       past S_q none) and only passes its turn for the tile's other blocks.
//   end: O /= row sum; LSE stored from registers, O written into shared memory over the
//       warpgroup's own 64 rows of the Q tile (free once its last S GEMM has retired) in the
//       128-byte swizzle, then stored by one thread as D_v / 64 TMA boxes of 64 x 64: fewer, wider
//       stores than from registers, and the tensor map clips rows past S_q. (Persistent: a tile
//       without keys holds no Q stage; its zeros are stored from registers.)
// The GEMMs' operands never leave shared memory between TMA and the tensor cores; the exp2 of the
// softmax takes one FFMA (the scale folded into log2(e)), as on sm_80.
//
// Persistent: the grid is min(tiles, SMs) CTAs; CTA c takes the tiles c, c + grid, ... (query
// tile fastest, then head, then batch). Q lives in a ring of two (the next tile's loads while this
// one runs; every consumer warp waits for each tile's Q and frees it once the tile's O, staged
// over it, is stored), the K/V rings and the ping-pong token carry on from tile to tile (the last
// warpgroup keeps the token only after its last turn of the CTA's last tile with keys), and a
// warpgroup's first GEMMs of a tile issue while the other stores the previous tile's O. The walk
// is written as `if constexpr` islands and loops that the one-CTA-per-tile instantiation folds
// away: its PTX is exactly the kernel's without them (diff the PTX of a configuration before and
// after a change here). A restructured form that did not keep it so made the one-CTA kernels 3-5%
// slower on the H200 (its tile loop put values in vector registers that ptxas moved back to
// uniform ones: R2UR 4 -> 15).
//
// What this kernel does not take (the host sends those problems to the sm_80 kernel):
// variable-length batches (TMA needs each tensor's extent, which cu_seqlens holds on the device),
// strides that are not multiples of 16 bytes, a zero stride over more than one row, head or batch
// of Q, K, V or O (a tensor map takes none), head dims that are not multiples of 64.
#pragma once

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
#include <tessel/attention/kernel/attention_math.hpp>
#include <tessel/attention/kernel/attention_params.hpp>
#include <tessel/config.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>

namespace tessel::kernel {

// The kernel's parameters: the tensor maps of Q, K, V and O -- each (D or D_v, S, H, B) with D
// contiguous, boxes of 64 columns by BLK_M (Q), BLK_N (K, V) or 64 (O, one consumer warpgroup's
// rows) rows, 128-byte swizzle -- and the rest.
struct Sm90AttentionParams {
  TmaDescriptor tma_q, tma_k, tma_v, tma_o;
  AttentionParams a;
  int tiles;  // query tiles x heads x batch: what a persistent kernel's CTAs walk
};

// One sm_90a attention configuration: element type, head dims, the key tile, pipeline depth.
//   e.g. Sm90AttentionConfig<bfloat16_t, 128, 128, 128>: 384 threads, query tile 128,
//        smem 32 KiB Q + 2 x 32 KiB K + 2 x 32 KiB V = 160 KiB
// PingPong: the consumer warpgroups take turns issuing their GEMMs (see the kernel); measured on the
// H200 it gains 1-5% at D <= 128 and loses about 1% at D = 256, where the GEMMs outweigh the softmax.
// ConsumerWarpgroups: 2 (query tile 128) or 3 (query tile 192: each K/V block loaded serves half as
// many rows again, in 160 registers a thread instead of 240 -- room for D = 64's accumulators).
template <class Element_, int D_, int Dv_, int BlkN_, int Stages_ = 2, bool PingPong_ = (D_ <= 128),
          int ConsumerWarpgroups_ = 2, bool Persistent_ = false>
struct Sm90AttentionConfig {
  using Element = Element_;
  static constexpr int D = D_, Dv = Dv_, BlkN = BlkN_, Stages = Stages_;
  static constexpr bool PingPong = PingPong_;
  static constexpr int ConsumerWarpgroups = ConsumerWarpgroups_;
  static constexpr bool Persistent = Persistent_;
  static constexpr int QStages = Persistent ? 2 : 1;  // Q tiles in shared memory (the next one loads under this one)
  static_assert(ConsumerWarpgroups == 2 || ConsumerWarpgroups == 3, "Sm90AttentionConfig: 2 or 3 consumer warpgroups");
  static constexpr int BlkM = 64 * ConsumerWarpgroups;
  static constexpr int Threads = 128 * (1 + ConsumerWarpgroups);
  // The register file split by setmaxnreg: 128 x 24 + 256 x 240 and 128 x 24 + 384 x 160 <= 65536.
  static constexpr int ProducerRegisters = 24, ConsumerRegisters = ConsumerWarpgroups == 2 ? 240 : 160;
  static constexpr int Cols = 64;                                        // elements per 128-byte swizzled row
  static_assert(D % Cols == 0 && Dv % Cols == 0, "Sm90AttentionConfig: D and D_v must be multiples of 64 (128-byte TMA boxes)");
  static_assert(BlkN % 16 == 0, "Sm90AttentionConfig: BLK_N must be a multiple of 16 (the k16 step of O += P V)");
  static_assert(Dv <= D, "Sm90AttentionConfig: the epilogue stages O over the Q tile's rows, so D_v must be at most D");
  // Named barriers: 1 .. W the ping-pong ring; StagingBarrier + wg, warpgroup wg's 128 threads
  // around the O staging.
  static constexpr int StagingBarrier = 1 + ConsumerWarpgroups;

  using MmaS = typename Sm90WgmmaOf<Element, BlkN>::Op;                // S = Q K^T: A and B K-major
  using MmaO = typename Sm90WgmmaRsOf<Element, Dv>::template Op<1>;    // O += P V: V MN-major

  static constexpr std::uint32_t QBytes = std::uint32_t(BlkM * D * sizeof(Element));
  static constexpr std::uint32_t KBytes = std::uint32_t(BlkN * D * sizeof(Element));
  static constexpr std::uint32_t VBytes = std::uint32_t(BlkN * Dv * sizeof(Element));

  // The tiles in the wgmma vocabulary (atom/gmma_smem_layout.hpp): Q (BLK_M,D) and K (BLK_N,D)
  // K-major -- the SW128 atom tiled down the rows, then one 64-column chunk after another, as the
  // TMA boxes fill them -- and V as O += P V's B operand, (D_v,BLK_N) MN-major: per 64 D_v-columns
  // a chunk of BLK_N keys, key-row r at 128r bytes.
  static constexpr auto q_layout() {  // (BLK_M,D)
    return tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<Int<BlkM>, Int<D>>{});
  }
  static constexpr auto k_layout() {  // (BLK_N,D)
    return tile_to_shape(GMMA::Layout_K_SW128_Atom<Element>{}, Shape<Int<BlkN>, Int<D>>{});
  }
  static constexpr auto v_layout() {  // (D_v,BLK_N)
    return tile_to_shape(GMMA::Layout_MN_SW128_Atom<Element>{}, Shape<Int<Dv>, Int<BlkN>>{}, Step<_2, _1>{});
  }

  // Each tile: its 64-column chunks one after another, a chunk being rows x 128 bytes.
  struct SharedStorage {
    alignas(1024) Element q[QStages * BlkM * D];
    alignas(1024) Element k[Stages][BlkN * D];
    alignas(1024) Element v[Stages][BlkN * Dv];
    std::uint64_t q_full;  // one CTA per tile: the Q tile's barrier
    TmaPipeline<Stages> k_pipe;
    TmaPipeline<Stages> v_pipe;
    TmaPipeline<2> q_pipe;  // Persistent: the Q ring
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + the alignment of the base
};

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_attention_kernel(__grid_constant__ Sm90AttentionParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  constexpr int BlkM = Config::BlkM, BlkN = Config::BlkN, D = Config::D, Dv = Config::Dv, Stages = Config::Stages;
  constexpr int Cols = Config::Cols;
  extern __shared__ char smem_raw[];
  auto& smem = *reinterpret_cast<typename Config::SharedStorage*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                                  ~std::uintptr_t(1023));
  AttentionParams const& a = p.a;
  int const tid = int(threadIdx.x);
  // The tile: the grid position's, or (Persistent) linear id `tile` -- query tile fastest, then head,
  // then batch -- from blockIdx.x in steps of gridDim.x below p.tiles.
  int m_block = a.longest_first ? a.m_blocks - 1 - int(blockIdx.x) : int(blockIdx.x);
  int head = int(blockIdx.y), batch = int(blockIdx.z);
  int tile = int(blockIdx.x);
  // (in_warp: the whole warp decodes, and reads the result from lane 0 -- a division by a run-time
  // divisor leaves it in vector registers, and what derives from it, ptxas would keep there too)
  auto const m_block_of = [&](int id) {
    int const m_index = id % a.m_blocks;
    return a.longest_first ? a.m_blocks - 1 - m_index : m_index;
  };
  auto const decode = [&](bool in_warp) {
    int const head_batch = tile / a.m_blocks;
    m_block = m_block_of(tile);
    head = head_batch % a.heads, batch = head_batch / a.heads;
    if (in_warp) m_block = warp_uniform(m_block), head = warp_uniform(head), batch = warp_uniform(batch);
  };
  if constexpr (Config::Persistent) decode(true);
  int kv_head = head / a.kv_group;
  int m0 = m_block * BlkM;
  int const rows_q = a.seqlen_q - m0 < BlkM ? a.seqlen_q - m0 : BlkM;
  AttentionMask const mask{a.seqlen_k, a.bottom_right ? std::int64_t(a.seqlen_k) - a.seqlen_q : 0, a.window_left,
                           a.window_right};
  KeyBlockRange blocks = key_blocks(mask, m0, rows_q, BlkN);
  // Persistent: the key blocks of query tile m_block; the move to the CTA's next tile (false past
  // the last).
  auto const blocks_of = [&](int m) {
    int const rows = a.seqlen_q - m * BlkM < BlkM ? a.seqlen_q - m * BlkM : BlkM;
    return key_blocks(mask, m * BlkM, rows, BlkN);
  };
  auto const next_tile = [&](bool in_warp) {
    tile += int(gridDim.x);
    if (tile >= p.tiles) return false;
    decode(in_warp);
    kv_head = head / a.kv_group;
    m0 = m_block * BlkM;
    blocks = blocks_of(m_block);
    return true;
  };

  if (tid == 0) {
    mbarrier_init(&smem.q_full, 1);
    smem.k_pipe.init(4 * Config::ConsumerWarpgroups);  // one arrival per consumer warp
    smem.v_pipe.init(4 * Config::ConsumerWarpgroups);
    if constexpr (Config::Persistent) smem.q_pipe.init(4 * Config::ConsumerWarpgroups);
  }
  __syncthreads();

  if (tid < 128) {  // the producer warpgroup
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (tid == 0 && (Config::Persistent || blocks.end > blocks.begin)) {
      PipelineState qst, kst, vst;
      for (;;) {  // (one CTA per tile: once)
        if (Config::Persistent && blocks.end <= blocks.begin) {  // no key: nothing to load
          if (!next_tile(false)) break;
          continue;
        }
        if constexpr (Config::Persistent) {
          std::uint64_t* const q_full = smem.q_pipe.producer_acquire(qst, Config::QBytes);
          TESSEL_UNROLL
          for (int c = 0; c < D / Cols; ++c)
            SM90_TMA_LOAD::copy(&p.tma_q, q_full, smem.q + qst.index * BlkM * D + c * BlkM * Cols,
                                {c * Cols, m0, head, batch});
          qst.advance<2>();
        } else {
          mbarrier_arrive_expect_tx(&smem.q_full, Config::QBytes);
          TESSEL_UNROLL
          for (int c = 0; c < D / Cols; ++c)
            SM90_TMA_LOAD::copy(&p.tma_q, &smem.q_full, smem.q + c * BlkM * Cols, {c * Cols, m0, head, batch});
        }
        for (int n = blocks.end - 1; n >= blocks.begin; --n) {
          std::uint64_t* const k_full = smem.k_pipe.producer_acquire(kst, Config::KBytes);
          TESSEL_UNROLL
          for (int c = 0; c < D / Cols; ++c)
            SM90_TMA_LOAD::copy(&p.tma_k, k_full, smem.k[kst.index] + c * BlkN * Cols,
                                {c * Cols, n * BlkN, kv_head, batch});
          kst.advance<Stages>();
          std::uint64_t* const v_full = smem.v_pipe.producer_acquire(vst, Config::VBytes);
          TESSEL_UNROLL
          for (int c = 0; c < Dv / Cols; ++c)
            SM90_TMA_LOAD::copy(&p.tma_v, v_full, smem.v[vst.index] + c * BlkN * Cols,
                                {c * Cols, n * BlkN, kv_head, batch});
          vst.advance<Stages>();
        }
        if (!Config::Persistent || !next_tile(false)) break;
      }
    }
    return;
  }

  // A consumer warpgroup: rows [m0 + 64 wg, +64) of the tile. Thread t of it holds rows r and
  // r + 8 (r = 16 * warp + lane / 4) of every accumulator: values 4j + {0, 1} and 4j + {2, 3},
  // columns 8j + 2 (lane % 4) + {0, 1}.
  warpgroup_reg_alloc<Config::ConsumerRegisters>();
  int const wg = warpgroup_index() - 1, t = tid % 128, lane = t % 32;  // (uniform: arch/sm90_cluster.hpp)
  int const row_in_tile = 64 * wg + 16 * (t / 32) + lane / 4;
  int const col_in_block = 2 * (lane % 4);
  constexpr int W = Config::ConsumerWarpgroups;
  // Persistent: the Q ring's place, and whether a later tile of this CTA has keys (the ping-pong
  // token stays with the last warpgroup after the CTA's last turn, below).
  PipelineState qst, kst, vst;
  auto const later_tile_has_keys = [&] {
    for (int next = tile + int(gridDim.x); next < p.tiles; next += int(gridDim.x)) {
      KeyBlockRange const b = blocks_of(m_block_of(next));
      if (b.end > b.begin) return true;
    }
    return false;
  };
  if constexpr (Config::Persistent && Config::PingPong) {
    if (wg == W - 1 && warp_uniform(blocks.end > blocks.begin || later_tile_has_keys())) named_barrier_arrive(1, 256);
  }
  for (;;) {  // (one CTA per tile: once)
    float o[Dv / 2];
    TESSEL_UNROLL
    for (int i = 0; i < Dv / 2; ++i) o[i] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};

    if (blocks.end > blocks.begin) {
      bool const final_turns = Config::Persistent ? !warp_uniform(later_tile_has_keys()) : true;
      // The GEMMs as one-warpgroup TiledMMAs on descriptor fragments (atom/gmma_desc_fragment.hpp):
      // this warpgroup's 64 rows of the Q tile, the stage's K and V. A k-step of S moves 32 bytes
      // along a 128-byte row and a chunk is rows x 128 bytes further; a k-step of O (16 keys) is
      // 16 rows x 128 bytes of every V chunk further.
      auto mma_s = make_tiled_mma(typename Config::MmaS{});  // S = Q K^T: 64 x BLK_N x 16
      auto const mma_o = make_tiled_mma(typename Config::MmaO{});  // O += P V: 64 x D_v x 16, P from registers
      Tensor sQ = make_tensor(make_smem_ptr(smem.q + (Config::Persistent ? qst.index : 0) * BlkM * D + 64 * wg * Cols),
                              composition(Config::q_layout(), make_tile(Layout<_64>{}, Layout<Int<D>>{})));  // (64,D)
      Tensor tSrQ = mma_s.get_slice(0).partition_fragment_A(sQ);  // (_1,_1,D/16) descriptors
      Tensor tOrO = make_tensor(&o[0], Layout<Int<Dv / 2>>{});    // (MMA)
      auto const qk = [&](float (&s)[BlkN / 2], int stage) TESSEL_ALWAYS_INLINE {
        Tensor sK = make_tensor(make_smem_ptr(smem.k[stage]), Config::k_layout());  // (BLK_N,D)
        Tensor tSrK = mma_s.get_slice(0).partition_fragment_B(sK);                  // (_1,_1,D/16)
        Tensor tSrS = make_tensor(&s[0], Layout<Int<BlkN / 2>>{});  // (MMA)
        mma_s.accumulate_ = GMMA::ScaleOut::Zero;
        TESSEL_UNROLL
        for (int kk = 0; kk < D / 16; ++kk) {
          gemm(mma_s, tSrQ(_, 0, kk), tSrK(_, 0, kk), tSrS);
          mma_s.accumulate_ = GMMA::ScaleOut::One;
        }
      };
      auto const pv = [&](std::uint32_t (&pa)[BlkN / 16][4], int stage) TESSEL_ALWAYS_INLINE {
        // P's registers are written before the fence: a conversion the compiler sank between the
        // fence and the wgmma that reads it would serialise the wgmmas.
        detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkN / 4]>(pa));
        wgmma_fence();
        Tensor sV = make_tensor(make_smem_ptr(smem.v[stage]), Config::v_layout());  // (D_v,BLK_N)
        Tensor tOrV = mma_o.get_slice(0).partition_fragment_B(sV);                  // (_1,_1,BLK_N/16)
        TESSEL_UNROLL
        for (int j = 0; j < BlkN / 16; ++j) {
          Tensor tOrP = make_tensor(reinterpret_cast<Element*>(&pa[j][0]), Layout<_8>{});  // (MMA) keys [16j, 16j + 16) of P
          gemm(mma_o, tOrP, tOrV(_, 0, j), tOrO);
        }
      };
      // S -> P for key block n: softcap or sign, mask, online softmax; corr: what O must be
      // multiplied by once the previous block's P V has retired.
      auto const softmax = [&](float (&s)[BlkN / 2], int n, float (&corr)[2]) {
        if (a.softcap > 0.0f) {
          TESSEL_UNROLL
          for (int i = 0; i < BlkN / 2; ++i) s[i] = a.softcap * detail::attention_tanh(s[i] * a.softcap_scale);
        } else if (a.negate_scores) {
          TESSEL_UNROLL
          for (int i = 0; i < BlkN / 2; ++i) s[i] = -s[i];
        }
        if (key_block_needs_mask(mask, m0 + 64 * wg, 64, n, BlkN)) {
          std::int64_t const n0 = std::int64_t(n) * BlkN + col_in_block;
          TESSEL_UNROLL
          for (int h = 0; h < 2; ++h) {
            AttentionMask::Interval const keys = mask.keys_of(m0 + row_in_tile + 8 * h);
            std::int64_t const lo64 = keys.begin - n0, hi64 = keys.end - n0;
            int const lo = lo64 < -1 ? -1 : (lo64 > BlkN ? BlkN : int(lo64));
            int const hi = hi64 < -1 ? -1 : (hi64 > BlkN ? BlkN : int(hi64));
            TESSEL_UNROLL
            for (int j = 0; j < BlkN / 8; ++j) {
              TESSEL_UNROLL
              for (int c = 0; c < 2; ++c) {
                int const col = 8 * j + c;  // minus col_in_block
                if (col < lo || col >= hi) s[4 * j + 2 * h + c] = -INFINITY;
              }
            }
          }
        }
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          float mx = row_max[h];
          TESSEL_UNROLL
          for (int j = 0; j < BlkN / 8; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
          float const new_max = detail::quad_max(mx);
          // exp2 offsets stay finite: a row with no key yet keeps 0 (its scores are -inf, P = 0).
          float const max_scaled = new_max == -INFINITY ? 0.0f : new_max * a.score_log2;
          corr[h] = detail::attention_exp2(row_max[h] * a.score_log2 - max_scaled);  // 0 when the old max is -inf
          row_max[h] = new_max;
          float sum = 0.0f;
          TESSEL_UNROLL
          for (int j = 0; j < BlkN / 8; ++j) {
            TESSEL_UNROLL
            for (int c = 0; c < 2; ++c) {
              float& x = s[4 * j + 2 * h + c];
              x = detail::attention_exp2(x * a.score_log2 - max_scaled);
              sum += x;
            }
          }
          row_sum[h] = row_sum[h] * corr[h] + sum;
        }
      };
      // P in the input precision, as the A operand: k-step j is the 8 values of columns [16j, 16j + 16).
      auto const to_p = [&](float const (&s)[BlkN / 2], std::uint32_t (&pa)[BlkN / 16][4]) {
        TESSEL_UNROLL
        for (int j = 0; j < BlkN / 16; ++j) {
          TESSEL_UNROLL
          for (int r = 0; r < 4; ++r)
            pa[j][r] = detail::attention_pack2<Element>(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
        }
      };
      auto const rescale_o = [&](float const (&corr)[2]) {
        TESSEL_UNROLL
        for (int j = 0; j < Dv / 8; ++j) {
          o[4 * j + 0] *= corr[0], o[4 * j + 1] *= corr[0];
          o[4 * j + 2] *= corr[1], o[4 * j + 3] *= corr[1];
        }
      };
      auto const release = [&](TmaPipeline<Stages>& pipe, int stage) {
        if (lane == 0) pipe.template consumer_release<1>(stage);
      };

      // Ping-pong: the consumer warpgroups take turns issuing their GEMMs -- a token passed round a
      // ring through named barriers 1 .. W (warpgroup w waits at 1 + w and hands on to the next's) --
      // so the tensor cores run one's GEMMs while the others do their softmax. Every warpgroup takes
      // one turn per key block of the tile and one more (its last P V); the last warpgroup hands the
      // token over first and keeps it after its last turn (Persistent: its last turn in the CTA's last
      // tile with keys), so each barrier sees as many arrivals as waits.
      auto const take_turn = [&] {
        if constexpr (Config::PingPong) named_barrier_meet(1 + wg, 256);
      };
      auto const pass_turn = [&](bool last) {
        if constexpr (Config::PingPong) {
          if (!(last && wg == W - 1 && final_turns)) named_barrier_arrive(1 + (wg + 1) % W, 256);
        }
      };
      if constexpr (Config::PingPong && !Config::Persistent) {
        if (wg == W - 1) named_barrier_arrive(1, 256);
      }

      // The key blocks this warpgroup's rows see: a sub-range of the tile's (under a causal mask the
      // first rows see fewer keys; rows past S_q see none). The warpgroup waits for and frees every
      // stage of the tile's blocks and takes its turn for each, but issues GEMMs only for its own.
      int const wg_m0 = m0 + 64 * wg;
      int const wg_rows = a.seqlen_q - wg_m0 < 64 ? a.seqlen_q - wg_m0 : 64;
      KeyBlockRange const mine = wg_rows > 0 ? key_blocks(mask, wg_m0, wg_rows, BlkN) : KeyBlockRange{0, 0};
      bool const any = mine.end > mine.begin;
      auto const pass_block = [&](bool last) {
        smem.k_pipe.consumer_wait(kst);
        release(smem.k_pipe, kst.index);
        kst.advance<Stages>();
        smem.v_pipe.consumer_wait(vst);
        release(smem.v_pipe, vst.index);
        vst.advance<Stages>();
        take_turn();
        pass_turn(last);
      };
      // Persistent: every consumer warp waits for the tile's Q and frees it after the tile (once its
      // O, staged there, is stored), whether or not its rows read it, so no warp frees a Q buffer
      // the producer has not yet filled.
      if constexpr (Config::Persistent) smem.q_pipe.consumer_wait(qst);
      for (int n = blocks.end - 1; n >= (any ? mine.end : blocks.begin); --n) pass_block(false);
      if (!any) {
        take_turn();
        pass_turn(true);
      } else {
        if constexpr (!Config::Persistent) mbarrier_wait(&smem.q_full, 0);
        float s[BlkN / 2];
        std::uint32_t pa[BlkN / 16][4];
        float corr[2];
        int n = mine.end - 1;
        smem.k_pipe.consumer_wait(kst);
        take_turn();
        wgmma_fence();
        qk(s, kst.index);
        wgmma_commit_group();
        pass_turn(false);
        wgmma_wait_group<0>();
        wgmma_fence_operand(s);
        release(smem.k_pipe, kst.index);
        kst.advance<Stages>();
        softmax(s, n, corr);  // O is still zero: nothing to rescale
        to_p(s, pa);

        for (--n; n >= mine.begin; --n) {
          smem.k_pipe.consumer_wait(kst);
          smem.v_pipe.consumer_wait(vst);
          take_turn();
          wgmma_fence();
          qk(s, kst.index);
          wgmma_commit_group();
          pv(pa, vst.index);
          wgmma_commit_group();
          pass_turn(false);
          wgmma_wait_group<1>();  // S' is in; P V may still run
          wgmma_fence_operand(s);
          release(smem.k_pipe, kst.index);
          kst.advance<Stages>();
          softmax(s, n, corr);
          wgmma_wait_group<0>();
          wgmma_fence_operand(o);
          // P stays put until its wgmma retired
          detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkN / 4]>(pa));
          release(smem.v_pipe, vst.index);
          vst.advance<Stages>();
          rescale_o(corr);
          to_p(s, pa);
        }
        smem.v_pipe.consumer_wait(vst);
        take_turn();
        pv(pa, vst.index);
        wgmma_commit_group();
        pass_turn(mine.begin == blocks.begin);
        wgmma_wait_group<0>();
        wgmma_fence_operand(o);
        detail::wgmma_fence_operand(reinterpret_cast<std::uint32_t (&)[BlkN / 4]>(pa));
        release(smem.v_pipe, vst.index);
        vst.advance<Stages>();  // (the tile's blocks below this warpgroup's still follow)
      }
      for (int n = any ? mine.begin - 1 : -1; n >= blocks.begin; --n) pass_block(n == blocks.begin);
    }

    // Normalise (O /= row sum) and store LSE from registers, by the first thread of each quad.
    float inv[2];
    TESSEL_UNROLL
    for (int h = 0; h < 2; ++h) {
      float const sum = detail::quad_sum(row_sum[h]);
      inv[h] = sum > 0.0f ? 1.0f / sum : 0.0f;
      int const row = m0 + row_in_tile + 8 * h;
      if (row < a.seqlen_q && a.lse && lane % 4 == 0)
        a.lse[std::int64_t(batch) * a.lse_batch_stride + std::int64_t(head) * a.lse_head_stride + row] =
            sum > 0.0f ? row_max[h] * a.lse_scale + logf(sum) : -INFINITY;
    }
    // O through shared memory by TMA: the warpgroup writes its 64 rows over its own 64 rows of the
    // Q tile -- which only its own S GEMMs read, so they are free once those have retired -- in the
    // tile's 128-byte swizzled chunks of 64 columns (D_v <= D: the chunks fit), and one thread
    // stores them, a 64 x 64 box per chunk. Wider and fewer stores than from registers (each
    // thread's are 4 bytes, a row's spread over a quad), and the tensor map clips rows past S_q.
    // Persistent: a tile without keys holds no Q stage (the producer skips it, and may be loading a
    // later tile's Q into the one this tile would name), so its O (zeros) goes from registers.
    bool const tile_has_keys = blocks.end > blocks.begin;
    if (!Config::Persistent || tile_has_keys) {
      int const wg_m0 = m0 + 64 * wg;
      Element* const staging = smem.q + (Config::Persistent ? qst.index : 0) * BlkM * D + 64 * wg * Cols;
      if (wg_m0 < a.seqlen_q) {  // (a warpgroup wholly past S_q stores nothing)
        // A warpgroup whose rows see no key has not waited for the Q tile (one CTA per tile; a
        // persistent one waited for its stage above): its load must land before the writes below.
        // A tile without keys loads no Q, so there is nothing to wait for.
        if constexpr (!Config::Persistent)
          if (tile_has_keys) mbarrier_wait(&smem.q_full, 0);
        named_barrier_sync(Config::StagingBarrier + wg, 128);  // every warp's S GEMMs have retired: Q's rows are free
        TESSEL_UNROLL
        for (int h = 0; h < 2; ++h) {
          int const row = row_in_tile - 64 * wg + 8 * h;
          TESSEL_UNROLL
          for (int j = 0; j < Dv / 8; ++j) {
            char* const chunk = reinterpret_cast<char*>(staging + (8 * j / Cols) * BlkM * Cols);
            *reinterpret_cast<std::uint32_t*>(chunk + detail::sw128_offset(row, (8 * j) % Cols + col_in_block)) =
                detail::attention_pack2<Element>(o[4 * j + 2 * h] * inv[h], o[4 * j + 2 * h + 1] * inv[h]);
          }
        }
        fence_proxy_async_shared();
        named_barrier_sync(Config::StagingBarrier + wg, 128);
        if (t == 0) {
          TESSEL_UNROLL
          for (int c = 0; c < Dv / Cols; ++c)
            SM90_TMA_STORE::copy(&p.tma_o, staging + c * BlkM * Cols, {c * Cols, wg_m0, head, batch});
          tma_store_commit();
          // One CTA per tile: the writes are complete before the CTA exits (as the backward's
          // epilogue). Persistent: the store has read the staging before the Q stage is freed for the
          // producer to refill; the writes are waited for after the CTA's last tile.
          if constexpr (Config::Persistent)
            tma_store_wait_read<0>();
          else
            tma_store_wait<0>();
        }
      }
      // Persistent: each consumer warp frees the tile's Q stage; warp 0's lane 0 is the thread
      // that stored, so the stage is free only once the store has read this warpgroup's rows.
      if constexpr (Config::Persistent) {
        if (lane == 0) smem.q_pipe.template consumer_release<1>(qst.index);
        qst.advance<2>();
      }
    } else {
      TESSEL_UNROLL
      for (int h = 0; h < 2; ++h) {
        int const row = m0 + row_in_tile + 8 * h;
        if (row < a.seqlen_q) {
          Element* const o_row = static_cast<Element*>(a.o) + std::int64_t(batch) * a.o_batch_stride +
                                 std::int64_t(row) * a.o_row_stride + std::int64_t(head) * a.o_head_stride;
          TESSEL_UNROLL
          for (int j = 0; j < Dv / 8; ++j)
            *reinterpret_cast<std::uint32_t*>(o_row + 8 * j + col_in_block) =
                detail::attention_pack2<Element>(o[4 * j + 2 * h] * inv[h], o[4 * j + 2 * h + 1] * inv[h]);
        }
      }
    }
    if (!Config::Persistent || !next_tile(true)) break;
  }
  if constexpr (Config::Persistent)
    if (tid >= 128 && tid % 128 == 0) tma_store_wait<0>();  // each warpgroup's storing thread
#else
  (void)p;
#endif
}

}  // namespace tessel::kernel
