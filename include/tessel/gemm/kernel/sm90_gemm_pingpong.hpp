// tessel/gemm/kernel/sm90_gemm_pingpong.hpp -- the sm_90a GEMM with the ping-pong schedule: TMA +
// wgmma, warp-specialized, persistent, the two consumer warpgroups taking turns on whole tiles.
//
// sm90_gemm_pingpong_kernel<Config>(Sm90GemmParams) (kernel/sm90_gemm_params.hpp: the parameters,
// TMA descriptors and host adapter of the cooperative kernel, kernel/sm90_gemm_warpspecialized.hpp),
// 384 threads:
//   warpgroup 0, the producer: registers lowered (setmaxnreg); one thread walks the CTA's tiles in
//       order and fills the one ring of stages with their k-tiles (kernel/sm90_gemm_producer.hpp;
//       B multicast in 2x1 clusters), running ahead across tiles. Its other warps idle.
//   warpgroups 1 and 2, the consumers: the CTA's tiles alternate between them -- local tiles 0, 2,
//       4, ... (in the scheduler's walk) are consumer 0's, 1, 3, 5, ... consumer 1's -- and each
//       computes a whole TileM x TileN tile: TileM / 64 wgmma m64 x TileN x 16 per 16-deep slice
//       (128 x 128: two m64n128k16, on the two 64-row halves of the A tile, sharing the B slice),
//       128 fp32 accumulators per thread, one k-tile of wgmmas kept in flight; then its epilogue
//       writes the tile: alpha * acc staged in a swizzled buffer of its own and TMA-stored (a
//       16-bit D with C unread and 16-byte aligned rows), else straight from registers
//       (kernel/sm90_gemm_epilogue.hpp). A consumer skips the other's k-tiles in the ring.
//   An order barrier makes the mainloops alternate strictly: consumer 1 starts tile 1's mainloop
//   when consumer 0 has issued the last k-tile of tile 0, consumer 0 starts tile 2's when
//   consumer 1 has issued tile 1's, and so on -- so one consumer's epilogue (and the drain of its
//   last wgmmas) runs while the other's wgmmas keep the tensor cores busy.
// What it is for: the cooperative kernel's two consumers share one tile, so the tensor cores idle
// during its epilogue (short with TMA stores, longer from registers: C read, fp32 D) -- here the
// epilogue hides behind the other tile's mainloop. The price: a 128 x 128 tile reads more operand
// bytes per MAC than the cooperative 128 x 256 (1/32 against 3/128 byte per MAC without
// multicast), hence the 2x1 clusters (3/128, as the cooperative kernel without clusters).
#pragma once

#include <tessel/algorithm/gemm.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_epilogue.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/gemm/kernel/sm90_gemm_producer.hpp>
#include <tessel/gemm/kernel/sm90_gemm_prologue.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// The schedule tag: a configuration whose Schedule is Sm90PingpongSchedule runs
// sm90_gemm_pingpong_kernel (src/gemm/sm90_launch.cuh picks the kernel by it).
struct Sm90PingpongSchedule {};

template <class Config>
concept Sm90PingpongConfiguration = std::is_same_v<typename Config::Schedule, Sm90PingpongSchedule>;

// The wgmma of one 64-row block of a consumer's tile: m64 x TileN x 16, 16-bit K-major A and B.
template <class Element, int TileN>
using Sm90PingpongMma = std::conditional_t<
    std::is_same_v<Element, half_t>,
    std::conditional_t<TileN == 256, SM90_64x256x16_F32F16F16_SS<0, 0>, SM90_64x128x16_F32F16F16_SS<0, 0>>,
    std::conditional_t<TileN == 256, SM90_64x256x16_F32BF16BF16_SS<0, 0>, SM90_64x128x16_F32BF16BF16_SS<0, 0>>>;

