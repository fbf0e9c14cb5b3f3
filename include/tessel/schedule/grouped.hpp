// tessel/schedule/grouped.hpp -- the tiles of a grouped GEMM (G problems sharing N and K, group g
// owning rows [start_g, end_g) of one contiguous A and D) as one index space a persistent grid walks.
//
// Group g has rows_g = end_g - start_g rows, m_tiles_g = ceil(rows_g / TileM) tile rows and
// n_tiles tile columns; its tiles are the linear ids [ends[g - 1], ends[g]) of the walk, where
// ends is the inclusive prefix sum of m_tiles_g * n_tiles (an empty group owns no ids). Inside a
// group the tiles go in bands of kGroupedBand tile rows, tile rows fastest, so the CTAs of one
// wave share a few A strips and a few B strips in L2: a group of at most kGroupedBand tile rows
// (most MoE experts) is walked down each B strip by all its tile rows at once, so each B byte
// comes from DRAM once; a tall group does not stream all of its A per wave.
//
//   e.g. n_tiles = 2, groups of 300, 0, 1 rows, TileM = 128: m_tiles 3, 0, 1; ends = 6, 6, 8
//        ids 0..5 -> group 0: (m,n) = (0,0) (1,0) (2,0) (0,1) (1,1) (2,1); ids 6, 7 -> group 2: (0,0) (0,1)
//
// grouped_rows clamps the caller's offsets so that no group reaches outside [0, total_m): a group
// whose end is below its start (decreasing offsets) is empty. Plain C++ (host-tested:
// tests/host/grouped_schedule_test.cpp).
#pragma once

#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// Tile rows per raster band inside a group (as the persistent scheduler's bands of 8).
inline constexpr int kGroupedBand = 8;

struct GroupedRows {
  std::int64_t start, end;  // start <= end, both in [0, total_m]
};

// The rows of group g from the cumulative row ends `offsets` (offsets[g] = end of group g; group 0
// starts at row 0), clamped into [0, total_m].
TESSEL_HOST_DEVICE constexpr GroupedRows grouped_rows(int const* offsets, int g, std::int64_t total_m) {
  auto const clamp = [total_m](std::int64_t v) { return v < 0 ? std::int64_t(0) : v > total_m ? total_m : v; };
  std::int64_t const start = g == 0 ? 0 : clamp(offsets[g - 1]);
  std::int64_t const end = clamp(offsets[g]);
  return {start, end > start ? end : start};
}

// The tiles of one group: ceil(rows / tile_m) tile rows times n_tiles.
TESSEL_HOST_DEVICE constexpr long long grouped_tiles(std::int64_t rows, int tile_m, int n_tiles) {
  return (rows + tile_m - 1) / tile_m * (long long)n_tiles;
}

struct GroupedTile {
  int group;
  int m_tile;  // tile row inside the group (its rows start at start_g + m_tile * TileM)
  int n_tile;
};

// The group of linear id t: the first g with ends[g] > t. Pre: 0 <= t < ends[groups - 1], ends
// non-decreasing.
TESSEL_HOST_DEVICE constexpr int grouped_group_of(long long t, long long const* ends, int groups) {
  int lo = 0, hi = groups - 1;
  while (lo < hi) {
    int const mid = (lo + hi) / 2;
    if (ends[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Linear id t -> (group, tile row, tile column) (see the file comment). Pre: as grouped_group_of.
TESSEL_HOST_DEVICE constexpr GroupedTile grouped_tile_of(long long t, long long const* ends, int groups, int n_tiles) {
  int const g = grouped_group_of(t, ends, groups);
  long long const first = g == 0 ? 0 : ends[g - 1];
  long long const local = t - first;
  long long const m_tiles = (ends[g] - first) / n_tiles;
  long long const band_tiles = (long long)kGroupedBand * n_tiles;
  long long const band = local / band_tiles;
  long long const rest = local - band * band_tiles;
  long long const rows_left = m_tiles - band * kGroupedBand;
  long long const band_rows = rows_left < kGroupedBand ? rows_left : kGroupedBand;
  return {g, int(band * kGroupedBand + rest % band_rows), int(rest / band_rows)};
}

}  // namespace tessel
