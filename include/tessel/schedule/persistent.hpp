// tessel/schedule/persistent.hpp -- a persistent tile scheduler: a fixed grid of CTAs walks the tiles.
//
// Instead of one block per tile, the kernel launches grid = min(sm_count * ctas_per_sm, tiles)
// CTAs, which stay resident and walk the tiles: CTA c processes the tiles with linear ids
//   c, c + grid, c + 2*grid, ...        (a kernel: for (t = first_tile(c); is_valid(t); t = next_tile(t)))
// so step s of all CTAs together -- one "wave" -- is the linear ids [s*grid, (s+1)*grid). A linear
// id t names tile (m, n) of batch l = t / (tiles_m*tiles_n) through a GroupedRaster
// (schedule/raster.hpp): raster along M or N (chosen from the tile counts unless overridden) in
// bands of `group` = 1..8 tiles, so the tiles of one wave share A and B panels in L2. Each CTA
// runs every k-iteration of its tiles (no K split; see stream_k.hpp for that).
//
//   e.g. tiles 4x4 (batch 1), 3 CTAs, raster along N, group 1:
//        CTA 0: tiles 0,3,6,9,12,15 = (0,0) (0,3) (1,2) (2,1) (3,0) (3,3)
//        CTA 1: tiles 1,4,7,10,13   = (0,1) (1,0) (1,3) (2,2) (3,1)
//        CTA 2: tiles 2,5,8,11,14   = (0,2) (1,1) (2,0) (2,3) (3,2)
//
// balance_waves: launch only as many CTAs as finish the tiles in the same number of waves as
// the full grid, grid = ceil(tiles / waves), so the last wave is (nearly) full instead of part
// idle -- e.g. 256 tiles on 66 resident CTAs are 4 waves, the last with 58 tiles; balanced, 64
// CTAs run 4 full waves. No wave more, and the CTAs left out would have idled in the last one.
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/schedule/fast_divisor.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/schedule_error.hpp>

namespace tessel {

// PersistentArguments: what the host chooses for a persistent schedule.
struct PersistentArguments {
  int sm_count = 0;                                        // multiprocessors of the device (>= 1)
  int ctas_per_sm = 1;                                     // resident CTAs per SM the kernel fits (>= 1)
  RasterOrderOption raster = RasterOrderOption::kHeuristic;
  int group = 1;                                           // band width of the raster, 1..8
  bool balance_waves = false;                             // the fewest CTAs that take as few waves
};

namespace detail {

// Checks the arguments shared by the persistent and Stream-K schedulers (host).
TESSEL_HOST_DEVICE constexpr void check_scheduler_arguments(char const* who, GemmCoord tiled_shape, int sm_count,
                                                            int ctas_per_sm, int group) {
  schedule_require(tiled_shape.m() >= 0 && tiled_shape.n() >= 0, who, ": tiled shape (", tiled_shape.m(), ",",
                   tiled_shape.n(), ",", tiled_shape.k(), ") must not be negative");
  schedule_require(tiled_shape.k() >= 1, who, ": tiled_shape.k() is the batch count, ", tiled_shape.k(),
                   ", and must be >= 1 (use 1 for an unbatched GEMM)");
  schedule_require(sm_count >= 1, who, ": sm_count = ", sm_count,
                   " must be >= 1 (ask the device: cudaDevAttrMultiProcessorCount)");
  schedule_require(ctas_per_sm >= 1, who, ": ctas_per_sm = ", ctas_per_sm,
                   " must be >= 1 (how many of the kernel's CTAs fit on one SM at once)");
  schedule_require(group >= 1 && group <= 8, who, ": group = ", group,
                   " must be in 1..8 (the raster band width in tiles; 1 = no grouping)");
}

}  // namespace detail

// PersistentTileScheduler: the schedule, as plain data a kernel receives by value. All
// mappings are pure functions of (CTA index, step) or of a linear tile id.
class PersistentTileScheduler {
 public:
  PersistentTileScheduler() = default;

