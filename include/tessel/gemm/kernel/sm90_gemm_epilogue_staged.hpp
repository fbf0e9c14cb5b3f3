// tessel/gemm/kernel/sm90_gemm_epilogue_staged.hpp -- the sm_90a GEMM's epilogue through shared
// memory (sm90_gemm_kernel, kernel/sm90_gemm_warpspecialized.hpp): a consumer warpgroup's tile staged
// in its swizzled buffer and stored by TMA -- the two-slab kernel's held blocks after the next unit's
// first k-tile, C loaded into the buffer by TMA where it is read -- or, where TMA cannot store D,
// copied out in coalesced rows by the producer warpgroup's copy warps. The register epilogue and
// the staging layout: kernel/sm90_gemm_epilogue.hpp, epilogue/sm90_epilogue_staging.hpp.
#pragma once

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/unaligned_bytes.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_epilogue.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cstdint>
#include <utility>

namespace tessel::kernel::detail {

// Epilogue through shared memory, for a 16-bit D with C unread: the consumer warpgroup stages
// alpha * acc (sm90_stage_accumulators), then either (p.tma_store: D's rows are 16-byte aligned)
// one thread stores it with TMA, one 64 x 64 box per 64 columns -- rows and columns outside D are
// clipped by the unit, and the buffer is reused only after the previous tile's stores have read
// it -- or (p.staged_rows: an odd leading dimension, which TMA cannot store) hands the buffer to
// the producer warpgroup's copy warps (sm90_copy_out_rows), which write it out in coalesced rows
// while this warpgroup goes on with the next tile's mainloop.
//
// A kernel running the swapped problem (p.d_transposed: the 64-wide kernels, and with Transposable
// the block-scaled ones, whose column-major D is written transposed) stages each 64 x 64 block
// transposed and stores it as one box of the caller's D (p.tma_d describes that D).
//
// With p.c_by_tma the buffer already holds this block of C (sm90_load_c_box, issued during the
// mainloop, completing on c_full with phase c_parity): each thread turns its C values into D
// values in place, and the TMA stores follow.
//
// A two-slab kernel with HeldBlocks (Held > 0) finds the buffer free (sm90_epilogue_drain ran in
// this unit's mainloop), stages the tile's first SlabN / 64 blocks at once, stores them, and
// packs the rest into `held`, for sm90_epilogue_held after the next unit's first k-tile.
template <class Out, int TileN, int SlabN, bool TmaC, int Held = 0, bool Transposable = (TileN == 64)>
TESSEL_DEVICE void sm90_epilogue_staged(Sm90GemmParams const& p, float const (&acc)[TileN / 2], std::uint16_t* staging,
                                        int wg_thread, int consumer, int m0, int n0, int batch, bool last,
                                        std::uint64_t* c_full, std::uint32_t& c_parity,
                                        std::uint32_t (&held)[Held > 0 ? 16 * Held : 1]) {
  char* const base = reinterpret_cast<char*>(staging);
  constexpr int Boxes = SlabN / 64, Blocks = TileN / 64;
  if constexpr (Held > 0) {  // TMA stores only (the host's rule)
    static_assert(SlabN < TileN && Held == Blocks - Boxes, "sm90_epilogue_staged: the held blocks are those the buffer has no room for");
    [&]<int... K>(std::integer_sequence<int, K...>) {
      (sm90_stage_accumulators<Out, TileN, 64, K>(acc, base + K * 8192, wg_thread), ...);
    }(std::make_integer_sequence<int, Boxes>{});
    fence_proxy_async_shared();
    named_barrier_sync(sm90_consumer_barrier(consumer), 128);
    if (wg_thread == 0) {
      TESSEL_UNROLL
      for (int k = 0; k < Boxes; ++k) SM90_TMA_STORE::copy(&p.tma_d, base + k * 8192, {n0 + 64 * k, m0, batch});
      tma_store_commit();
    }
    constexpr int First = Boxes * epilogue::sm90_staged_stores(64);  // the first held block's first store
    TESSEL_UNROLL
    for (int i = 0; i < 16 * Held; ++i)
      held[i] = Sm90Pair<Out>::pack(acc[epilogue::sm90_staged_register(First + i, 0)], acc[epilogue::sm90_staged_register(First + i, 1)]);
    return;
  } else if constexpr (SlabN < TileN) {  // TMA stores only (the host's rule)
    // The tile leaves in 64-column blocks that rotate through the buffer's SlabN / 64 boxes: block
    // k waits only for the store of block k - Boxes (committed Boxes - 1 groups ago), so staging
    // one block overlaps the TMA unit's read of the last. (Two 128-column slabs, each waiting for
    // the other's read to finish, left that read's whole latency in every tile's epilogue.)
    auto const block = [&](auto which) {
      constexpr int K = decltype(which)::value;
      char* const box = base + (K % Boxes) * 8192;
      if (wg_thread == 0) tma_store_wait_read<Boxes - 1>();
      named_barrier_sync(sm90_consumer_barrier(consumer), 128);
      bool const transposed = Transposable && p.d_transposed;
      if (transposed)
        sm90_stage_accumulators_transposed<Out, TileN, K>(acc, box, wg_thread);
      else
        sm90_stage_accumulators<Out, TileN, 64, K>(acc, box, wg_thread);
      fence_proxy_async_shared();
      named_barrier_sync(sm90_consumer_barrier(consumer), 128);
      if (wg_thread == 0) {
        if (transposed)
          SM90_TMA_STORE::copy(&p.tma_d, box, {m0, n0 + 64 * K, batch});  // the caller's D: column m0, row n0 + 64 K
        else
          SM90_TMA_STORE::copy(&p.tma_d, box, {n0 + 64 * K, m0, batch});
        tma_store_commit();
      }
    };
    [&]<int... K>(std::integer_sequence<int, K...>) {
      (block(std::integral_constant<int, K>{}), ...);
    }(std::make_integer_sequence<int, Blocks>{});
    return;
  }
  if (TmaC && p.c_by_tma && !p.fusion.active()) {  // (a fused epilogue took C from the buffer already)
    // (sm90_load_c_box waited for the previous tile's stores to read the buffer before loading C.)
    mbarrier_wait(c_full, c_parity);
    c_parity ^= 1u;
    sm90_stage_accumulators_plus_c<Out, TileN>(acc, base, wg_thread, p.beta);
  } else {
    if (p.tma_store) {
      if (wg_thread == 0) tma_store_wait_read<0>();
      named_barrier_sync(sm90_consumer_barrier(consumer), 128);  // the previous tile's stores have read the buffer
    } else {
      named_barrier_meet(sm90_drained_barrier(consumer), kSm90HandoffThreads);  // ... or the copy warp has
    }
    if constexpr (Transposable) {
      if (p.d_transposed) {  // (TMA stores only: the host's rule)
        [&]<int... K>(std::integer_sequence<int, K...>) {
          (sm90_stage_accumulators_transposed<Out, TileN, K>(acc, base + K * 8192, wg_thread), ...);
        }(std::make_integer_sequence<int, TileN / 64>{});
      } else {
        sm90_stage_accumulators<Out, TileN>(acc, base, wg_thread);
      }
    } else {
      sm90_stage_accumulators<Out, TileN>(acc, base, wg_thread);
    }
  }
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
    if (Transposable && p.d_transposed) {  // the caller's D: column m0, rows n0 + 64 box
      TESSEL_UNROLL
      for (int box = 0; box < TileN / 64; ++box) SM90_TMA_STORE::copy(&p.tma_d, base + box * 8192, {m0, n0 + 64 * box, batch});
    } else {
      TESSEL_UNROLL
      for (int box = 0; box < TileN / 64; ++box) SM90_TMA_STORE::copy(&p.tma_d, base + box * 8192, {n0 + 64 * box, m0, batch});
    }
    tma_store_commit();
  }
}

