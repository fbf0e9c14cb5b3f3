// tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp -- the sm_90a GEMM: TMA + wgmma, warp-specialized,
// persistent, cooperative, optionally in clusters with TMA multicast.
//
// sm90_gemm_kernel<Config>(Sm90GemmParams) (kernel/sm90_gemm_params.hpp), 384 threads:
//   warpgroup 0, the producer: its registers lowered (setmaxnreg), one thread walks the tiles of
//       this CTA and, per k-tile, waits for a free pipeline stage and issues the TMA copies of the
//       A tile (TileM x TileK) and the B tile (TileN x TileK) into it (pipeline/sm90_pipeline.hpp),
//       each K-major or, for 16-bit inputs, MN-major (collective/sm90_operand_tile.hpp).
//       In a cluster of ClusterM CTAs (consecutive tile rows, one tile column), CTA r copies rows
//       [r, r+1) * TileN / ClusterM of the B tile and multicasts them to every CTA of the cluster:
//       each B byte is read from L2 once per cluster. A cluster of ClusterN CTAs (one tile row,
//       consecutive tile columns) shares the A tile the same way.
//   warpgroups 1 and 2, the consumers (cooperative: one tile, 64 rows each): per k-tile they wait
//       for the stage, issue TileK / K wgmma m64 x TileN instructions from shared memory (with the
//       transpose bit of an MN-major operand; one copy of the loop per combination), keep
//       one k-tile of wgmmas in flight and free the previous stage (fp8 with promoted accumulation:
//       every k-tile's wgmmas retire into fp32 registers first). After the last k-tile the
//       epilogue writes D: a 16-bit D with C unread through a swizzled shared-memory buffer --
//       TMA stores when its rows are 16-byte aligned; when they are not, warps 2 and 3 of the
//       producer warpgroup copy the buffers out in coalesced rows while the consumers go on (the
//       consumers copy their CTA's last tile themselves) --
//       else alpha * accumulators + beta * C straight from registers.
// The producer runs ahead across tile boundaries, so the next tile's loads overlap this tile's
// epilogue. Tiles come from a PersistentTileScheduler (schedule/persistent.hpp) over cluster
// tiles: grid = clusters that fit at once, each walking every grid-th cluster tile in grouped
// raster order. This is the only function that reads threadIdx and blockIdx.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/arch/unaligned_bytes.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

// The wgmma instruction for an input type and tile width: Op reads K-major A and B; for 16-bit
// types Transposed<TransA, TransB> reads either operand MN-major (the instruction's transpose
// bits; fp8 wgmma has none).
template <class Element, int N>
struct Sm90WgmmaOf {
  static_assert(sizeof(Element) == 0, "Sm90WgmmaOf: the sm_90a GEMM takes bfloat16_t or half_t inputs with TileN 64, 128 or 256, or float_e4m3_t with 128 or 256");
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 256> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x256x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 128> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x128x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 64> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x64x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 256> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x256x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 128> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x128x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 64> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x64x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<float_e4m3_t, 256> {
  using Op = SM90_64x256x32_F32E4M3E4M3_SS;
};
template <>
struct Sm90WgmmaOf<float_e4m3_t, 128> {
  using Op = SM90_64x128x32_F32E4M3E4M3_SS;
};

// A configuration's wgmma with A (TransA) and B (TransB) K-major (0) or MN-major (1).
template <class Config, int TransA, int TransB>
struct Sm90MmaFor {
  using Op = typename Sm90WgmmaOf<typename Config::Element, Config::TileN>::template Transposed<TransA, TransB>;
};
template <class Config>
struct Sm90MmaFor<Config, 0, 0> {
  using Op = typename Config::Mma;
};

// Whether a configuration reads MN-major operands in place (the host stages them otherwise):
// 16-bit inputs (wgmma's transpose bits) and each CTA's share of a tile whole 64-row TMA boxes.
template <class Config>
inline constexpr bool kSm90MnMajorOperands =
    requires { typename Sm90WgmmaOf<typename Config::Element, Config::TileN>::template Transposed<1, 1>; } &&
    (Config::TileM / Config::ClusterN) % 64 == 0 && (Config::TileN / Config::ClusterM) % 64 == 0;

// How the fp32 accumulation of an fp8 GEMM is done: inside the tensor core for the whole K
// (Fast), or promoted -- each k-tile's wgmmas (4 x k32 = 128 deep) accumulate into a fresh
// register tile that is then added to the fp32 accumulators (Promoted: the tensor core's fp8
// accumulation keeps fewer mantissa bits than fp32, so long K drifts). 16-bit inputs: Fast.
enum class Sm90Accumulation { Fast, Promoted };

// One configuration: input type, tile width, pipeline depth, cluster shape (ClusterM tile rows
// sharing B, or ClusterN tile columns sharing A), accumulation, and the column slabs the epilogue
// stages a tile in (2: a buffer half as wide, two rounds of TMA stores per tile -- room for one
// more pipeline stage; TMA-stored D only, the host takes the register epilogue otherwise).
template <class Element_, int TileN_, int Stages_, int ClusterM_, int ClusterN_ = 1,
          Sm90Accumulation Accumulation_ = Sm90Accumulation::Fast, int EpilogueSlabs_ = 1>
struct Sm90GemmConfig {
  using Element = Element_;
  static constexpr Sm90Accumulation Accumulation = Accumulation_;
  static constexpr int Consumers = 2;                 // consumer warpgroups, 64 rows of the tile each
  static constexpr int TileM = 64 * Consumers;        // 128
  static constexpr int TileN = TileN_;
  static constexpr int TileK = 128 / int(sizeof(Element));  // one 128-byte swizzle row
  static constexpr int Stages = Stages_;
  static constexpr int EpilogueSlabs = EpilogueSlabs_;
  static constexpr int SlabN = TileN / EpilogueSlabs;  // columns of the epilogue's staging buffer
  static constexpr int ClusterM = ClusterM_, ClusterN = ClusterN_;
  static constexpr int ClusterSize = ClusterM * ClusterN;
  static constexpr int Threads = 128 * (1 + Consumers);
  using Mma = typename Sm90WgmmaOf<Element, TileN>::Op;
  static constexpr int Accumulators = TileN / 2;      // fp32 registers per consumer thread (three times with promotion)
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
  // setmaxnreg: the producer needs few registers; 40 * 128 + 232 * 256 = 64512 <= 65536.
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;

