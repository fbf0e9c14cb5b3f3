// GemmIdentityThreadblockSwizzle<N> against seed 000, and the other one-block-per-tile swizzles
// (horizontal, batched, split-K) and the split-K partition, checked value by value.
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
void PrintTo(GemmCoord const& c, std::ostream* os) { *os << "(" << c.m() << "," << c.n() << "," << c.k() << ")"; }
void PrintTo(Dim3 const& d, std::ostream* os) { *os << "Dim3{" << d.x << "," << d.y << "," << d.z << "}"; }
void PrintTo(KRange const& r, std::ostream* os) { *os << "[" << r.begin << "," << r.end << ")"; }
}  // namespace tessel

using namespace tessel;

namespace {

// Seed 000's worked example: a 4x4-tile output. With N = 1 the grid is (4,4,1) and block (x,y)
// computes tile (m,n) = (x,y). With N = 2 the grid is (8,2,1); written out below as the tile
// (m,n) of every block, row by row of blockIdx.y.
//                                       blockIdx.x = 0      1      2      3      4      5      6      7
constexpr std::pair<int, int> kSeedMapN2[2][8] = {/* y = 0 */ {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}},
                                                  /* y = 1 */ {{0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {3, 3}}};
//                                       blockIdx.x = 0      1      2      3
constexpr std::pair<int, int> kSeedMapN1[4][4] = {/* y = 0 */ {{0, 0}, {1, 0}, {2, 0}, {3, 0}},
                                                  /* y = 1 */ {{0, 1}, {1, 1}, {2, 1}, {3, 1}},
                                                  /* y = 2 */ {{0, 2}, {1, 2}, {2, 2}, {3, 2}},
                                                  /* y = 3 */ {{0, 3}, {1, 3}, {2, 3}, {3, 3}}};

TEST(SeedExample, N1LaunchesGrid4x4AndIsTheIdentity) {
  using S = GemmIdentityThreadblockSwizzle<1>;
  GemmCoord const tiled = S::get_tiled_shape(GemmCoord(512, 512, 64), GemmCoord(128, 128, 32), 1);
  ASSERT_EQ(tiled, GemmCoord(4, 4, 1));
  int const log_tile = S::get_log_tile(tiled);
  EXPECT_EQ(log_tile, 0);
  EXPECT_EQ(S::get_grid_shape(tiled), (Dim3{4, 4, 1}));
  for (unsigned y = 0; y < 4; ++y) {
    for (unsigned x = 0; x < 4; ++x) {
      GemmCoord const want(kSeedMapN1[y][x].first, kSeedMapN1[y][x].second, 0);
      EXPECT_EQ(S::get_tile_offset(log_tile, Dim3{x, y, 0}), want) << "block (" << x << "," << y << ")";
      EXPECT_EQ(S::get_tile_offset(tiled, Dim3{x, y, 0}), want) << "block (" << x << "," << y << ")";
    }
  }
}

TEST(SeedExample, N2LaunchesGrid8x2WithTheSeedsMap) {
  using S = GemmIdentityThreadblockSwizzle<2>;
  GemmCoord const tiled(4, 4, 1);
  int const log_tile = S::get_log_tile(tiled);
  EXPECT_EQ(log_tile, 1);
  EXPECT_EQ(S::get_grid_shape(tiled), (Dim3{8, 2, 1}));
  for (unsigned y = 0; y < 2; ++y) {
    for (unsigned x = 0; x < 8; ++x) {
      GemmCoord const want(kSeedMapN2[y][x].first, kSeedMapN2[y][x].second, 0);
      EXPECT_EQ(S::get_tile_offset(log_tile, Dim3{x, y, 0}), want) << "block (" << x << "," << y << ")";
      // The seed's second overload (width N itself) agrees here: tiles_m, tiles_n >= N and 2^L == N.
      EXPECT_EQ(S::get_tile_offset(tiled, Dim3{x, y, 0}), want) << "block (" << x << "," << y << ")";
    }
  }
}

TEST(IdentitySwizzle, LogTileThresholds) {
  // N >= 8 && n >= 6 -> 3; N >= 4 && n >= 3 -> 2; N >= 2 && n >= 2 -> 1; else 0. m never matters.
  for (long long m : {1, 5, 100}) {
    for (long long n = 1; n <= 10; ++n) {
      GemmCoord const t(m, n, 1);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<1>::get_log_tile(t), 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<2>::get_log_tile(t), n >= 2 ? 1 : 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<3>::get_log_tile(t), n >= 2 ? 1 : 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<4>::get_log_tile(t), n >= 3 ? 2 : n >= 2 ? 1 : 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<7>::get_log_tile(t), n >= 3 ? 2 : n >= 2 ? 1 : 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<8>::get_log_tile(t), n >= 6 ? 3 : n >= 3 ? 2 : n >= 2 ? 1 : 0);
      EXPECT_EQ(GemmIdentityThreadblockSwizzle<16>::get_log_tile(t), n >= 6 ? 3 : n >= 3 ? 2 : n >= 2 ? 1 : 0);
    }
  }
}