// The held blocks of a two-slab epilogue (sm90_epilogue_staged with Held > 0), already packed:
// once the first blocks' stores have read the buffer, staged into its boxes at once and stored.
// A consumer runs it after issuing its next unit's first k-tile (or after its last tile): the
// tensor core has that k-tile's wgmmas to run meanwhile. m0, n0, batch: the held tile's (this
// consumer's rows).
template <int TileN, int SlabN, int Held>
TESSEL_DEVICE void sm90_epilogue_held(Sm90GemmParams const& p, std::uint32_t const (&held)[16 * Held], std::uint16_t* staging,
                                      int wg_thread, int consumer, int m0, int n0, int batch) {
  constexpr int Blocks = TileN / 64;
  static_assert(Held == SlabN / 64, "sm90_epilogue_held: the held blocks fill the buffer's boxes");
  char* const base = reinterpret_cast<char*>(staging);
  if (wg_thread == 0) tma_store_wait_read<0>();
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  TESSEL_UNROLL
  for (int h = 0; h < Held; ++h) {
    TESSEL_UNROLL
    for (int i = 0; i < epilogue::sm90_staged_stores(64); ++i) {
      epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(wg_thread, i);
      *reinterpret_cast<std::uint32_t*>(base + h * 8192 + epilogue::sm90_staging_offset(at.row, at.col)) = held[16 * h + i];
    }
  }
  fence_proxy_async_shared();
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
  if (wg_thread == 0) {
    TESSEL_UNROLL
    for (int h = 0; h < Held; ++h) SM90_TMA_STORE::copy(&p.tma_d, base + h * 8192, {n0 + 64 * (Blocks - Held + h), m0, batch});
    tma_store_commit();
  }
}

// After sm90_epilogue_held: the buffer is the epilogue's again once those stores have read it --
// thread 0 waits for that, and the warpgroup meets. Run a k-tile after them, inside the mainloop,
// where the wait is normally over and the tensor core has wgmmas queued.
TESSEL_DEVICE inline void sm90_epilogue_drain(int wg_thread, int consumer) {
  if (wg_thread == 0) tma_store_wait_read<0>();
  named_barrier_sync(sm90_consumer_barrier(consumer), 128);
}

// Box `box` (columns [64 box, 64 box + 64)) of C's block of this consumer's tile rows (64 x TileN
// at row m0, column n0, batch `batch`) into its staging buffer by TMA (p.c_by_tma), in the layout
// the TMA stores read, completing on c_full. Issued by one thread during the tile's mainloop, box
// 0 first: it waits until the previous tile's D stores have read the buffer and announces the
// whole block's bytes, so c_full completes once every box has landed; the epilogue waits for it.
template <int TileN>
TESSEL_DEVICE void sm90_load_c_box(Sm90GemmParams const& p, std::uint16_t* staging, std::uint64_t* c_full, int m0, int n0,
                                   int batch, int box) {
  if (box == 0) {
    tma_store_wait_read<0>();
    mbarrier_arrive_expect_tx(c_full, std::uint32_t(64 * TileN * 2));
  }
  SM90_TMA_LOAD::copy(&p.tma_c, c_full, reinterpret_cast<char*>(staging) + box * 8192, {n0 + 64 * box, m0, batch});
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

}  // namespace tessel::kernel::detail
