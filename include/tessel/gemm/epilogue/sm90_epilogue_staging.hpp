// tessel/gemm/epilogue/sm90_epilogue_staging.hpp -- where the sm_90a GEMM's consumer warpgroup puts
// its accumulators in shared memory before a 16-bit D leaves (by TMA stores or row copies).
//
// A consumer owns 64 rows of the tile; its staging buffer holds them as 16-bit D values: TileN / 64
// boxes of 64 x 64, each in the 128-byte swizzle (the 16-byte chunk c of row r sits at chunk
// c ^ (r % 8)) -- exactly what a TMA box of 64 16-bit columns reads.
//
// The accumulators arrive in wgmma's layout (tessel/arch/sm90_mma_wgmma.hpp): thread (warp w,
// lane l) holds rows 16w + l/4 (+8) and the column pairs 8j + 2(l%4) (+1); each pair leaves as one
// 4-byte store.
//   sm90_staging_offset   byte offset of element (row, col)
//   sm90_staged_stores    stores per thread: TileN / 4 (j, h)
//   sm90_staged_store     store i = 2j + h of a thread: its row and first column
//   sm90_staged_register  the accumulator register of element t (0, 1) of store i
// Plain C++: the kernel and the host tests (coverage, bank conflicts) use the same functions.
#pragma once

#include <tessel/config.hpp>

namespace tessel::epilogue {

// (col / 64) * 8192 + row * 128 + (((col % 64) / 8) ^ (row % 8)) * 16 + (col % 8) * 2, in bit
// operations: the kernel's rows are 16 warp + lane / 4 + 8 h, and written this way the compiler
// sees that row % 8 is lane / 4 for every store and folds the rest into immediates (the division
// form cost the kernel registers, and spills in its mainloop).
TESSEL_HOST_DEVICE constexpr int sm90_staging_offset(int row, int col) {
  return ((col >> 6) << 13) + (row << 7) + ((((col >> 3) & 7) ^ (row & 7)) << 4) + ((col & 7) << 1);
}

TESSEL_HOST_DEVICE constexpr int sm90_staged_stores(int tile_n) { return tile_n / 4; }

struct Sm90StagedStore {
  int row, col;  // of the consumer's 64 x TileN buffer; the store writes (row, col) and (row, col + 1)
};

// Store i (0 <= i < sm90_staged_stores) of consumer thread `thread` (0..127): i = 2 j + h.
TESSEL_HOST_DEVICE constexpr Sm90StagedStore sm90_staged_store(int thread, int i) {
  int const warp = (thread >> 5) & 3, lane = thread & 31;  // thread / 32, thread % 32 for 0 <= thread < 128
  return {16 * warp + (lane >> 2) + 8 * (i % 2), 8 * (i / 2) + 2 * (lane & 3)};
}

// The accumulator register (index into the thread's TileN / 2) of element t of store i.
TESSEL_HOST_DEVICE constexpr int sm90_staged_register(int i, int t) { return 4 * (i / 2) + 2 * (i % 2) + t; }

}  // namespace tessel::epilogue