  // Builds the schedule of a tiled shape (tiles_m, tiles_n, batch count).
  //   Pre: tiled shape >= 0 with batch >= 1; sm_count, ctas_per_sm >= 1; group in 1..8;
  //        checked on the host (ScheduleError). The grid's CTAs must all be resident at once
  //        (ctas_per_sm is what the kernel's resources allow), or a persistent kernel gains nothing.
  //   Post: grid_size() == g = min(sm_count * ctas_per_sm, tile_count()); 0 when there are no tiles.
  //         With balance_waves, ceil(tile_count() / w) for w = ceil(tile_count() / g) waves: the
  //         smallest grid that still needs only w.
  static constexpr PersistentTileScheduler make(GemmCoord tiled_shape, PersistentArguments const& args) {
    detail::check_scheduler_arguments("PersistentTileScheduler", tiled_shape, args.sm_count, args.ctas_per_sm,
                                      args.group);
    PersistentTileScheduler s;
    s.raster_ = GroupedRaster{tiled_shape.m(), tiled_shape.n(),
                              resolve_raster_order(args.raster, tiled_shape.m(), tiled_shape.n()), args.group};
    s.batches_ = tiled_shape.k();
    long long const want = static_cast<long long>(args.sm_count) * args.ctas_per_sm;
    detail::schedule_require(want <= 2147483647LL, "PersistentTileScheduler: sm_count * ctas_per_sm = ", want,
                             " CTAs does not fit a CUDA grid's x extent (2^31-1)");
    long long const tiles = s.tile_count();
    long long grid = want < tiles ? want : tiles;
    if (args.balance_waves && grid > 0) {
      long long const waves = (tiles + grid - 1) / grid;
      grid = (tiles + waves - 1) / waves;
    }
    s.grid_ = static_cast<int>(grid);
    if (s.fits32() && grid > 0) {  // the divisors of the 32-bit walk (tiles_for32, tile_offset32)
      GroupedRaster const& r = s.raster_;
      bool const along_n = r.order == RasterOrder::kAlongN;
      long long const across = along_n ? r.tiles_m : r.tiles_n, along = along_n ? r.tiles_n : r.tiles_m;
      long long const last = across % r.group == 0 ? r.group : across % r.group;  // the last band's width
      s.grid_div_ = FastDivisor32::make(grid);
      s.band_div_ = FastDivisor32::make(along > 0 ? r.group * along : 1);
      s.group_div_ = FastDivisor32::make(r.group);
      s.last_div_ = FastDivisor32::make(last > 0 ? last : 1);
      s.batch_div_ = FastDivisor32::make(r.size() > 0 ? r.size() : 1);
    }
    return s;
  }

  // CTAs to launch, and the launch grid (grid_size(), 1, 1).
  TESSEL_HOST_DEVICE constexpr int grid_size() const { return grid_; }
  TESSEL_HOST_DEVICE constexpr Dim3 grid_shape() const { return Dim3{static_cast<unsigned>(grid_), 1u, 1u}; }

  // Tiles over all batches: tiles_m * tiles_n * batches.
  TESSEL_HOST_DEVICE constexpr long long tile_count() const { return raster_.size() * batches_; }

  TESSEL_HOST_DEVICE constexpr GroupedRaster const& raster() const { return raster_; }
  TESSEL_HOST_DEVICE constexpr GemmCoord tiled_shape() const {
    return GemmCoord(raster_.tiles_m, raster_.tiles_n, batches_);
  }

  // The walk of CTA `cta`: first_tile, then next_tile while is_valid. Linear ids.
  TESSEL_HOST_DEVICE constexpr long long first_tile(int cta) const { return cta; }
  TESSEL_HOST_DEVICE constexpr long long next_tile(long long linear) const { return linear + grid_; }
  TESSEL_HOST_DEVICE constexpr bool is_valid(long long linear) const { return linear >= 0 && linear < tile_count(); }

  // The linear id CTA `cta` processes at step `step` (valid or not).
  TESSEL_HOST_DEVICE constexpr long long linear_tile(int cta, long long step) const {
    return cta + step * grid_;
  }

