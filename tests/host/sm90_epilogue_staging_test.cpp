// The sm_90a GEMM's epilogue staging (gemm/epilogue/sm90_epilogue_staging.hpp) on the host: the
// staged stores of every consumer thread cover the 64 x TileN buffer once, each element holding
// the accumulator that wgmma's layout puts at that (row, column); the buffer layout is a bijection;
// and every store instruction of every warp is free of bank conflicts.
#include <tessel/analysis/bank_conflicts.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>

#include <gtest/gtest.h>

#include <vector>

using namespace tessel;

TEST(Sm90EpilogueStaging, EveryElementOnceHoldingItsAccumulator) {
  for (int tile_n : {64, 128, 256}) {
    int const stores = epilogue::sm90_staged_stores(tile_n);
    std::vector<int> hits(std::size_t(64 * tile_n), 0);
    std::vector<int> used(std::size_t(64 * tile_n), 0);
    for (int thread = 0; thread < 128; ++thread) {
      for (int i = 0; i < stores; ++i) {
        epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(thread, i);
        ASSERT_EQ(at.col % 2, 0) << "a store is one aligned pair";
        for (int t = 0; t < 2; ++t) {
          int const reg = epilogue::sm90_staged_register(i, t);
          ASSERT_GE(reg, 0);
          ASSERT_LT(reg, tile_n / 2);
          WgmmaCoord const acc = wgmma_accumulator_coord(thread, reg);
          EXPECT_EQ(acc.row, at.row) << "tile_n " << tile_n << " thread " << thread << " store " << i;
          EXPECT_EQ(acc.col, at.col + t) << "tile_n " << tile_n << " thread " << thread << " store " << i;
          ++hits[std::size_t(at.row * tile_n + at.col + t)];
          int const offset = epilogue::sm90_staging_offset(at.row, at.col + t);
          EXPECT_EQ(offset, epilogue::sm90_staging_offset(at.row, at.col) + 2 * t) << "a pair is 4 contiguous bytes";
          ASSERT_GE(offset, 0);
          ASSERT_LT(offset, 2 * 64 * tile_n);
          ++used[std::size_t(offset / 2)];
        }
      }
    }
    for (int e = 0; e < 64 * tile_n; ++e) ASSERT_EQ(hits[std::size_t(e)], 1) << "element " << e;
    for (int u : used) ASSERT_EQ(u, 1) << "two elements share a buffer slot";
  }
}

TEST(Sm90EpilogueStaging, OffsetIsTheSwizzledBoxLayout) {
  // The bit form against the definition: box col / 64 of 8192 bytes, 128-byte rows, the 16-byte
  // chunk (col % 64) / 8 swizzled by row % 8.
  for (int row = 0; row < 64; ++row)
    for (int col = 0; col < 256; ++col)
      ASSERT_EQ(epilogue::sm90_staging_offset(row, col),
                (col / 64) * 8192 + row * 128 + (((col % 64) / 8) ^ (row % 8)) * 16 + (col % 8) * 2)
          << row << "," << col;
}

TEST(Sm90EpilogueStaging, StoresAreConflictFree) {
  using analysis::analyse;
  using analysis::shared_instruction;
  using analysis::SmemOp;
  for (int tile_n : {64, 128, 256}) {
    for (int warp = 0; warp < 4; ++warp) {
      for (int i = 0; i < epilogue::sm90_staged_stores(tile_n); ++i) {
        auto const r = analyse(shared_instruction(SmemOp::access, 4, [&](int lane) {
          epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(32 * warp + lane, i);
          return epilogue::sm90_staging_offset(at.row, at.col);
        }));
        EXPECT_EQ(r.conflicts(), 0) << "tile_n " << tile_n << " warp " << warp << " store " << i;
      }
    }
  }
  // The same stores without the swizzle conflict 8-way: the check can fail.
  auto const plain = analyse(shared_instruction(SmemOp::access, 4, [](int lane) {
    epilogue::Sm90StagedStore const at = epilogue::sm90_staged_store(lane, 0);
    return at.row * 128 + at.col * 2;
  }));
  EXPECT_EQ(plain.conflicts(), 7);
}
