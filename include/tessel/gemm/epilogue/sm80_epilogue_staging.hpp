// tessel/gemm/epilogue/sm80_epilogue_staging.hpp -- the geometry of the sm_80 epilogue's staging
// buffer, as data (host-compilable, so tests can check it; the epilogue itself is
// sm80_epilogue_staged.hpp).
//
// Sm80EpilogueStaging<Config>:
//   StepM   rows of one MMA_M step of the CTA: 16 x WarpsM (the rows every warp's accumulators of
//           one MMA_M index span)
//   Passes  BLK_M / StepM: the tile is written one step at a time
//   Pitch   floats per staged row: BLK_N + 8. The accumulators go in as 64-bit column pairs; a
//           half-warp covers 4 rows x 4 pairs, and rows 8 floats (32 bytes) apart put those 4 rows
//           on 4 different 32-byte bank groups: conflict-free
//   StagingLayout  (BLK_M,BLK_N) -> float offset, m = r + StepM * pass -> r * Pitch + n: the
//           passes alias one StepM x Pitch buffer (stride 0 on the pass mode)
//   read_offset(thread, j, first)  the read-back: chunk `thread + j * Threads` of a pass is 8
//           consecutive floats of one row, read as two 16-byte loads; lanes 4-7 of each quarter-warp
//           read their upper half first, so 8 lanes whose chunks lie 32 bytes apart cover 32 banks
//   e.g. 128x256 tile, 2x4 warps: StepM 32, Passes 4, Pitch 264, buffer 33 KiB
//
// Sm80EpilogueTileStaging<Config, Out>: the whole tile at once, already converted to D's type Out
// (the epilogue's path for a tile inside D with aligned rows, beta == 0 and no split-K, when the
// buffer fits in the shared memory it may use):
//   Pitch   elements of Out per staged row: BLK_N + 8. The accumulators go in as column pairs
//           (4-byte stores of 16-bit Out, 8-byte of fp32); rows 16 (32) bytes apart put a warp's
//           8 rows (a half-warp's 4) on distinct banks: conflict-free
//   StagingLayout  (BLK_M,BLK_N) -> element offset m * Pitch + n
//   chunk(thread, j)  the read-back: chunk `thread + j * Threads` of the tile is the 16 bytes at
//           (row, col) -- consecutive lanes on consecutive chunks of a row, one 16-byte load and one
//           16-byte store to D each
//   e.g. 128x256 tile, bf16: Pitch 264, 66 KiB, 16 chunks per thread (256 threads)
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>

namespace tessel::epilogue {

template <class Config>
struct Sm80EpilogueStaging {
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN;
  static constexpr int Threads = Config::Threads;
  static constexpr int StepM = 16 * Config::WarpsM;
  static constexpr int Passes = BlkM / StepM;
  static constexpr int Pitch = BlkN + 8;
  static constexpr int ChunksPerRow = BlkN / 8;
  static constexpr int ChunksPerPass = StepM * ChunksPerRow;
  static constexpr int ChunksPerThread = ChunksPerPass / Threads;
  static_assert(ChunksPerPass % Threads == 0,
                "sm80 epilogue: the threads must split a pass's 8-element chunks evenly; change the tile or the warps");
  static_assert(BlkN % 32 == 0, "sm80 epilogue: the staging pitch assumes BLK_N is a multiple of 32 floats");

  using StagingLayout = Layout<Shape<Shape<Int<StepM>, Int<Passes>>, Int<BlkN>>, Stride<Stride<Int<Pitch>, _0>, _1>>;

  struct Chunk {
    int row;  // row of the pass
    int col;  // first of its 8 columns
  };
  TESSEL_HOST_DEVICE static constexpr Chunk chunk(int thread, int j) {
    int const c = thread + j * Threads;
    return {c / ChunksPerRow, (c % ChunksPerRow) * 8};
  }
  // Which half (0: columns 0-3, 1: 4-7) a thread reads first.
  TESSEL_HOST_DEVICE static constexpr int first_half(int thread) { return (thread >> 2) & 1; }
  // Float offset of the first (second) 16-byte load of chunk j.
  TESSEL_HOST_DEVICE static constexpr int read_offset(int thread, int j, bool first) {
    Chunk const c = chunk(thread, j);
    int const h = first ? first_half(thread) : 1 - first_half(thread);
    return c.row * Pitch + c.col + 4 * h;
  }
};

template <class Config, class Out>
struct Sm80EpilogueTileStaging {
  static constexpr int BlkM = Config::TileM, BlkN = Config::TileN;
  static constexpr int Threads = Config::Threads;
  static constexpr int Pitch = BlkN + 8;
  static constexpr int ChunkElems = 16 / int(sizeof(Out));
  static constexpr int ChunksPerRow = BlkN / ChunkElems;
  static constexpr int ChunksPerThread = BlkM * ChunksPerRow / Threads;
  static constexpr int Bytes = BlkM * Pitch * int(sizeof(Out));
  static_assert(sizeof(Out) == 2 || sizeof(Out) == 4, "sm80 whole-tile staging: D is a 16-bit type or fp32");
  static_assert(BlkM * ChunksPerRow % Threads == 0,
                "sm80 whole-tile staging: the threads must split the tile's 16-byte chunks evenly; change the tile");
  static_assert(BlkN * int(sizeof(Out)) % 128 == 0,
                "sm80 whole-tile staging: the conflict-free pitch assumes rows of a multiple of 128 bytes");

  using StagingLayout = Layout<Shape<Int<BlkM>, Int<BlkN>>, Stride<Int<Pitch>, _1>>;

  struct Chunk {
    int row;  // row of the tile
    int col;  // first of its ChunkElems columns
  };
  TESSEL_HOST_DEVICE static constexpr Chunk chunk(int thread, int j) {
    int const c = thread + j * Threads;
    return {c / ChunksPerRow, (c % ChunksPerRow) * ChunkElems};
  }
};

}  // namespace tessel::epilogue