// One ping-pong configuration: the 16-bit input type, a consumer's tile (TileM x TileN: 128 x 128,
// two m64n128 row blocks -- 32 KiB of operands per 64-deep k-tile for 2^20 MACs -- or 64 x 256, one
// m64n256 -- 40 KiB for the same MACs), the pipeline depth, and ClusterM tile rows sharing each B
// tile by multicast (1 or 2).
template <class Element_, int TileM_, int TileN_, int Stages_, int ClusterM_ = 1>
struct Sm90PingpongConfig {
  using Schedule = Sm90PingpongSchedule;
  using Element = Element_;
  static constexpr int Consumers = 2;  // consumer warpgroups, each on a tile of its own
  static constexpr int TileM = TileM_, TileN = TileN_;
  static constexpr int BlocksM = TileM / 64;  // m64 row blocks (wgmma accumulator tiles) of a consumer's tile
  static constexpr int TileK = 128 / int(sizeof(Element));  // one 128-byte swizzle row
  static constexpr int Stages = Stages_;
  static constexpr int ClusterM = ClusterM_, ClusterN = 1;
  static constexpr int ClusterSize = ClusterM;
  static constexpr int EpilogueSlabs = 1;  // the staging buffer holds a whole tile (Sm90Instance reports it)
  static constexpr int Threads = 128 * (1 + Consumers);
  using Mma = Sm90PingpongMma<Element, TileN>;
  static constexpr int BlockAccumulators = TileN / 2;  // fp32 registers per thread per row block
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
  static constexpr bool UnitNotes = false;  // the consumers walk their own tiles (sm90_produce_tiles)
  // setmaxnreg: 40 * 128 + 232 * 256 = 64512 <= 65536.
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;

  static_assert(std::is_same_v<Element, bfloat16_t> || std::is_same_v<Element, half_t>,
                "Sm90PingpongConfig: the ping-pong kernel takes bfloat16_t or half_t inputs");
  static_assert((TileM == 128 && TileN == 128) || (TileM == 64 && TileN == 256),
                "Sm90PingpongConfig: a consumer's tile is 128 x 128 (two m64n128k16 per slice) or 64 x 256 (one "
                "m64n256k16): 128 fp32 accumulators per thread, what fits in 232 registers beside the mainloop");
  static_assert(Stages >= 2, "Sm90PingpongConfig: the TMA pipeline needs at least 2 stages; raise Stages");
  static_assert(ClusterM == 1 || ClusterM == 2,
                "Sm90PingpongConfig: ClusterM (tile rows sharing one B tile by multicast) must be 1 or 2");

  struct SharedStorage {
    alignas(1024) Element a[Stages][TileM * TileK];  // (BLK_M,BLK_K) per stage, 128-byte swizzle
    alignas(1024) Element b[Stages][TileN * TileK];  // (BLK_N,BLK_K) per stage, 128-byte swizzle
    // Per consumer, its tile of a 16-bit D: BlocksM blocks of (64,TileN), each as TileN / 64 boxes
    // of 64 x 64 in the 128-byte swizzle (epilogue/sm90_epilogue_staging.hpp).
    alignas(1024) std::uint16_t d[Consumers][TileM * TileN];
    TmaPipeline<Stages> pipeline;
  };
  // The dynamic shared memory asked for: the storage plus room to align it to 1024 bytes.
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;
  static_assert(SmemBytes <= 232448, "Sm90PingpongConfig: the stages do not fit the 227 KiB of shared memory; lower Stages");
};

