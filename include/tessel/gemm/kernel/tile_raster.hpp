// tessel/gemm/kernel/tile_raster.hpp -- which D tile a CTA computes, as a pure function of its index.
//
// Grouped raster: CTAs walk down a group of `group` tile rows before moving one tile column to
// the right, so CTAs resident at the same time share rows of A and columns of B in L2:
//
//   tiles_m = 5, tiles_n = 3, group = 2        block index -> (m, n)
//     n:    0  1  2
//   m=0     0  2  4        rows 0-1: the first group (2 x 3 = 6 blocks), column by column
//   m=1     1  3  5
//   m=2     6  8 10        rows 2-3: the second group
//   m=3     7  9 11
//   m=4    12 13 14        row 4: a last group of 1 row
//
// Plain C++ (host and device), tested on the host. Until the threadblock swizzles of
// tessel/schedule/ land this is the SIMT kernels' mapping.
#pragma once

#include <tessel/config.hpp>

namespace tessel::kernel {

inline constexpr int kRasterGroup = 8;

struct TileCoord {
  int m, n;
};

// Pre: 0 <= block < tiles_m * tiles_n, group >= 1. Post: a bijection onto [0,tiles_m) x [0,tiles_n).
TESSEL_HOST_DEVICE constexpr TileCoord grouped_tile_coord(long long block, int tiles_m, int tiles_n, int group) {
  long long const per_group = static_cast<long long>(group) * tiles_n;
  int const first_m = static_cast<int>(block / per_group) * group;
  int const rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  long long const in_group = block % per_group;
  return {first_m + static_cast<int>(in_group % rows), static_cast<int>(in_group / rows)};
}

}  // namespace tessel::kernel