  static_assert(Stages >= 2, "Sm90GemmConfig: the TMA pipeline needs at least 2 stages; raise Stages");
  static_assert(ClusterM == 1 || ClusterM == 2 || ClusterM == 4,
                "Sm90GemmConfig: ClusterM (CTAs sharing one B tile by multicast) must be 1, 2 or 4");
  static_assert(ClusterN == 1 || ClusterN == 2 || ClusterN == 4,
                "Sm90GemmConfig: ClusterN (CTAs sharing one A tile by multicast) must be 1, 2 or 4");
  static_assert(ClusterM == 1 || ClusterN == 1,
                "Sm90GemmConfig: a cluster runs along one dimension: ClusterM > 1 (B shared) or ClusterN > 1 (A shared)");
  static_assert(TileN % (8 * ClusterM) == 0, "Sm90GemmConfig: each CTA of a cluster multicasts TileN / ClusterM rows of B");
  static_assert(TileM % (8 * ClusterN) == 0, "Sm90GemmConfig: each CTA of a cluster multicasts TileM / ClusterN rows of A");
  static_assert(TileN % 64 == 0, "Sm90GemmConfig: the TMA-store epilogue writes 64-column boxes; TileN must be a multiple of 64");
  static_assert((EpilogueSlabs == 1 || EpilogueSlabs == 2) && SlabN % 64 == 0,
                "Sm90GemmConfig: the epilogue stages a tile in 1 or 2 slabs of whole 64-column boxes");
  static_assert(Accumulation == Sm90Accumulation::Fast || TileN <= 128,
                "Sm90GemmConfig: promoted accumulation keeps three register tiles (the sum and two partials); use TileN 128");