TEST(IdentitySwizzle, GridShapeAndTiledShape) {
  using S8 = GemmIdentityThreadblockSwizzle<8>;
  // ceil division of M and N by the tile; k = split-K slices, whatever the problem's K.
  EXPECT_EQ(S8::get_tiled_shape(GemmCoord(1000, 512, 64), GemmCoord(128, 128, 32), 1), GemmCoord(8, 4, 1));
  EXPECT_EQ(S8::get_tiled_shape(GemmCoord(1, 1, 1), GemmCoord(128, 256, 64), 3), GemmCoord(1, 1, 3));
  EXPECT_EQ(S8::get_tiled_shape(GemmCoord(0, 7, 5), GemmCoord(4, 4, 4), 1), GemmCoord(0, 2, 1));
  // 8 x 4 tiles: L = 2 -> (8*4, ceil(4/4), 1); 3 x 7 tiles: L = 3 -> (24, 1, 2) with 3 no-op blocks.
  EXPECT_EQ(S8::get_grid_shape(GemmCoord(8, 4, 1)), (Dim3{32, 1, 1}));
  EXPECT_EQ(S8::get_grid_shape(GemmCoord(3, 7, 2)), (Dim3{24, 1, 2}));
  EXPECT_EQ(swizzled_grid_shape(GemmCoord(3, 7, 2), 1), (Dim3{6, 4, 2}));
  // Block (x=7, y=0) of the 3x7 grid is past the right edge: n = 7.
  EXPECT_EQ(S8::get_tile_offset(3, Dim3{7, 0, 0}), GemmCoord(0, 7, 0));
  EXPECT_FALSE(tile_in_bounds(GemmCoord(3, 7, 2), S8::get_tile_offset(3, Dim3{7, 0, 0})));
  EXPECT_TRUE(tile_in_bounds(GemmCoord(3, 7, 2), S8::get_tile_offset(3, Dim3{22, 0, 1})));
  EXPECT_EQ(S8::get_tile_offset(3, Dim3{22, 0, 1}), GemmCoord(2, 6, 1));
}

TEST(IdentitySwizzle, SecondOverloadKeepsTheSeedsBehaviour) {
  using S2 = GemmIdentityThreadblockSwizzle<2>;
  // tiles_m < N: the identity, whatever the block.
  EXPECT_EQ(S2::get_tile_offset(GemmCoord(1, 6, 1), Dim3{1, 2, 0}), GemmCoord(1, 2, 0));
  // Otherwise (x / N, y * N + x mod N).
  EXPECT_EQ(S2::get_tile_offset(GemmCoord(5, 6, 1), Dim3{7, 2, 3}), GemmCoord(3, 5, 3));
  // The gap the header warns about: 1 x 6 tiles, N = 2. get_grid_shape swizzles (L = 1, grid
  // (2, 3, 1)) but this overload takes the identity branch, so block (0, 2) names tile (0, 2)
  // while the log-tile overload names (0, 4) -- and tile (0, 4) is never produced by this one.
  GemmCoord const tiled(1, 6, 1);
  EXPECT_EQ(S2::get_grid_shape(tiled), (Dim3{2, 3, 1}));
  EXPECT_EQ(S2::get_tile_offset(tiled, Dim3{0, 2, 0}), GemmCoord(0, 2, 0));
  EXPECT_EQ(S2::get_tile_offset(S2::get_log_tile(tiled), Dim3{0, 2, 0}), GemmCoord(0, 4, 0));
}