  // How many tiles CTA `cta` processes: ceil((tile_count - cta) / grid). Pre: 0 <= cta < grid.
  // (In 32-bit arithmetic when the tile count allows, as tile_offset: on the GPU a 64-bit division
  // is a call of a ~70-instruction routine, and the kernel's first unit waits for it.)
  TESSEL_HOST_DEVICE constexpr long long tiles_for(int cta) const {
    long long const t = tile_count();
    if (cta >= t) return 0;
    if (t <= 0x7fffffffLL) return (unsigned(t) - unsigned(cta) + unsigned(grid_) - 1u) / unsigned(grid_);
    return (t - cta + grid_ - 1) / grid_;
  }

  // The tile (m, n, batch) of linear id `linear`. Pre: is_valid(linear).
  TESSEL_HOST_DEVICE constexpr GemmCoord tile_offset(long long linear) const {
    long long const per_batch = raster_.size();
    if (batches_ == 1) return raster_(linear);
    if (linear <= 0xffffffffLL && per_batch <= 0xffffffffLL) {
      unsigned const l = unsigned(linear), b = unsigned(per_batch);
      GemmCoord const mn = raster_(l % b);
      return GemmCoord(mn.m(), mn.n(), l / b);
    }
    GemmCoord const mn = raster_(linear % per_batch);
    return GemmCoord(mn.m(), mn.n(), linear / per_batch);
  }

  // Whether tiles_for32 and tile_offset32 serve this schedule: the tile count, and the raster's
  // bands of ids, below 2^31.
  TESSEL_HOST_DEVICE constexpr bool fits32() const {
    long long const along = raster_.order == RasterOrder::kAlongN ? raster_.tiles_n : raster_.tiles_m;
    return tile_count() <= 0x7fffffffLL && raster_.group * along <= 0x7fffffffLL;
  }
  // tiles_for and tile_offset in 32-bit arithmetic, every division by a divisor make() prepared
  // (FastDivisor32), no test for the range and no 64-bit fallback. Pre: fits32().
  // (A kernel's first unit waits for this arithmetic and for its instructions to be fetched:
  // straight-line code with no division routine in it is short on both counts.)
  TESSEL_HOST_DEVICE constexpr int tiles_for32(int cta) const {
    std::uint32_t const t = static_cast<std::uint32_t>(tile_count());
    std::uint32_t const c = static_cast<std::uint32_t>(cta);
    return c >= t ? 0 : static_cast<int>(grid_div_.div(t - c + static_cast<std::uint32_t>(grid_) - 1u));
  }
  TESSEL_HOST_DEVICE constexpr GemmCoord tile_offset32(std::uint32_t linear) const {
    if (batches_ == 1) return walk32(linear);
    std::uint32_t const b = batch_div_.div(linear);
    GemmCoord const mn = walk32(linear - b * batch_div_.divisor());
    return GemmCoord(mn.m(), mn.n(), b);
  }

  // The linear id of tile (m, n, batch): the inverse of tile_offset.
  TESSEL_HOST_DEVICE constexpr long long linear_of(GemmCoord tile) const {
    return tile.k() * raster_.size() + raster_.index_of(tile.m(), tile.n());
  }

 private:
  // raster_(id) for id < raster_.size(), as GroupedRaster::walk with the prepared divisors.
  TESSEL_HOST_DEVICE constexpr GemmCoord walk32(std::uint32_t id) const {
    bool const along_n = raster_.order == RasterOrder::kAlongN;
    std::uint32_t const across = static_cast<std::uint32_t>(along_n ? raster_.tiles_m : raster_.tiles_n);
    std::uint32_t const band = band_div_.div(id);
    std::uint32_t const first = band * group_div_.divisor();
    bool const last = across - first < group_div_.divisor();
    FastDivisor32 const& width = last ? last_div_ : group_div_;
    std::uint32_t const local = id - band * band_div_.divisor();
    std::uint32_t const b = width.div(local);  // position along the sweep
    long long const a = first + (local - b * width.divisor());  // position across the bands
    return along_n ? GemmCoord(a, b, 0) : GemmCoord(b, a, 0);
  }

  GroupedRaster raster_{};
  long long batches_ = 1;
  int grid_ = 0;
  // The 32-bit walk's divisors (fits32() schedules): the grid, a band's ids (group * the swept
  // extent), the band width and the last band's, and one batch's tiles.
  FastDivisor32 grid_div_{}, band_div_{}, group_div_{}, last_div_{}, batch_div_{};
};

}  // namespace tessel