  // The TMA-store epilogue's staging: per consumer, its 64 rows as TileN / 64 boxes of 64 x 64,
  // each in the 128-byte swizzle (what tma_d's descriptor reads).
  static constexpr int EpilogueBoxes = TileN / 64;
  struct SharedStorage {
    alignas(1024) Element a[Stages][TileM * TileK];  // (BLK_M,BLK_K) per stage, 128-byte swizzle
    alignas(1024) Element b[Stages][TileN * TileK];  // (BLK_N,BLK_K) per stage, 128-byte swizzle
    alignas(1024) std::uint16_t d[Consumers][64 * SlabN];  // (64,SlabN) of a 16-bit D per consumer, as 64x64 boxes
    TmaPipeline<Stages> pipeline;
  };
  // The dynamic shared memory asked for: the storage plus room to align it to 1024 bytes.
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;
  static_assert(SmemBytes <= 232448, "Sm90GemmConfig: the stages do not fit the 227 KiB of shared memory; lower Stages");
};

namespace detail {

// Two fp32 values as one 4- or 8-byte store of Out (lower column in the lower half).
template <class Out>
struct Sm90Pair;
template <>
struct Sm90Pair<float> {
  using Storage = float2;
  TESSEL_DEVICE static float2 pack(float a, float b) { return make_float2(a, b); }
};
template <>
struct Sm90Pair<bfloat16_t> {
  using Storage = std::uint32_t;
  TESSEL_DEVICE static std::uint32_t pack(float a, float b) {
    __nv_bfloat162 const v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
};
template <>
struct Sm90Pair<half_t> {
  using Storage = std::uint32_t;
  TESSEL_DEVICE static std::uint32_t pack(float a, float b) {
    __half2 const v = __floats2half2_rn(a, b);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
};

// Epilogue from registers: D = alpha * acc + beta * C (acc already scaled by alpha) for this
// thread's rows row0, row0 + 8 and column pairs col0 + 8j (wgmma_accumulator_coord). `d_slice`
// selects D's batch (or the split-K partial-sum slice), `c_batch` C's. Interior tiles with
// aligned pairs store without checks.
template <class Out, int TileN>
TESSEL_DEVICE void sm90_epilogue_registers(Sm90GemmParams const& p, float const (&acc)[TileN / 2], std::int64_t row0,
                                           std::int64_t col0, bool full_cols, std::int64_t d_slice, std::int64_t c_batch) {
  Out* const d_base = static_cast<Out*>(p.d) + d_slice * p.batch_stride_d;
  Out const* const c_base = p.beta != 0.0f ? static_cast<Out const*>(p.c) + c_batch * p.batch_stride_c : nullptr;
  TESSEL_UNROLL
  for (int h = 0; h < 2; ++h) {
    std::int64_t const row = row0 + 8 * h;
    if (row >= p.m) continue;
    Out* const d_row = d_base + row * p.ldd + col0;
    if (full_cols && p.d_pairs && c_base == nullptr) {
      TESSEL_UNROLL
      for (int j = 0; j < TileN / 8; ++j)
        *reinterpret_cast<typename Sm90Pair<Out>::Storage*>(d_row + 8 * j) =
            Sm90Pair<Out>::pack(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      continue;
    }
    Out const* const c_row = c_base ? c_base + row * p.ldc + col0 : nullptr;
    TESSEL_UNROLL
    for (int j = 0; j < TileN / 8; ++j) {
      std::int64_t const col = col0 + 8 * j;
      if (col >= p.n) continue;
      bool const two = col + 1 < p.n;
      float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
      if (c_row) {
        v0 += p.beta * float(c_row[8 * j]);
        if (two) v1 += p.beta * float(c_row[8 * j + 1]);
      }
      if (two && p.d_pairs) {
        *reinterpret_cast<typename Sm90Pair<Out>::Storage*>(d_row + 8 * j) = Sm90Pair<Out>::pack(v0, v1);
      } else {
        d_row[8 * j] = Out(v0);
        if (two) d_row[8 * j + 1] = Out(v1);
      }
    }
  }
}

// A consumer warpgroup's alpha * acc, converted to Out, into its 64 x TileN staging buffer -- or
// columns [Slab, Slab + 1) * SlabN of it into a 64 x SlabN one
// (epilogue/sm90_epilogue_staging.hpp: which registers each 4-byte store takes, and where it goes;
// a warp's 32 writes, 8 rows of one 16-byte chunk each, land in 32 distinct banks).
template <class Out, int TileN, int SlabN = TileN, int Slab = 0>
TESSEL_DEVICE void sm90_stage_accumulators(float const (&acc)[TileN / 2], char* base, int wg_thread) {
  constexpr int First = Slab * epilogue::sm90_staged_stores(SlabN), Last = First + epilogue::sm90_staged_stores(SlabN);
  TESSEL_UNROLL
  for (int i = First; i < Last; ++i) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
    *reinterpret_cast<std::uint32_t*>(base + epilogue::sm90_staging_offset(at.row, at.col - Slab * SlabN)) =
        Sm90Pair<Out>::pack(acc[epilogue::sm90_staged_register(i, 0)], acc[epilogue::sm90_staged_register(i, 1)]);
  }
}

// Named barriers (0 is __syncthreads): a consumer's own 128 threads; and the handoff of consumer
// c's staging buffer to its copy warp (a D that TMA cannot store; warp 2 + c of the producer
// warpgroup), 160 threads, both sides waiting (barrier.sync, not .aligned: the two roles meet
// through different instructions): `drained` (the copy warp has read the previous
// tile out of the buffer) before the consumer writes it, `staged` (the tile is in it) after.
TESSEL_HOST_DEVICE constexpr int sm90_consumer_barrier(int consumer) { return 1 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_drained_barrier(int consumer) { return 3 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_staged_barrier(int consumer) { return 5 + consumer; }
inline constexpr int kSm90HandoffThreads = 128 + 32;

// The first row and column of CTA `cta_rank`'s tile in cluster tile `tile`: a cluster covers
// ClusterM consecutive tile rows or ClusterN consecutive tile columns.
template <class Config>
struct Sm90TileOrigin {
  int m0, n0;
  TESSEL_DEVICE Sm90TileOrigin(GemmCoord const& tile, int cta_rank)
      : m0(int((tile.m() * Config::ClusterM + (Config::ClusterM > 1 ? cta_rank : 0)) * Config::TileM)),
        n0(int((tile.n() * Config::ClusterN + (Config::ClusterN > 1 ? cta_rank : 0)) * Config::TileN)) {}
};

// Epilogue through shared memory, for a 16-bit D with C unread: the consumer warpgroup stages
// alpha * acc (sm90_stage_accumulators), then either (p.tma_store: D's rows are 16-byte aligned)
// one thread stores it with TMA, one 64 x 64 box per 64 columns -- rows and columns outside D are
// clipped by the unit, and the buffer is reused only after the previous tile's stores have read
// it -- or (p.staged_rows: an odd leading dimension, which TMA cannot store) hands the buffer to
// the producer warpgroup's copy warps (sm90_copy_out_rows), which write it out in coalesced rows
// while this warpgroup goes on with the next tile's mainloop.
template <class Out, int TileN, int SlabN>
TESSEL_DEVICE void sm90_epilogue_staged(Sm90GemmParams const& p, float const (&acc)[TileN / 2], std::uint16_t* staging,
                                        int wg_thread, int consumer, int m0, int n0, int batch, bool last) {
  char* const base = reinterpret_cast<char*>(staging);
  if constexpr (SlabN < TileN) {  // TMA stores only (the host's rule): each slab waits for the last's reads
    auto const slab = [&](auto which) {
      constexpr int S = decltype(which)::value;
      if (wg_thread == 0) tma_store_wait_read<0>();
      named_barrier_sync(sm90_consumer_barrier(consumer), 128);
      sm90_stage_accumulators<Out, TileN, SlabN, S>(acc, base, wg_thread);
      fence_proxy_async_shared();
      named_barrier_sync(sm90_consumer_barrier(consumer), 128);
      if (wg_thread == 0) {
        TESSEL_UNROLL
        for (int box = 0; box < SlabN / 64; ++box)
          tma_store_3d(&p.tma_d, base + box * 8192, n0 + S * SlabN + 64 * box, m0, batch);
        tma_store_commit();
      }
    };
    static_assert(TileN == 2 * SlabN, "sm90_epilogue_staged: 1 or 2 slabs");
    slab(std::integral_constant<int, 0>{});
    slab(std::integral_constant<int, 1>{});
    return;
  }
  if (p.tma_store) {
    if (wg_thread == 0) tma_store_wait_read<0>();
    named_barrier_sync(sm90_consumer_barrier(consumer), 128);  // the previous tile's stores have read the buffer
  } else {
    named_barrier_meet(sm90_drained_barrier(consumer), kSm90HandoffThreads);  // ... or the copy warp has
  }
  sm90_stage_accumulators<Out, TileN>(acc, base, wg_thread);
  if (!p.tma_store && !last) {
    named_barrier_meet(sm90_staged_barrier(consumer), kSm90HandoffThreads);  // the copy warp is waiting: no stall
    return;
  }
  if (!p.tma_store) {  // the CTA's last tile: this warpgroup's four warps copy it out (sm90_copy_out_rows)
    named_barrier_sync(sm90_consumer_barrier(consumer), 128);
    return;
  }
  fence_proxy_async_shared();  // the writes above are visible to the TMA unit after the barrier
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  if (wg_thread == 0) {
    TESSEL_UNROLL
    for (int box = 0; box < TileN / 64; ++box) tma_store_3d(&p.tma_d, base + box * 8192, n0 + 64 * box, m0, batch);
    tma_store_commit();
  }
}

// Rows of one staged tile of a D that TMA cannot store (p.staged_rows), from consumer c's
// buffer to global memory; this warp copies rows warp, warp + warps, ... of its 64. D's rows are
// not 16-byte aligned (that is why TMA could not store them), but most of each row's slice is:
// with j0 the first of its elements at a 16-byte aligned address, lane q writes elements
// [j0 + 8q, j0 + 8q + 8) as one 16-byte store, shifted out of staged chunks q and q + 1; the j0
// elements before the first aligned chunk and the fewer than 8 after the last whole one are
// written one at a time. A narrow tile puts 32 / (TileN / 8) rows in each pass. (One 2-byte store
// per element kept the copy warp busier than the mainloop: 4095x4097x4096 ran at 0.78x the
// aligned problem's speed.) `lane` 0..31.
template <class Config>
TESSEL_DEVICE void sm90_copy_tile_rows(Sm90GemmParams const& p, std::uint16_t const* staging, int c, int m0, int n0,
                                       int batch, int lane, int warp, int warps) {
  constexpr int TileN = Config::TileN;
  constexpr int ChunksPerRow = TileN / 8, RowsPerPass = 32 / ChunksPerRow;
  static_assert(ChunksPerRow >= 8 && 32 % ChunksPerRow == 0, "sm90_copy_tile_rows: TileN must be 64, 128 or 256");
  char const* const base = reinterpret_cast<char const*>(staging);
  int const q = lane % ChunksPerRow, sub = lane / ChunksPerRow;
  auto const chunk = [&](int r, int k) { return *reinterpret_cast<Words4 const*>(base + epilogue::sm90_staging_offset(r, 8 * k)); };
  auto const element = [&](int r, int col) {
    return *reinterpret_cast<std::uint16_t const*>(base + epilogue::sm90_staging_offset(r, col));
  };
  std::uint16_t* const d = static_cast<std::uint16_t*>(p.d) + std::int64_t(batch) * p.batch_stride_d + n0;
  int const first = m0 + 64 * c;
  int const rows = p.m - first < 64 ? int(p.m - first) : 64;
  int const cols = p.n - n0 < TileN ? int(p.n - n0) : TileN;
#pragma unroll 2
  for (int r = warp * RowsPerPass + sub; r < rows; r += warps * RowsPerPass) {
    std::uint16_t* const row = d + (std::int64_t(first) + r) * p.ldd;
    int const j0 = int((8u - ((reinterpret_cast<std::uintptr_t>(row) >> 1) & 7u)) & 7u);
    int const whole = cols > j0 ? (cols - j0) / 8 : 0;  // aligned chunks wholly inside the slice
    if (q < whole) {
      Words4 const lo = chunk(r, q);
      Words4 const hi = j0 != 0 ? chunk(r, q + 1) : lo;  // q + 1 < ChunksPerRow: the chunk ends by cols
      *reinterpret_cast<Words4*>(row + j0 + 8 * q) = bytes_at(lo, hi, 2 * j0);
    }
    if (q < j0 && q < cols) row[q] = element(r, q);  // before the first aligned chunk
    int const tail = cols > j0 ? j0 + 8 * whole + q : cols;
    if (q < 8 && tail < cols) row[tail] = element(r, tail);  // after the last whole one
  }
}

// A copy warp's side of p.staged_rows: for each tile of this CTA, in the consumers' order, meet
// consumer c at `drained` (its buffer is free), then at `staged` (it holds the tile), and copy its
// 64 rows out while consumer c runs the next mainloop. Not the CTA's last tile: with no mainloop
// left to hide behind, one warp's copy was the kernel's tail (~19 us of 4095x4097x4096's 209 on
// the H100), so the consumer's four warps copy that one themselves.
template <class Config>
TESSEL_DEVICE void sm90_copy_out_rows(Sm90GemmParams const& p, std::uint16_t const* staging, int c, int lane, int cta_rank,
                                      int cluster) {
  PersistentTileScheduler const& sched = p.scheduler;
  for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
    named_barrier_meet(sm90_drained_barrier(c), kSm90HandoffThreads);
    if (!sched.is_valid(sched.next_tile(t))) break;  // the consumer copies its last tile
    named_barrier_meet(sm90_staged_barrier(c), kSm90HandoffThreads);
    GemmCoord const tile = sched.tile_offset(t);
    Sm90TileOrigin<Config> const at(tile, cta_rank);
    sm90_copy_tile_rows<Config>(p, staging, c, at.m0, at.n0, int(tile.k() % p.batch), lane, 0, 1);
  }
}

}  // namespace detail

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_gemm_kernel(__grid_constant__ Sm90GemmParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  using Mma = typename Config::Mma;
  using SharedStorage = typename Config::SharedStorage;
  constexpr int TileM = Config::TileM, TileN = Config::TileN, TileK = Config::TileK;
  constexpr int Stages = Config::Stages, ClusterM = Config::ClusterM, ClusterN = Config::ClusterN;
  constexpr int ClusterSize = Config::ClusterSize;
  using OperandTile = collective::Sm90OperandTile<Element, TileK>;  // K-major or MN-major stage tiles
  constexpr bool MnMajorOperands = kSm90MnMajorOperands<Config>;

  // 1024-byte alignment (of the shared-window address: the swizzle pattern repeats every 1024 bytes).
  extern __shared__ char smem_raw[];
  std::uint32_t const misalign = tessel::detail::smem_address(smem_raw) & 1023u;
  auto& s = *reinterpret_cast<SharedStorage*>(smem_raw + ((1024u - misalign) & 1023u));

  int const warpgroup = int(threadIdx.x) / 128, wg_thread = int(threadIdx.x) % 128;
  int const cta_rank = ClusterSize > 1 ? int(cluster_cta_rank()) : 0;
  if (threadIdx.x == 0) {
    s.pipeline.init(Config::Consumers * 4 * ClusterSize);  // every consumer warp of every CTA that writes a stage
    tma_prefetch_descriptor(&p.tma_a);
    tma_prefetch_descriptor(&p.tma_b);
  }
  if constexpr (ClusterSize > 1) {
    cluster_sync();  // peers' barriers are initialised before any multicast reaches them
  } else {
    __syncthreads();
  }
  // Launched right behind the operand staging (programmatic dependent launch): everything above
  // overlapped its last CTAs; no global memory is touched before the staged copies are complete.
  grid_dependency_wait();

  PersistentTileScheduler const& sched = p.scheduler;
  int const cluster = int(blockIdx.x) / ClusterSize;

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (wg_thread == 0) {
      PipelineState st;
      for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
        GemmCoord const tile = sched.tile_offset(t);
        detail::Sm90TileOrigin<Config> const at(tile, cta_rank);
        int const m0 = at.m0, n0 = at.n0;
        int const batch = int(tile.k() % p.batch), split = int(tile.k() / p.batch);
        int const k_begin = int(std::int64_t(split) * p.k_tiles / p.splits);
        int const k_end = int(std::int64_t(split + 1) * p.k_tiles / p.splits);
        // In a cluster, this CTA copies its share of the shared tile (RowsA of A or RowsB of B) and
        // multicasts it; each operand K-major or MN-major (collective/sm90_operand_tile.hpp).
        constexpr int RowsA = TileM / ClusterN, RowsB = TileN / ClusterM;
        int const share_a = ClusterN > 1 ? cta_rank : 0, share_b = ClusterM > 1 ? cta_rank : 0;
        for (int kt = k_begin; kt < k_end; ++kt) {
          std::uint64_t* full = s.pipeline.producer_acquire(st, Config::StageBytes);
          constexpr std::uint16_t everyone = std::uint16_t((1u << ClusterSize) - 1u);
          OperandTile::template load<RowsA, (ClusterN > 1), MnMajorOperands>(
              &p.tma_a, full, s.a[st.index] + share_a * RowsA * TileK, everyone, p.a_mn_major, kt * TileK,
              m0 + share_a * RowsA, batch * p.a_batch_step);
          OperandTile::template load<RowsB, (ClusterM > 1), MnMajorOperands>(
              &p.tma_b, full, s.b[st.index] + share_b * RowsB * TileK, everyone, p.b_mn_major, kt * TileK,
              n0 + share_b * RowsB, batch * p.b_batch_step);
          st.advance<Stages>();
        }
      }
    } else if (Config::EpilogueSlabs == 1 && p.staged_rows && wg_thread >= 64) {
      // Warps 2 and 3 copy consumer 0's and 1's staged tiles of a D that TMA cannot store out to
      // global memory, overlapped with the consumers' next mainloop.
      int const c = (wg_thread - 64) / 32, lane = wg_thread % 32;
      detail::sm90_copy_out_rows<Config>(p, s.d[c], c, lane, cta_rank, cluster);
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    warpgroup_reg_alloc<Config::ConsumerRegisters>();
    int const consumer = warpgroup - 1;
    int const lane = wg_thread % 32;
    PipelineState st;
    float acc[Config::Accumulators];
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
    // The promoted mainloop's two per-k-tile tiles (unused, and optimised away, otherwise).
    constexpr int PartRegisters = Config::Accumulation == Sm90Accumulation::Promoted ? Config::Accumulators : 1;
    float part0[PartRegisters], part1[PartRegisters];

    for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
      GemmCoord const tile = sched.tile_offset(t);
      // 32-bit tile coordinates (the host keeps M, N and the batch count below 2^31): fewer
      // registers live beside the accumulators when the epilogue starts.
      detail::Sm90TileOrigin<Config> const at(tile, cta_rank);
      int const m0 = at.m0, n0 = at.n0;
      int const slice = int(tile.k()), batch = slice % p.batch;
      int const split = int(slice / p.batch);
      int const k_begin = int(std::int64_t(split) * p.k_tiles / p.splits);
      int const k_end = int(std::int64_t(split + 1) * p.k_tiles / p.splits);

      if constexpr (Config::Accumulation == Sm90Accumulation::Promoted) {
        // Mainloop, promoted, with two partial tiles: k-tile t's wgmmas start a fresh tile in
        // part[t % 2] while k-tile t - 1's, retired, is added to acc and its stage freed -- the
        // tensor core keeps working through the fp32 additions.
        TESSEL_UNROLL
        for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
        auto issue = [&](float(&into)[Config::Accumulators]) {
          s.pipeline.consumer_wait(st);
          std::uint64_t const desc_a = wgmma_desc_k_major_sw128(s.a[st.index] + consumer * 64 * TileK);
          std::uint64_t const desc_b = wgmma_desc_k_major_sw128(s.b[st.index]);
          wgmma_fence_operand(into);
          wgmma_fence();
          TESSEL_UNROLL
          for (int kk = 0; kk < TileK / Mma::K; ++kk) Mma::fma(desc_a + 2 * kk, desc_b + 2 * kk, into, kk > 0 ? 1 : 0);
          wgmma_commit_group();
          wgmma_fence_operand(into);
          st.advance<Stages>();
        };
        auto retire = [&](float(&from)[Config::Accumulators], int stage) {  // after a wait that completed `from`
          wgmma_fence_operand(from);
          if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(stage);
          TESSEL_UNROLL
          for (int i = 0; i < Config::Accumulators; ++i) acc[i] += from[i];
        };
        int stage0 = st.index, stage1 = 0;
        issue(part0);
        int kt = k_begin + 1;
        for (; kt + 1 < k_end; kt += 2) {
          stage1 = st.index;
          issue(part1);
          wgmma_wait_group<1>();
          retire(part0, stage0);
          stage0 = st.index;
          issue(part0);
          wgmma_wait_group<1>();
          retire(part1, stage1);
        }
        if (kt < k_end) {  // one k-tile left: part1 takes it
          stage1 = st.index;
          issue(part1);
          wgmma_wait_group<1>();
          retire(part0, stage0);
          wgmma_wait_group<0>();
          retire(part1, stage1);
        } else {
          wgmma_wait_group<0>();
          retire(part0, stage0);
        }
      } else {
        // Mainloop: one commit group per k-tile, the previous one retired before its stage is freed.
        // One copy of the loop per (A, B) major-ness, chosen once per tile by a uniform branch. The
        // copies join before the last group is waited for: with a wait_group 0 closing each copy,
        // ptxas serialized every wgmma of all of them (C7515, "non wgmma instructions defining
        // accumulator registers ... between start and end of the pipeline stage").
        auto mainloop = [&](auto a_mn_major, auto b_mn_major) {
          constexpr int TransA = decltype(a_mn_major)::value, TransB = decltype(b_mn_major)::value;
          using MmaAB = typename Sm90MmaFor<Config, TransA, TransB>::Op;
          constexpr std::uint32_t StepA = OperandTile::template k_step<TransA, Mma::K>;
          constexpr std::uint32_t StepB = OperandTile::template k_step<TransB, Mma::K>;
          int previous = -1;
          for (int kt = k_begin; kt < k_end; ++kt) {
            s.pipeline.consumer_wait(st);
            std::uint64_t const desc_a = OperandTile::template descriptor<TransA>(s.a[st.index] + consumer * 64 * TileK);
            std::uint64_t const desc_b = OperandTile::template descriptor<TransB>(s.b[st.index]);
            wgmma_fence_operand(acc);
            wgmma_fence();
            TESSEL_UNROLL
            for (int kk = 0; kk < TileK / Mma::K; ++kk) {
              // The k-th slice of Mma::K: 32 bytes along K-major rows, Mma::K 128-byte rows when MN-major.
              MmaAB::fma(wgmma_desc_advance(desc_a, StepA * kk), wgmma_desc_advance(desc_b, StepB * kk), acc,
                         (kt > k_begin || kk > 0) ? 1 : 0);
            }
            wgmma_commit_group();
            wgmma_fence_operand(acc);
            wgmma_wait_group<1>();
            if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);
            previous = st.index;
            st.advance<Stages>();
          }
          return previous;
        };
        using KMajor = std::integral_constant<int, 0>;
        using MnMajor = std::integral_constant<int, 1>;
        int previous;
        if constexpr (MnMajorOperands) {
          if (p.a_mn_major) {
            previous = p.b_mn_major ? mainloop(MnMajor{}, MnMajor{}) : mainloop(MnMajor{}, KMajor{});
          } else {
            previous = p.b_mn_major ? mainloop(KMajor{}, MnMajor{}) : mainloop(KMajor{}, KMajor{});
          }
        } else {
          previous = mainloop(KMajor{}, KMajor{});
        }
        wgmma_wait_group<0>();
        wgmma_fence_operand(acc);
        if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);
      }

