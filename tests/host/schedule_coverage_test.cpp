// Every one-block-per-tile swizzle, exhaustively: for tile grids 1x1 .. 37x53 and split-K (or
// batch) 1..4, each tile comes out of exactly one block, and every other block is recognised as
// a no-op by tile_in_bounds -- the predicate a kernel uses.
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace tessel;

namespace {

// Walks every block of `grid`, maps it with tile_of, and checks the contract. Returns "" when
// it holds, else a description of the first violation.
template <class TileOf>
std::string check_cover(GemmCoord tiled, Dim3 grid, TileOf tile_of) {
  std::vector<int> hits(static_cast<size_t>(tiled.product()), 0);
  long long noop = 0;
  for (long long p = 0; p < grid.volume(); ++p) {
    Dim3 const b = block_index_at(grid, p);
    GemmCoord const t = tile_of(b);
    if (!tile_in_bounds(tiled, t)) {
      ++noop;
      continue;
    }
    ++hits[static_cast<size_t>((t.k() * tiled.m() + t.m()) * tiled.n() + t.n())];
  }
  std::ostringstream err;
  for (long long i = 0; i < tiled.product(); ++i) {
    if (hits[static_cast<size_t>(i)] != 1) {
      long long const k = i / (tiled.m() * tiled.n());
      long long const m = (i / tiled.n()) % tiled.m();
      long long const n = i % tiled.n();
      err << "tile (" << m << "," << n << "," << k << ") produced " << hits[static_cast<size_t>(i)] << " times";
      return err.str();
    }
  }
  if (noop != grid.volume() - tiled.product()) {
    err << noop << " no-op blocks, expected " << grid.volume() - tiled.product();
    return err.str();
  }
  return "";
}

template <class Swizzle>
std::string check_swizzle(GemmCoord tiled) {
  int const log_tile = Swizzle::get_log_tile(tiled);
  return check_cover(tiled, Swizzle::get_grid_shape(tiled),
                     [&](Dim3 b) { return Swizzle::get_tile_offset(log_tile, b); });
}

constexpr int kMaxM = 37;
constexpr int kMaxN = 53;
constexpr int kMaxSplit = 4;

// Runs check(tiled) for every tiled shape of the sweep; stops at the first failure.
template <class Check>
void sweep(char const* name, Check check) {
  long long shapes = 0;
  for (int k = 1; k <= kMaxSplit; ++k) {
    for (int m = 1; m <= kMaxM; ++m) {
      for (int n = 1; n <= kMaxN; ++n) {
        GemmCoord const tiled(m, n, k);
        std::string const err = check(tiled);
        ASSERT_EQ(err, "") << name << " on tiled shape " << m << "x" << n << "x" << k;
        ++shapes;
      }
    }
  }
  EXPECT_EQ(shapes, kMaxM * kMaxN * kMaxSplit);
}

template <int N>
void sweep_identity() {
  sweep("GemmIdentityThreadblockSwizzle", check_swizzle<GemmIdentityThreadblockSwizzle<N>>);
  sweep("GemmSplitKIdentityThreadblockSwizzle", check_swizzle<GemmSplitKIdentityThreadblockSwizzle<N>>);
}

TEST(SwizzleCoverage, IdentityEveryN) {
  sweep_identity<1>();
  sweep_identity<2>();
  sweep_identity<3>();
  sweep_identity<4>();
  sweep_identity<5>();
  sweep_identity<6>();
  sweep_identity<7>();
  sweep_identity<8>();
}

TEST(SwizzleCoverage, IdentityEveryExplicitLogTile) {
  // The grid of swizzled_grid_shape(tiled, L) with the log-tile overload, for L = 0..5 (what
  // `tessel swizzle --log-tile L` draws), including widths far past tiles_n.
  for (int L = 0; L <= 5; ++L) {
    sweep("identity with explicit log tile", [L](GemmCoord tiled) {
      return check_cover(tiled, swizzled_grid_shape(tiled, L),
                         [L](Dim3 b) { return GemmIdentityThreadblockSwizzle<1>::get_tile_offset(L, b); });
    });
  }
}

TEST(SwizzleCoverage, NoOpBlocksArePastTheRightEdge) {
  // Identity no-op blocks are exactly the padding of the last grid row: m in range, n >= tiles_n.
  using S = GemmIdentityThreadblockSwizzle<8>;
  sweep("identity<8> no-op placement", [](GemmCoord tiled) -> std::string {
    int const L = S::get_log_tile(tiled);
    Dim3 const grid = S::get_grid_shape(tiled);
    long long expected_noop = static_cast<long long>(grid.x) * grid.y * grid.z - tiled.product();
    long long noop = 0;
    for (long long p = 0; p < grid.volume(); ++p) {
      Dim3 const b = block_index_at(grid, p);
      GemmCoord const t = S::get_tile_offset(L, b);
      if (tile_in_bounds(tiled, t)) continue;
      ++noop;
      if (!(t.m() < tiled.m() && t.n() >= tiled.n() && b.y == grid.y - 1)) return "a no-op block inside the grid";
    }
    return noop == expected_noop ? "" : "wrong number of no-op blocks";
  });
}

TEST(SwizzleCoverage, SecondOverloadWhereItAgreesWithTheGrid) {
  // get_tile_offset(tiled, block) is a bijection on get_grid_shape's grid exactly where the
  // header says: (tiles_m, tiles_n >= N and 2^L == N) or (identity branch and L == 0).
  auto check = []<int N>(std::integral_constant<int, N>) {
    using S = GemmIdentityThreadblockSwizzle<N>;
    sweep("second overload", [](GemmCoord tiled) -> std::string {
      int const L = S::get_log_tile(tiled);
      bool const identity_branch = tiled.m() < N || tiled.n() < N;
      bool const agrees = identity_branch ? L == 0 : (1 << L) == N;
      std::string const err =
          check_cover(tiled, S::get_grid_shape(tiled), [&](Dim3 b) { return S::get_tile_offset(tiled, b); });
      if (agrees && !err.empty()) return "documented to agree but: " + err;
      if (!agrees && err.empty()) return "documented to disagree but covers the tiles";
      return "";
    });
  };
  check(std::integral_constant<int, 1>{});
  check(std::integral_constant<int, 2>{});
  check(std::integral_constant<int, 4>{});
  check(std::integral_constant<int, 8>{});
}

TEST(SwizzleCoverage, HorizontalBatchedAndParallelSplitK) {
  sweep("GemmHorizontalThreadblockSwizzle", check_swizzle<GemmHorizontalThreadblockSwizzle>);
  sweep("GemmSplitKHorizontalThreadblockSwizzle", check_swizzle<GemmSplitKHorizontalThreadblockSwizzle>);
  sweep("GemmBatchedIdentityThreadblockSwizzle", check_swizzle<GemmBatchedIdentityThreadblockSwizzle>);
}

TEST(SwizzleCoverage, TheCheckerCatchesBrokenMaps) {
  // The checks above can fail: a map that drops the swizzle's low bits loses tiles, one that
  // ignores z duplicates them, one that shifts by a column runs past the edge.
  GemmCoord const tiled(5, 7, 2);
  using S = GemmIdentityThreadblockSwizzle<4>;
  int const L = S::get_log_tile(tiled);
  Dim3 const grid = S::get_grid_shape(tiled);
  EXPECT_EQ(check_cover(tiled, grid, [&](Dim3 b) { return S::get_tile_offset(L, b); }), "");
  EXPECT_NE(check_cover(tiled, grid, [&](Dim3 b) { return GemmCoord(b.x >> L, b.y << L, b.z); }), "");
  EXPECT_NE(check_cover(tiled, grid,
                        [&](Dim3 b) {
                          GemmCoord t = S::get_tile_offset(L, b);
                          return GemmCoord(t.m(), t.n(), 0);
                        }),
            "");
  EXPECT_NE(check_cover(tiled, grid,
                        [&](Dim3 b) {
                          GemmCoord t = S::get_tile_offset(L, b);
                          return GemmCoord(t.m(), t.n() + 1, t.k());
                        }),
            "");
  // A grid one block short misses a tile.
  EXPECT_NE(check_cover(GemmCoord(4, 4, 1), Dim3{4, 3, 1}, [](Dim3 b) { return GemmCoord(b.x, b.y, b.z); }), "");
}

}  // namespace
