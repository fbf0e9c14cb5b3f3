// tessel/gemm/kernel/sm90_grouped_gemm.hpp -- the sm_90a grouped GEMM: G problems with their own
// row counts, sharing N and K, in one persistent launch (mixture-of-experts layers).
//
// sm90_grouped_gemm_kernel<Config>(Sm90GroupedGemmParams) (kernel/sm90_grouped_gemm_params.hpp),
// 384 threads, one CTA per SM:
//   start     every CTA reads the G row offsets itself (no host sync: they may come from a
//             router kernel just before), clamps them into groups of rows, counts each group's
//             tiles and prefix-sums the counts in shared memory (sm90_grouped_prepare); the
//             grid then walks linear tile ids t = blockIdx.x, + gridDim.x, ... and each id names
//             (group, tile row, tile column) by a binary search over the sums (schedule/grouped.hpp).
//   warpgroup 0, the producer (registers lowered): one thread issues, per k-tile, the TMA copies
//             of the A tile (128 rows from the group's start + 128 m; rows past the group's end
//             are other groups' rows or TMA's zero fill, never stored) and of group g's B tile
//             (batch coordinate g of a (K, N, G) map, or (N, K, G) boxes for an N-contiguous B)
//             into the stage ring (pipeline/sm90_pipeline.hpp, collective/sm90_operand_tile.hpp).
//   warpgroups 1 and 2, the consumers: 64 rows of the tile each, one commit group of
//             wgmma m64 x TileN per k-tile with one in flight (the cooperative kernel's mainloop,
//             kernel/sm90_gemm_warpspecialized.hpp), then the epilogue: alpha * acc (+ beta * C)
//             stored from registers with row tests against the group's end and column tests
//             against N, or -- a 16-bit D with C unread, the tile wholly inside its group --
//             staged in shared memory (sm90_stage_accumulators) and stored by TMA, overlapping
//             the next tile's mainloop.
// Both roles derive each tile from the same shared-memory sums, so they walk the same sequence
// and the ring's phases stay in step without unit notes.
//
// Why a kernel of its own rather than a hook in the cooperative kernel: that kernel's walk
// (kernel/sm90_gemm_cta.hpp's units over Sm90GemmParams: clusters, split-K, Stream-K, edge maps)
// is woven through its producer and epilogue; this one composes the same pieces -- operand tiles,
// the pipeline, the wgmma ops, the staging epilogue -- around a different walk, as the ping-pong
// kernel does.
#pragma once

#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_epilogue.hpp>
#include <tessel/gemm/kernel/sm90_grouped_gemm_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/schedule/grouped.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// One configuration: 16-bit input type, tile width, pipeline depth. 128-row tiles (two consumer
// warpgroups), no clusters: a group's tile rows are not aligned to cluster pairs.
template <class Element_, int TileN_, int Stages_>
struct Sm90GroupedGemmConfig {
  using Element = Element_;
  static constexpr int Consumers = 2;
  static constexpr int TileM = 64 * Consumers;
  static constexpr int TileN = TileN_;
  static constexpr int TileK = 128 / int(sizeof(Element));  // one 128-byte swizzle row
  static constexpr int Stages = Stages_;
  static constexpr int Threads = 128 * (1 + Consumers);
  using Mma = typename Sm90WgmmaOf<Element, TileN>::Op;
  static constexpr int Accumulators = TileN / 2;  // fp32 registers per consumer thread
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;  // 40 * 128 + 232 * 256 <= 65536

  static_assert(sizeof(Element) == 2, "Sm90GroupedGemmConfig: bf16 or fp16 inputs (the MN-major B path needs wgmma's transpose bit)");
  static_assert(TileN % 64 == 0, "Sm90GroupedGemmConfig: the TMA-store epilogue writes 64-column boxes; TileN must be a multiple of 64");
  static_assert(Stages >= 2, "Sm90GroupedGemmConfig: the TMA pipeline needs at least 2 stages; raise Stages");

