// tessel/schedule/l2_locality.hpp -- how many operand panels each wave of concurrent CTAs touches.
//
// A CTA computing output tile (m, n) reads A row panel m (tile_m rows x K) and B column panel n
// (K x tile_n columns). CTAs that run at the same time share the panels they have in common
// through L2, so the fewer distinct panels a wave touches, the less DRAM traffic it causes.
//
// The model: launch positions 0, 1, 2, ... run in waves of `wave_size` (the CTAs resident at
// once, e.g. 132 on an H100 SXM / H200 with one CTA per SM): wave w is positions
// [w*wave_size, (w+1)*wave_size). For a one-block-per-tile swizzle a position is a block in
// CUDA's dispatch order (x fastest, then y, then z; block_index_at in dim3.hpp); for a
// persistent scheduler it is linear tile id cta + step*grid, so wave w is step w of every CTA.
// A wave's footprint is its distinct A row panels plus distinct B column panels (a panel is
// keyed by its m or n and its k = split-K slice or batch, which reads different data). No-op
// blocks take a launch position and touch nothing. Real hardware back-fills finished CTAs one
// by one, so waves blur; the counts compare orders, they do not predict hit rates.
//
// l2_locality_figure builds the figure of docs/schedules.md (printed by
// `tessel swizzle --locality`): identity / horizontal / persistent orders, ungrouped and grouped.
// Host only.
#pragma once

#include <tessel/schedule/dim3.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/horizontal_swizzle.hpp>
#include <tessel/schedule/identity_swizzle.hpp>
#include <tessel/schedule/persistent.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/schedule_error.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel {

// WaveFootprint: what one wave touches.
struct WaveFootprint {
  long long tiles = 0;     // tiles computed in the wave (no-op blocks excluded)
  long long a_panels = 0;  // distinct A row panels
  long long b_panels = 0;  // distinct B column panels
  long long panels() const { return a_panels + b_panels; }
};

// The footprint of each wave of a launch order with `positions` launch positions.
//   tile_at(p) -> std::optional<GemmCoord>: the tile launch position p computes (nullopt: no-op).
//   Pre: positions >= 0, wave_size >= 1 (ScheduleError).
//   Post: ceil(positions / wave_size) entries; the sum of their tiles is the number of
//   positions with a tile.
template <class TileAt>
std::vector<WaveFootprint> wave_footprints(long long positions, long long wave_size, TileAt tile_at) {
  detail::schedule_require(positions >= 0, "wave_footprints: positions = ", positions, " must not be negative");
  detail::schedule_require(wave_size >= 1, "wave_footprints: wave_size = ", wave_size,
                           " must be >= 1 (the number of CTAs resident at once)");
  std::vector<WaveFootprint> waves;
  std::vector<std::pair<long long, long long>> rows;
  std::vector<std::pair<long long, long long>> cols;
  for (long long first = 0; first < positions; first += wave_size) {
    rows.clear();
    cols.clear();
    long long const last = std::min(positions, first + wave_size);
    WaveFootprint w;
    for (long long p = first; p < last; ++p) {
      std::optional<GemmCoord> const tile = tile_at(p);
      if (!tile) continue;
      ++w.tiles;
      rows.emplace_back(tile->m(), tile->k());
      cols.emplace_back(tile->n(), tile->k());
    }
    std::sort(rows.begin(), rows.end());
    std::sort(cols.begin(), cols.end());
    w.a_panels = std::unique(rows.begin(), rows.end()) - rows.begin();
    w.b_panels = std::unique(cols.begin(), cols.end()) - cols.begin();
    waves.push_back(w);
  }
  return waves;
}

// The wave footprints of a one-block-per-tile swizzle (Identity, Horizontal, SplitK, Batched):
// positions are the blocks of Swizzle::get_grid_shape in dispatch order.
template <class Swizzle>
std::vector<WaveFootprint> swizzle_wave_footprints(GemmCoord tiled_shape, long long wave_size) {
  Dim3 const grid = Swizzle::get_grid_shape(tiled_shape);
  int const log_tile = Swizzle::get_log_tile(tiled_shape);
  return wave_footprints(grid.volume(), wave_size, [&](long long p) -> std::optional<GemmCoord> {
    GemmCoord const t = Swizzle::get_tile_offset(log_tile, block_index_at(grid, p));
    if (!tile_in_bounds(tiled_shape, t)) return std::nullopt;
    return t;
  });
}