namespace detail {

// The TMA-store epilogue of one consumer's tile (a 16-bit D with C unread, 16-byte aligned rows):
// once its previous tile's stores have read the buffer (bulk groups belong to the thread that
// committed them: thread 0 waits, the barrier tells the others), the warpgroup stages alpha * acc,
// row block by row block, fences the async proxy, and thread 0 issues one 64 x 64 box store per
// block and 64 columns; rows and columns outside D are clipped by the unit. The stores drain while
// the other consumer's mainloop runs.
template <class Out, class Config>
TESSEL_DEVICE void sm90_pingpong_store_tile(Sm90GemmParams const& p, float const (&acc)[Config::BlocksM][Config::BlockAccumulators],
                                            std::uint16_t* staging, int wg_thread, int consumer, int m0, int n0, int batch) {
  constexpr int TileN = Config::TileN, BlockBytes = 64 * TileN * 2;
  char* const base = reinterpret_cast<char*>(staging);
  if (wg_thread == 0) tma_store_wait_read<0>();
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  TESSEL_UNROLL
  for (int b = 0; b < Config::BlocksM; ++b) sm90_stage_accumulators<Out, TileN>(acc[b], base + b * BlockBytes, wg_thread);
  fence_proxy_async_shared();  // the writes above are visible to the TMA unit after the barrier
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  if (wg_thread == 0) {
    TESSEL_UNROLL
    for (int b = 0; b < Config::BlocksM; ++b) {
      TESSEL_UNROLL
      for (int box = 0; box < TileN / 64; ++box)
        SM90_TMA_STORE::copy(&p.tma_d, base + b * BlockBytes + box * 8192, {n0 + 64 * box, m0 + 64 * b, batch});
    }
    tma_store_commit();
  }
}

}  // namespace detail