      // Epilogue, on alpha * acc. The thread index is laundered first: every address the
      // epilogue derives from it is then computed here, per tile, instead of being hoisted out
      // of the tile loop by the compiler and kept live through the mainloop beside the 128
      // accumulators (which cost spills and 30% of the speed).
      TESSEL_UNROLL
      for (int i = 0; i < Config::Accumulators; ++i) acc[i] *= p.alpha;
      int et = wg_thread;
      asm volatile("" : "+r"(et));
      // Thread (warp, lane) holds tile rows r and r + 8 (r = 64 * consumer + 16 * warp + lane / 4),
      // column pairs 2 * (lane % 4) + 8j.
      if (p.tma_store || p.staged_rows) {
        bool const last = !sched.is_valid(sched.next_tile(t));
        if (p.out_f16) {
          detail::sm90_epilogue_staged<half_t, TileN, Config::SlabN>(p, acc, s.d[consumer], et, consumer, m0 + 64 * consumer, n0,
                                                                     batch, last);
        } else {
          detail::sm90_epilogue_staged<bfloat16_t, TileN, Config::SlabN>(p, acc, s.d[consumer], et, consumer, m0 + 64 * consumer,
                                                                         n0, batch, last);
        }
        if (Config::EpilogueSlabs == 1 && p.staged_rows && last) detail::sm90_copy_tile_rows<Config>(p, s.d[consumer], consumer, m0, n0, batch, et % 32, et / 32, 4);
      } else {
        std::int64_t const row0 = std::int64_t(m0) + consumer * 64 + (et / 32) * 16 + (et % 32) / 4;
        std::int64_t const col0 = std::int64_t(n0) + 2 * (et % 4);
        bool const full_cols = std::int64_t(n0) + TileN <= p.n;
        if (p.out_f32) {
          detail::sm90_epilogue_registers<float, TileN>(p, acc, row0, col0, full_cols, slice, batch);
        } else if (p.out_f16) {
          detail::sm90_epilogue_registers<half_t, TileN>(p, acc, row0, col0, full_cols, slice, batch);
        } else {
          detail::sm90_epilogue_registers<bfloat16_t, TileN>(p, acc, row0, col0, full_cols, slice, batch);
        }
      }
    }
    if (p.tma_store && wg_thread == 0) tma_store_wait<0>();  // the staging buffer outlives its stores
  }
  if constexpr (ClusterSize > 1) cluster_sync();  // no CTA leaves while a peer may still signal it
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_gemm_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