  struct SharedStorage {
    alignas(1024) Element a[Stages][TileM * TileK];    // (BLK_M,BLK_K) per stage, 128-byte swizzle
    alignas(1024) Element b[Stages][TileN * TileK];    // (BLK_N,BLK_K) per stage, 128-byte swizzle
    alignas(1024) std::uint16_t d[Consumers][64 * TileN];  // (64,BLK_N) of a 16-bit D per consumer, as 64x64 boxes
    TmaPipeline<Stages> pipeline;
    long long tile_ends[kSm90GroupedMaxGroups];  // inclusive prefix sum of the groups' tile counts
    int row_start[kSm90GroupedMaxGroups];        // group g's rows [row_start[g], row_end[g])
    int row_end[kSm90GroupedMaxGroups];
  };
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;  // + room to align to 1024
  static_assert(SmemBytes <= 232448, "Sm90GroupedGemmConfig: the stages do not fit the 227 KiB of shared memory; lower Stages");
};

namespace detail {

// Every thread of the CTA: each group's rows (clamped offsets) and tile count into shared memory,
// then warp 0 turns the counts into their inclusive prefix sum (each lane sums a contiguous chunk,
// a shuffle scan over the 32 chunk totals, each lane writes its chunk's running sums).
template <class Config>
TESSEL_DEVICE void sm90_grouped_prepare(Sm90GroupedGemmParams const& p, typename Config::SharedStorage& s, int thread) {
  for (int g = thread; g < p.groups; g += Config::Threads) {
    GroupedRows const r = grouped_rows(p.offsets, g, p.total_m);
    s.row_start[g] = int(r.start);
    s.row_end[g] = int(r.end);
    s.tile_ends[g] = grouped_tiles(r.end - r.start, Config::TileM, p.n_tiles);
  }
  __syncthreads();
  if (thread < 32) {
    int const per = (p.groups + 31) / 32;
    int const lo = thread * per < p.groups ? thread * per : p.groups;
    int const hi = lo + per < p.groups ? lo + per : p.groups;
    long long sum = 0;
    for (int i = lo; i < hi; ++i) sum += s.tile_ends[i];
    long long inclusive = sum;
    TESSEL_UNROLL
    for (int step = 1; step < 32; step *= 2) {
      long long const below = __shfl_up_sync(0xffffffffu, inclusive, step);
      if (thread >= step) inclusive += below;
    }
    long long running = inclusive - sum;
    for (int i = lo; i < hi; ++i) {
      running += s.tile_ends[i];
      s.tile_ends[i] = running;
    }
  }
  __syncthreads();
}

// D = alpha * acc (+ beta * C) from registers for this thread's rows row0, row0 + 8 (those below
// row_end, the group's end) and column pairs col0 + 8j (those below N): the accumulator map of
// wgmma_accumulator_coord, as sm90_epilogue_registers stores it.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_grouped_store_registers(Sm90GroupedGemmParams const& p, float const (&acc)[TileN / 2], int row0,
                                                int col0, int row_end) {
  Out* const d = static_cast<Out*>(p.d);
  Out const* const c = p.beta != 0.0f ? static_cast<Out const*>(p.c) : nullptr;
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    int const row = row0 + 8 * h;
    if (row >= row_end) continue;
    sm90_store_accumulator_row<Out, TileN>(acc, h, d + std::int64_t(row) * p.ldd + col0,
                                           c ? c + std::int64_t(row) * p.ldc + col0 : nullptr, p.beta, col0, p.n, p.d_pairs);
  }
}