// Why the schedule cannot deadlock and every wait sees the phase it means. L[0], L[1], ... are
// the CTA's tiles in the scheduler's walk (any count: 0, 1, odd, even); consumer c owns L[i] for
// i % 2 == c.
//  * The ring. The producer fills one stage per k-tile, L[0]'s k-tiles first: the q-th k-tile of
//    the walk goes to stage q % Stages in round q / Stages. Each consumer's PipelineState walks the
//    same sequence -- advance() per k-tile of its own tiles, skip() over each of the other's tiles
//    (its k-tile count: the same K slice arithmetic, sm90_k_range) -- so at its own k-tile q it
//    holds q's stage and round parity, as the producer did.
//  * full[s] at parity r % 2 means round r only if round r - 1 of stage s has completed (else the
//    barrier's last completed phase has parity r % 2 too and the wait returns at once); that round
//    is k-tile q - Stages, earlier in the walk. Every earlier k-tile has been waited on when a
//    consumer starts a tile: its own earlier tiles by itself, the other's by the other, which
//    waited on the last k-tile of its previous tile before it arrived at the order barrier this
//    consumer passed. Round r + 1 cannot complete before this consumer frees round r (empty[s]).
//  * empty[s] counts the 4 warps of the one consumer that reads the stage, in each CTA of the
//    cluster (each warp arrives on every CTA's barrier: a multicast writes all of them). The
//    producer's parity waits are as in the cooperative kernel (pipeline/sm90_pipeline.hpp).
//  * Order barriers (named barriers of 256 threads, sm90_order_barrier): consumer c waits at
//    order(c) before each of its tiles except L[0]; the owner of L[i] arrives at the other's
//    order barrier after waiting on (and issuing) L[i]'s last k-tile, if L[i + 1] exists. So every
//    use is one arrival of 128 threads and one wait of 128: the first phase is consumer 1's wait
//    before L[1] for consumer 0's arrival after L[0]; L[0] waits for nobody; a consumer whose
//    tiles ran out is never waited for; no arrival is left pending at exit. Between two arrivals
//    at order(other) a consumer waits at order(c), which the other arrives at only after passing
//    order(other): a barrier never holds two phases' arrivals.
//  * No cycle: before it can block at order(c) a consumer has freed every stage of its tile (the
//    last after wgmma_wait_group<0>); the producer waits only for such frees, and the other
//    consumer's tile needs only stages filled after them.
//  * Staging buffers: one per consumer; the thread that committed a tile's TMA stores waits until
//    they have read the buffer before the next tile of that consumer restages it, and for their
//    writes before the CTA exits.
//  * Clusters: every CTA of a cluster walks the same cluster tiles, so stage s holds the same
//    k-tile, for the same consumer, in each; no CTA exits before the final cluster barrier, which
//    each comes to only after its consumers' last remote arrivals.
// This is the only function that reads threadIdx and blockIdx.
template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_gemm_pingpong_kernel(__grid_constant__ Sm90GemmParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Mma = typename Config::Mma;
  using SharedStorage = typename Config::SharedStorage;
  constexpr int TileN = Config::TileN, TileK = Config::TileK, BlocksM = Config::BlocksM;
  constexpr int Stages = Config::Stages, ClusterSize = Config::ClusterSize;
  using OperandTile = collective::Sm90OperandTile<typename Config::Element, TileK>;  // its stage tiles are K-major

  extern __shared__ char smem_raw[];
  // (Shuffled from lane 0 so that ptxas keeps what derives from it warp-uniform: sm90_gemm_kernel.)
  int const warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0), wg_thread = int(threadIdx.x) % 128;
  int const cta_rank = ClusterSize > 1 ? int(cluster_cta_rank()) : 0;
  // The 4 warps of the consumer that reads a stage free it, in every CTA it is written in.
  SharedStorage& s = detail::sm90_cta_prologue<SharedStorage, ClusterSize>(smem_raw, p, int(threadIdx.x), 4 * ClusterSize);

  PersistentTileScheduler const& sched = p.scheduler;
  int const cluster = int(blockIdx.x) / ClusterSize;

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (wg_thread == 0) detail::sm90_produce_tiles<Config>(p, s, cta_rank, cluster);
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    warpgroup_reg_alloc<Config::ConsumerRegisters>();
    int const consumer = warpgroup - 1;
    int const lane = wg_thread % 32;
    PipelineState st;
    float acc[BlocksM][Config::BlockAccumulators];
    TESSEL_UNROLL
    for (int b = 0; b < BlocksM; ++b) {
      TESSEL_UNROLL
      for (int i = 0; i < Config::BlockAccumulators; ++i) acc[b][i] = 0.0f;
    }

    long long const first = sched.first_tile(cluster);
    bool mine = consumer == 0;  // L[0] is consumer 0's
    for (long long t = first; sched.is_valid(t); t = sched.next_tile(t), mine = !mine) {
      GemmCoord const tile = sched.tile_offset(t);
      int const slice = int(tile.k()), batch = slice % p.batch;
      detail::Sm90KRange const k = detail::sm90_k_range(p.k_tiles, p.splits, slice / p.batch);
      if (!mine) {  // the other consumer's tile: its k-tiles pass through the ring unread by this one
        st.skip<Stages>(k.end - k.begin);
        continue;
      }
      if (t != first) named_barrier_meet(detail::sm90_order_barrier(consumer), detail::kSm90OrderThreads);
      detail::Sm90TileOrigin<Config> const at(tile, cta_rank);
      int const m0 = at.m0, n0 = at.n0;

      // Mainloop: one commit group per k-tile, the previous one retired before its stage is freed.
      // This consumer issues the whole tile: one wgmma per 64-row block of A (MMA_M = BlocksM).
      auto mma = make_tiled_mma(Mma{});  // one warpgroup: 64 x TileN x Mma::K
      Tensor tCrC = make_tensor(&acc[0][0], Layout<Shape<Int<Config::BlockAccumulators>, Int<BlocksM>, _1>>{});  // (MMA,MMA_M,MMA_N)
      int previous = -1;
      for (int kt = k.begin; kt < k.end; ++kt) {
        s.pipeline.consumer_wait(st);
        Tensor tCrA = OperandTile::template fragment_A<0, BlocksM * 64>(mma, s.a[st.index]);  // (_1,BlocksM,MMA_K)
        Tensor tCrB = OperandTile::template fragment_B<0, TileN>(mma, s.b[st.index]);         // (_1,_1,MMA_K)
        TESSEL_UNROLL
        for (int b = 0; b < BlocksM; ++b) wgmma_fence_operand(acc[b]);
        wgmma_fence();
        mma.accumulate_ = kt > k.begin ? GMMA::ScaleOut::One : GMMA::ScaleOut::Zero;
        TESSEL_UNROLL
        for (int kk = 0; kk < size<2>(tCrA); ++kk) {
          gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);  // every block of A
          mma.accumulate_ = GMMA::ScaleOut::One;
        }
        wgmma_commit_group();
        TESSEL_UNROLL
        for (int b = 0; b < BlocksM; ++b) wgmma_fence_operand(acc[b]);
        wgmma_wait_group<1>();
        if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);
        previous = st.index;
        st.advance<Stages>();
      }
      // Every k-tile of this tile has been waited on and issued: the other consumer may start the
      // next tile's mainloop (its wgmmas queue behind this tile's last ones).
      if (sched.is_valid(sched.next_tile(t)))
        named_barrier_arrive(detail::sm90_order_barrier(1 - consumer), detail::kSm90OrderThreads);
      wgmma_wait_group<0>();
      TESSEL_UNROLL
      for (int b = 0; b < BlocksM; ++b) wgmma_fence_operand(acc[b]);
      if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);

      // Epilogue, on alpha * acc, while the other consumer's mainloop runs. The thread index is
      // laundered first so that the addresses derived from it are computed here, per tile, not
      // hoisted out of the tile loop and kept live beside the accumulators (see the cooperative
      // kernel: that spilled in its mainloop).
      TESSEL_UNROLL
      for (int b = 0; b < BlocksM; ++b) {
        TESSEL_UNROLL
        for (int i = 0; i < Config::BlockAccumulators; ++i) acc[b][i] *= p.alpha;
      }
      int et = wg_thread;
      asm volatile("" : "+r"(et));
      if (p.fusion.active()) {  // uniform: the fused epilogue on acc, C joining it (sm90_fuse_block)
        std::int64_t const row0 = std::int64_t(m0) + (et / 32) * 16 + (et % 32) / 4;
        TESSEL_UNROLL
        for (int b = 0; b < BlocksM; ++b)
          detail::sm90_fuse_block<TileN>(p, acc[b], row0 + 64 * b, std::int64_t(n0) + 2 * (et % 4), batch, p.beta != 0.0f);
      }
      if (p.tma_store) {
        if (p.out_f16) {
          detail::sm90_pingpong_store_tile<half_t, Config>(p, acc, s.d[consumer], et, consumer, m0, n0, batch);
        } else {
          detail::sm90_pingpong_store_tile<bfloat16_t, Config>(p, acc, s.d[consumer], et, consumer, m0, n0, batch);
        }
      } else {
        // Thread (warp, lane) holds rows r and r + 8 of each row block (r = 16 * warp + lane / 4),
        // column pairs 2 * (lane % 4) + 8j.
        std::int64_t const row0 = std::int64_t(m0) + (et / 32) * 16 + (et % 32) / 4;
        std::int64_t const col0 = std::int64_t(n0) + 2 * (et % 4);
        bool const full_cols = std::int64_t(n0) + TileN <= p.n;
        TESSEL_UNROLL
        for (int b = 0; b < BlocksM; ++b) {
          if (p.out_f32) {
            detail::sm90_epilogue_registers<float, TileN>(p, acc[b], row0 + 64 * b, col0, full_cols, slice, batch);
          } else if (p.out_f16) {
            detail::sm90_epilogue_registers<half_t, TileN>(p, acc[b], row0 + 64 * b, col0, full_cols, slice, batch);
          } else {
            detail::sm90_epilogue_registers<bfloat16_t, TileN>(p, acc[b], row0 + 64 * b, col0, full_cols, slice, batch);
          }
        }
      }
    }
    if (p.tma_store && wg_thread == 0) tma_store_wait<0>();  // the staging buffer outlives its stores
  }
  if constexpr (ClusterSize > 1) cluster_sync();  // no CTA leaves while a peer may still signal it
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_gemm_pingpong_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