TEST(IdentitySwizzle, RefusesImpossibleSizesOnTheHost) {
  using S = GemmIdentityThreadblockSwizzle<4>;
  EXPECT_THROW(S::get_tiled_shape(GemmCoord(64, 64, 64), GemmCoord(0, 64, 32), 1), ScheduleError);
  EXPECT_THROW(S::get_tiled_shape(GemmCoord(-1, 64, 64), GemmCoord(64, 64, 32), 1), ScheduleError);
  EXPECT_THROW(S::get_tiled_shape(GemmCoord(64, 64, 64), GemmCoord(64, 64, 32), 0), ScheduleError);
  try {
    S::get_tiled_shape(GemmCoord(64, 64, 64), GemmCoord(64, 0, 32), 1);
    FAIL() << "a zero tile extent must be refused";
  } catch (ScheduleError const& e) {
    EXPECT_NE(std::string(e.what()).find("tile size (64,0,32) must be at least 1"), std::string::npos) << e.what();
  }
}

TEST(IdentitySwizzle, IsUsableInConstantExpressions) {
  using S = GemmIdentityThreadblockSwizzle<8>;
  constexpr GemmCoord tiled = S::get_tiled_shape(GemmCoord(4096, 4096, 4096), GemmCoord(128, 128, 32), 1);
  static_assert(tiled == GemmCoord(32, 32, 1));
  static_assert(S::get_log_tile(tiled) == 3);
  static_assert(S::get_grid_shape(tiled) == Dim3{256, 4, 1});
  static_assert(S::get_tile_offset(3, Dim3{9, 1, 0}) == GemmCoord(1, 9, 0));
  SUCCEED();
}

TEST(Dim3, DispatchOrderAndLimits) {
  EXPECT_EQ(block_index_at(Dim3{8, 2, 1}, 9), (Dim3{1, 1, 0}));
  EXPECT_EQ(block_index_at(Dim3{3, 2, 4}, 3 * 2 * 3 + 1 * 3 + 1), (Dim3{1, 1, 3}));
  Dim3 const d{};
  EXPECT_EQ(d, (Dim3{1, 1, 1}));
  EXPECT_EQ((Dim3{3, 5, 7}).volume(), 105);
  EXPECT_TRUE(fits_cuda_grid(Dim3{2147483647u, 65535u, 65535u}));
  EXPECT_FALSE(fits_cuda_grid(Dim3{1, 65536u, 1}));
  EXPECT_FALSE(fits_cuda_grid(Dim3{0, 1, 1}));
}

TEST(HorizontalSwizzle, TransposesTheGrid) {
  using S = GemmHorizontalThreadblockSwizzle;
  GemmCoord const tiled(4, 3, 2);
  EXPECT_EQ(S::get_grid_shape(tiled), (Dim3{3, 4, 2}));
  EXPECT_EQ(S::get_log_tile(tiled), 0);
  EXPECT_EQ(S::get_tile_offset(0, Dim3{2, 1, 0}), GemmCoord(1, 2, 0));
  EXPECT_EQ(S::get_tile_offset(0, Dim3{0, 3, 1}), GemmCoord(3, 0, 1));
  EXPECT_EQ(GemmSplitKHorizontalThreadblockSwizzle::get_tile_offset(0, Dim3{1, 2, 3}), GemmCoord(2, 1, 3));
}