// A consumer's 64 x TileN block of a 16-bit D (rows m0.., columns n0..) through its staging buffer
// and TMA stores, once the previous tile's stores have read the buffer.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_grouped_store_staged(Sm90GroupedGemmParams const& p, float const (&acc)[TileN / 2],
                                             std::uint16_t* staging, int wg_thread, int consumer, int m0, int n0) {
  char* const base = reinterpret_cast<char*>(staging);
  if (wg_thread == 0) tma_store_wait_read<0>();
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  sm90_stage_accumulators<Out, TileN>(acc, base, wg_thread);
  fence_proxy_async_shared();  // the writes above are visible to the TMA unit after the barrier
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  if (wg_thread == 0) {
    TESSEL_UNROLL
    for (int box = 0; box < TileN / 64; ++box) SM90_TMA_STORE::copy(&p.tma_d, base + box * 8192, {n0 + 64 * box, m0, 0});
    tma_store_commit();
  }
}

}  // namespace detail

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_grouped_gemm_kernel(__grid_constant__ Sm90GroupedGemmParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  using SharedStorage = typename Config::SharedStorage;
  constexpr int TileM = Config::TileM, TileN = Config::TileN, TileK = Config::TileK, Stages = Config::Stages;
  using OperandTile = collective::Sm90OperandTile<Element, TileK>;

  extern __shared__ char smem_raw[];
  // (The warpgroup index through lane 0's shuffle: uniform registers for what derives from it.)
  int const warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0), wg_thread = int(threadIdx.x) % 128;
  std::uint32_t const misalign = tessel::detail::smem_address(smem_raw) & 1023u;
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(smem_raw + ((1024u - misalign) & 1023u));
  if (threadIdx.x == 0) {
    s.pipeline.init(Config::Consumers * 4);  // every consumer warp frees a stage
    tma_prefetch_descriptor(&p.tma_a);
    tma_prefetch_descriptor(&p.tma_b);
  }
  grid_dependency_wait();  // the offsets may be the previous kernel's output
  detail::sm90_grouped_prepare<Config>(p, s, int(threadIdx.x));  // (its barriers also publish the pipeline's)
  long long const tiles = p.groups > 0 ? s.tile_ends[p.groups - 1] : 0;

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (wg_thread == 0) {
      PipelineState st;
      for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        GroupedTile const w = grouped_tile_of(t, s.tile_ends, p.groups, p.n_tiles);
        int const row0 = s.row_start[w.group] + w.m_tile * TileM, n0 = w.n_tile * TileN;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          // Rows or columns past A's, B's or K's end are zero-filled; the whole box counts.
          std::uint64_t* const full = s.pipeline.producer_acquire(st, Config::StageBytes);
          OperandTile::template load<TileM, false, false>(&p.tma_a, full, s.a[st.index], 0, false, kt * TileK, row0, 0);
          OperandTile::template load<TileN, false, true>(&p.tma_b, full, s.b[st.index], 0, p.b_mn_major, kt * TileK, n0,
                                                         w.group);
          st.advance<Stages>();
        }
      }
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    warpgroup_reg_alloc<Config::ConsumerRegisters>();
    int const consumer = warpgroup - 1;
    int const lane = wg_thread % 32;
    PipelineState st;
    // Zero once: with K = 0 (p.k_tiles == 0; the host then passes alpha = 1) no wgmma ever writes
    // them and every tile stores beta * C. (Zeroing them per tile in that branch instead made
    // ptxas serialize the wgmmas, C7515.)
    float acc[Config::Accumulators];
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
      GroupedTile const w = grouped_tile_of(t, s.tile_ends, p.groups, p.n_tiles);
      int const tile_row0 = s.row_start[w.group] + w.m_tile * TileM, row_end = s.row_end[w.group];
      int const n0 = w.n_tile * TileN;
      if (tile_row0 + 64 * consumer >= row_end) {
        // Every row of this consumer's half is past its group's end (a group's last tile row, at
        // most 64 rows left): free each stage as it lands and store nothing, so the other
        // consumer's wgmmas have the tensor cores to themselves.
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          s.pipeline.consumer_wait(st);
          __syncwarp();  // every lane past the wait before the stage can be refilled
          if (lane == 0) s.pipeline.template consumer_release<1>(st.index);
          st.advance<Stages>();
        }
        continue;
      }

      // Mainloop: one commit group per k-tile, the previous one retired before its stage is
      // freed; one copy of the loop per B major-ness (a uniform branch per tile), joined before
      // the last wait (a wait_group 0 closing each copy makes ptxas serialize the wgmmas, C7515).
      auto const k_loop = [&](auto b_mn_major) TESSEL_ALWAYS_INLINE {
        constexpr int TransB = decltype(b_mn_major)::value;
        auto mma = make_tiled_mma(typename Sm90WgmmaOf<Element, TileN>::template Transposed<0, TransB>{});  // 64 x TileN x K
        Tensor tCrC = make_tensor(&acc[0], Layout<Shape<Int<Config::Accumulators>, _1, _1>>{});          // (MMA,MMA_M,MMA_N)
        int previous = -1;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          s.pipeline.consumer_wait(st);
          Tensor tCrA = OperandTile::template fragment_A<0, 64>(mma, s.a[st.index] + consumer * 64 * TileK);  // (_1,_1,MMA_K)
          Tensor tCrB = OperandTile::template fragment_B<TransB, TileN>(mma, s.b[st.index]);                 // (_1,_1,MMA_K)
          wgmma_fence_operand(acc);
          wgmma_fence();
          mma.accumulate_ = kt > 0 ? GMMA::ScaleOut::One : GMMA::ScaleOut::Zero;
          TESSEL_UNROLL
          for (int kk = 0; kk < size<2>(tCrA); ++kk) {
            gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
            mma.accumulate_ = GMMA::ScaleOut::One;
          }
          wgmma_commit_group();
          wgmma_fence_operand(acc);
          wgmma_wait_group<1>();
          if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<1>(previous);
          previous = st.index;
          st.advance<Stages>();
        }
        return previous;
      };
      int const previous = p.b_mn_major ? k_loop(std::integral_constant<int, 1>{}) : k_loop(std::integral_constant<int, 0>{});
      wgmma_wait_group<0>();
      wgmma_fence_operand(acc);
      if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<1>(previous);

      // Epilogue, on alpha * acc. The thread index is laundered so that the addresses derived from
      // it are computed here, per tile, not hoisted and kept live through the mainloop (spills).
      if (p.alpha != 1.0f) {
        TESSEL_UNROLL
        for (int i = 0; i < Config::Accumulators; ++i) acc[i] *= p.alpha;
      }
      int et = wg_thread;
      asm volatile("" : "+r"(et));
      int const m0 = tile_row0 + 64 * consumer;  // this consumer's first row
      if (p.tma_store && tile_row0 + TileM <= row_end) {  // uniform across the CTA
        if (p.out_f16) {
          detail::sm90_grouped_store_staged<half_t, TileN>(p, acc, s.d[consumer], et, consumer, m0, n0);
        } else {
          detail::sm90_grouped_store_staged<bfloat16_t, TileN>(p, acc, s.d[consumer], et, consumer, m0, n0);
        }
      } else {
        // Thread (warp, lane) holds rows 16 warp + lane / 4 and + 8 of its 64, column pairs 2 (lane % 4) + 8j.
        int const row0 = m0 + (et / 32) * 16 + (et % 32) / 4, col0 = n0 + 2 * (et % 4);
        if (p.out_f32) {
          detail::sm90_grouped_store_registers<float, TileN>(p, acc, row0, col0, row_end);
        } else if (p.out_f16) {
          detail::sm90_grouped_store_registers<half_t, TileN>(p, acc, row0, col0, row_end);
        } else {
          detail::sm90_grouped_store_registers<bfloat16_t, TileN>(p, acc, row0, col0, row_end);
        }
      }
    }
    if (p.tma_store && wg_thread == 0) tma_store_wait<0>();  // the staging buffer outlives its stores
  }
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_grouped_gemm_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
