// tessel/gemm/epilogue/sm90_epilogue_staging.hpp -- where the sm_90a GEMM's consumer warpgroup puts
// its accumulators in shared memory before D leaves (by TMA stores or row copies).
//
// A consumer owns 64 rows of the tile; its staging buffer holds them as 16-bit D values in D's
// column order: TileN / 64 boxes of 64 x 64, each in the 128-byte swizzle (the 16-byte chunk c of
// row r sits at chunk c ^ (r % 8)) -- exactly what a TMA box of 64 16-bit columns reads.
//
// The accumulators arrive in wgmma's layout (tessel/arch/sm90_mma_wgmma.hpp): thread (warp w,
// lane l) holds rows 16w + l/4 (+8) and columns 8j + 2(l%4) (+1). When B was read in P residue
// classes (gemm/kernel/sm90_row_residues.hpp) accumulator column q is D column residue_row(q, P,
// TileN), so the P D columns P * (8jj + 2(l%4) + e) + t, t = 0..P-1, are all this thread's: the
// registers of accumulator columns q = t * TileN / P + 8jj + 2(l%4) + e. Each staged store writes
// such a run: 4 bytes (P = 1: the column pair; P = 2), 8 bytes (P = 4) or 16 bytes (P = 8).
//   sm90_staging_offset   byte offset of element (row, col)
//   sm90_staged_stores    stores per thread: TileN / 8 for P = 1 (j, h), TileN / (8P) * 2 * 2 (jj, h, e)
//   sm90_staged_store     store i of a thread: its row, first column and width
//   sm90_staged_register  the accumulator register of element t of store i
// Plain C++: the kernel and the host tests (coverage, bank conflicts) use the same functions.
#pragma once

#include <tessel/config.hpp>

namespace tessel::epilogue {

// (col / 64) * 8192 + row * 128 + (((col % 64) / 8) ^ (row % 8)) * 16 + (col % 8) * 2, in bit
// operations: the kernel's rows are 16 warp + lane / 4 + 8 h, and written this way the compiler
// sees that row % 8 is lane / 4 for every store and folds the rest into immediates (the division
// form cost the kernel registers and spills).
TESSEL_HOST_DEVICE constexpr int sm90_staging_offset(int row, int col) {
  return ((col >> 6) << 13) + (row << 7) + ((((col >> 3) & 7) ^ (row & 7)) << 4) + ((col & 7) << 1);
}

TESSEL_HOST_DEVICE constexpr int sm90_staged_stores(int tile_n, int b_classes) {
  return b_classes == 1 ? tile_n / 4 : (tile_n / (8 * b_classes)) * 4;
}

struct Sm90StagedStore {
  int row, col;  // of the consumer's 64 x TileN buffer
  int width;     // elements: 2 (P = 1) or P
};

// Store i (0 <= i < sm90_staged_stores) of consumer thread `thread` (0..127).
//   P = 1: i = 2 j + h; P > 1: i = 4 jj + 2 h + e.
TESSEL_HOST_DEVICE constexpr Sm90StagedStore sm90_staged_store(int thread, int i, int b_classes) {
  int const warp = (thread >> 5) & 3, lane = thread & 31;  // thread / 32, thread % 32 for 0 <= thread < 128
  int const h = (i / (b_classes == 1 ? 1 : 2)) % 2;
  int const row = 16 * warp + (lane >> 2) + 8 * h;
  if (b_classes == 1) return {row, 8 * (i / 2) + 2 * (lane & 3), 2};
  int const jj = i / 4, e = i % 2;
  return {row, b_classes * (8 * jj + 2 * (lane & 3) + e), b_classes};
}

// The accumulator register (index into the thread's TileN / 2) of element t of store i.
TESSEL_HOST_DEVICE constexpr int sm90_staged_register(int i, int t, int b_classes, int tile_n) {
  if (b_classes == 1) return 4 * (i / 2) + 2 * (i % 2) + t;
  int const jj = i / 4, h = (i / 2) % 2, e = i % 2;
  int const blocks = tile_n / (8 * b_classes);  // 8-column accumulator blocks per class
  return 4 * (t * blocks + jj) + 2 * h + e;
}

}  // namespace tessel::epilogue
