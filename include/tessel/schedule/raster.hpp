// tessel/schedule/raster.hpp -- the order in which a tile scheduler visits the tiles of a grid.
//
// GroupedRaster maps a linear tile id in [0, tiles_m * tiles_n) to a tile (m, n), walking the
// tile grid in bands `group` tiles wide:
//   kAlongN: a band is `group` tile rows. Within it, ids go down the band's rows, then one
//            column right (along N); then the next band. group = 1 is row-major order.
//   kAlongM: the transpose: a band is `group` tile columns; ids go across them, then one row
//            down (along M). group = 1 is column-major order.
// The last band is narrower when the extent is not a multiple of `group`. Consecutive ids stay
// inside `group` rows (columns), so CTAs that run together share A row panels (B column panels)
// in L2: a wave of W CTAs touches about group + W/group panels instead of 1 + W.
//
//   e.g. 4 x 3 tiles, kAlongN, group 2 (id at each tile):     m\n  0  1  2
//                                                             0    0  2  4
//                                                             1    1  3  5
//                                                             2    6  8 10
//                                                             3    7  9 11
//
// choose_raster_order picks the walk along the dimension with fewer tiles (ties: along N), so a
// band is swept quickly and the other operand's panels are reused by the next band.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/gemm_coord.hpp>

namespace tessel {

// RasterOrder: which way consecutive tile ids move (file comment).
enum class RasterOrder { kAlongM, kAlongN };

// RasterOrderOption: a RasterOrder, or kHeuristic to let choose_raster_order decide.
enum class RasterOrderOption { kHeuristic, kAlongM, kAlongN };

// The raster order for a tiles_m x tiles_n grid: kAlongM when tiles_n > tiles_m, else kAlongN.
TESSEL_HOST_DEVICE constexpr RasterOrder choose_raster_order(long long tiles_m, long long tiles_n) {
  return tiles_n > tiles_m ? RasterOrder::kAlongM : RasterOrder::kAlongN;
}

// The order an option resolves to for a tiles_m x tiles_n grid.
TESSEL_HOST_DEVICE constexpr RasterOrder resolve_raster_order(RasterOrderOption option, long long tiles_m,
                                                              long long tiles_n) {
  switch (option) {
    case RasterOrderOption::kAlongM: return RasterOrder::kAlongM;
    case RasterOrderOption::kAlongN: return RasterOrder::kAlongN;
    case RasterOrderOption::kHeuristic: break;
  }
  return choose_raster_order(tiles_m, tiles_n);
}

// GroupedRaster: linear tile id <-> tile (m, n) of a tiles_m x tiles_n grid (file comment).
//   Pre: tiles_m, tiles_n >= 0; group >= 1.
//   Post: operator() is a bijection from [0, tiles_m * tiles_n) onto the grid and index_of is
//   its inverse.
struct GroupedRaster {
  long long tiles_m = 0;
  long long tiles_n = 0;
  RasterOrder order = RasterOrder::kAlongN;
  int group = 1;

  TESSEL_HOST_DEVICE constexpr long long size() const { return tiles_m * tiles_n; }

  // The tile (m, n, 0) with linear id `id`. Pre: 0 <= id < size().
  // (In 32-bit arithmetic when the grid allows: a kernel computes this per tile, and on the GPU
  // a 64-bit division is a call of a ~70-instruction routine.)
  TESSEL_HOST_DEVICE constexpr GemmCoord operator()(long long id) const {
    if (group * (tiles_m > tiles_n ? tiles_m : tiles_n) <= 0xffffffffLL && size() <= 0xffffffffLL)
      return walk<unsigned>(unsigned(id));
    return walk<long long>(id);
  }

  // operator() in the integer type I (which must hold size() and group * the longer extent).
  template <class I>
  TESSEL_HOST_DEVICE constexpr GemmCoord walk(I id) const {
    bool const along_n = order == RasterOrder::kAlongN;
    I const across = I(along_n ? tiles_m : tiles_n);  // the extent cut into bands
    I const along = I(along_n ? tiles_n : tiles_m);   // the extent a band sweeps
    I const grp = I(group);
    I const per_band = grp * along;
    I const band = id / per_band;
    I const first = band * grp;
    I const width = across - first < grp ? across - first : grp;
    I const local = id - band * per_band;
    long long const a = (long long)(first + local % width);  // position across the bands
    long long const b = (long long)(local / width);          // position along the sweep
    return along_n ? GemmCoord(a, b, 0) : GemmCoord(b, a, 0);
  }

  // The linear id of tile (m, n). Pre: 0 <= m < tiles_m, 0 <= n < tiles_n.
  TESSEL_HOST_DEVICE constexpr long long index_of(long long m, long long n) const {
    bool const along_n = order == RasterOrder::kAlongN;
    long long const across = along_n ? tiles_m : tiles_n;
    long long const along = along_n ? tiles_n : tiles_m;
    long long const a = along_n ? m : n;
    long long const b = along_n ? n : m;
    long long const band = a / group;
    long long const first = band * group;
    long long const width = across - first < group ? across - first : group;
    return band * group * along + b * width + (a - first);
  }
};

}  // namespace tessel