TEST(BatchedSwizzle, ZIsTheBatch) {
  using S = GemmBatchedIdentityThreadblockSwizzle;
  GemmCoord const tiled = S::get_tiled_shape(GemmCoord(256, 300, 64), GemmCoord(128, 128, 32), 3);
  EXPECT_EQ(tiled, GemmCoord(2, 3, 3));
  EXPECT_EQ(S::get_grid_shape(tiled), (Dim3{2, 3, 3}));
  EXPECT_EQ(S::get_tile_offset(0, Dim3{1, 2, 2}), GemmCoord(1, 2, 2));
  EXPECT_EQ(S::get_batch_idx(Dim3{1, 2, 2}), 2);
  EXPECT_THROW(S::get_tiled_shape(GemmCoord(256, 300, 64), GemmCoord(128, 128, 32), 0), ScheduleError);
}

TEST(SplitK, SerialSwizzleIsTheIdentitySwizzle) {
  using S = GemmSplitKIdentityThreadblockSwizzle<4>;
  GemmCoord const tiled = S::get_tiled_shape(GemmCoord(512, 512, 4096), GemmCoord(128, 128, 32), 3);
  EXPECT_EQ(tiled, GemmCoord(4, 4, 3));
  EXPECT_EQ(S::get_grid_shape(tiled), (Dim3{16, 1, 3}));
  EXPECT_EQ(S::get_tile_offset(2, Dim3{6, 0, 2}), GemmCoord(1, 2, 2));
}

TEST(SplitK, PartitionIsBalancedAndContiguous) {
  // The header's example: K = 1000, tile_k = 64 -> 16 iterations in 3 slices.
  auto const p = SplitKPartition::make(1000, 64, 3);
  EXPECT_EQ(p.iterations, 16);
  EXPECT_EQ(p.iteration_range(0), (KRange{0, 5}));
  EXPECT_EQ(p.iteration_range(1), (KRange{5, 10}));
  EXPECT_EQ(p.iteration_range(2), (KRange{10, 16}));
  EXPECT_EQ(p.element_range(0), (KRange{0, 320}));
  EXPECT_EQ(p.element_range(2), (KRange{640, 1000}));
  EXPECT_EQ(p.serial_predecessor(0), -1);
  EXPECT_EQ(p.serial_predecessor(2), 1);
  EXPECT_TRUE(p.is_final_slice(2));
  EXPECT_FALSE(p.is_final_slice(1));
  EXPECT_EQ(p.workspace_slot(1), 1);
  // Every (K, tile_k, S): the ranges tile [0, I) in order, sizes differ by at most one, and the
  // element ranges tile [0, K).
  for (long long k = 0; k <= 70; ++k) {
    for (long long tk : {1, 4, 16, 32}) {
      for (int s = 1; s <= 9; ++s) {
        auto const q = SplitKPartition::make(k, tk, s);
        ASSERT_EQ(q.iterations, (k + tk - 1) / tk);
        long long next = 0;
        long long next_elem = 0;
        long long lo = q.iterations;
        long long hi = 0;
        for (int i = 0; i < s; ++i) {
          KRange const r = q.iteration_range(i);
          ASSERT_EQ(r.begin, next) << "K " << k << " tile_k " << tk << " S " << s << " slice " << i;
          ASSERT_GE(r.size(), 0);
          lo = std::min(lo, r.size());
          hi = std::max(hi, r.size());
          next = r.end;
          KRange const e = q.element_range(i);
          ASSERT_EQ(e.begin, std::min(next_elem, k));
          next_elem = e.end;
        }
        EXPECT_EQ(next, q.iterations);
        EXPECT_EQ(next_elem, k);
        EXPECT_LE(hi - lo, 1);
      }
    }
  }
  EXPECT_THROW(SplitKPartition::make(100, 0, 2), ScheduleError);
  EXPECT_THROW(SplitKPartition::make(100, 16, 0), ScheduleError);
  EXPECT_THROW(SplitKPartition::make(-1, 16, 2), ScheduleError);
}

}  // namespace