// The wave footprints of a persistent schedule: wave w is step w of every CTA.
inline std::vector<WaveFootprint> persistent_wave_footprints(PersistentTileScheduler const& s) {
  return wave_footprints(s.tile_count(), s.grid_size() > 0 ? s.grid_size() : 1,
                         [&](long long p) -> std::optional<GemmCoord> { return s.tile_offset(p); });
}

// LocalityRow: one launch order of the figure, with its per-wave footprints.
struct LocalityRow {
  std::string order;                 // e.g. "identity<8> (log_tile 3)", "persistent along-N group 8"
  bool grouped = false;              // a swizzled or grouped order (not identity<1>, horizontal, group 1)
  std::vector<WaveFootprint> waves;

  // Mean and maximum of panels() over the waves.
  double mean_panels() const {
    if (waves.empty()) return 0.0;
    double sum = 0;
    for (auto const& w : waves) sum += static_cast<double>(w.panels());
    return sum / static_cast<double>(waves.size());
  }
  long long max_panels() const {
    long long m = 0;
    for (auto const& w : waves) m = std::max(m, w.panels());
    return m;
  }
  // Mean distinct A row panels and B column panels per wave.
  double mean_a_panels() const {
    double sum = 0;
    for (auto const& w : waves) sum += static_cast<double>(w.a_panels);
    return waves.empty() ? 0.0 : sum / static_cast<double>(waves.size());
  }
  double mean_b_panels() const {
    double sum = 0;
    for (auto const& w : waves) sum += static_cast<double>(w.b_panels);
    return waves.empty() ? 0.0 : sum / static_cast<double>(waves.size());
  }
};

// The L2-locality figure for `problem` cut into `tile`-sized tiles with `wave_size` CTAs per wave:
// identity<1,2,4,8>, horizontal, and the persistent scheduler along M and along N with groups
// 1, 2, 4, 8 (persistent grid = wave_size CTAs). Pre: as get_tiled_shape; wave_size >= 1.
//   e.g. 8192x8192 with 128x256 tiles and waves of 132: identity<1> touches 67 panels in wave 0
//        (all 64 A row panels and 3 B column panels); persistent along-N group 8 touches 25.
inline std::vector<LocalityRow> l2_locality_figure(GemmCoord problem, GemmCoord tile, int wave_size) {
  detail::schedule_require(wave_size >= 1, "l2_locality_figure: wave_size = ", wave_size, " must be >= 1");
  GemmCoord const tiled = GemmIdentityThreadblockSwizzle<1>::get_tiled_shape(problem, tile, 1);
  std::vector<LocalityRow> rows;
  auto identity_row = [&]<int N>(std::integral_constant<int, N>) {
    using S = GemmIdentityThreadblockSwizzle<N>;
    int const log_tile = S::get_log_tile(tiled);
    rows.push_back({"identity<" + std::to_string(N) + "> (log_tile " + std::to_string(log_tile) + ")", log_tile > 0,
                    swizzle_wave_footprints<S>(tiled, wave_size)});
  };
  identity_row(std::integral_constant<int, 1>{});
  identity_row(std::integral_constant<int, 2>{});
  identity_row(std::integral_constant<int, 4>{});
  identity_row(std::integral_constant<int, 8>{});
  rows.push_back({"horizontal", false, swizzle_wave_footprints<GemmHorizontalThreadblockSwizzle>(tiled, wave_size)});
  RasterOrder const heuristic = choose_raster_order(tiled.m(), tiled.n());
  for (RasterOrder order : {RasterOrder::kAlongM, RasterOrder::kAlongN}) {
    for (int group : {1, 2, 4, 8}) {
      PersistentArguments args;
      args.sm_count = wave_size;
      args.raster = order == RasterOrder::kAlongM ? RasterOrderOption::kAlongM : RasterOrderOption::kAlongN;
      args.group = group;
      auto const s = PersistentTileScheduler::make(tiled, args);
      std::string name = std::string("persistent along-") + (order == RasterOrder::kAlongM ? "M" : "N") +
                         " group " + std::to_string(group);
      if (order == heuristic) name += " (heuristic raster)";
      rows.push_back({name, group > 1, persistent_wave_footprints(s)});
    }
  }
  return rows;
}

}  // namespace tessel
