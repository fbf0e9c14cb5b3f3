// tessel/schedule/stream_k.hpp -- Stream-K: CTAs split the k-iterations of all tiles evenly.
//
// A tile needs I k-iterations (I = ceil(K / tile_k)); the stream-K tiles together need
// T_sk * I of them, numbered tile-major (iteration i is k-iteration i mod I of tile i / I, the
// tiles in GroupedRaster order as in persistent.hpp). CTA c of the grid G takes the contiguous
// range
//   [floor(c * T_sk*I / G), floor((c+1) * T_sk*I / G))
// so every CTA does the same work to within one iteration, whatever the tile count. A range
// cuts through tiles; the piece of a tile one CTA runs is a work unit (tile, [k_begin, k_end)).
//
// Fix-up, in a fixed order (the result is bitwise reproducible for a given grid):
//   - The CTA whose range holds k-iteration 0 of a tile is its owner; it finishes the tile.
//   - The other CTAs that touch the tile (its peers) are the next CTAs, owner+1 .. last, in
//     order; each peer's piece is the first unit of its range. A peer writes its partial
//     accumulator to workspace slot = its CTA index (a CTA stores at most one partial: only its
//     first unit can start mid-tile) and raises that slot's flag.
//   - The owner runs its piece (the last unit of its range), then for p = owner+1 .. last waits
//     for slot p's flag and adds slot p's partial, then runs the epilogue.
// A CTA does its stored-partial unit first and its owned unit last, so an owner rarely waits.
// All CTAs of the grid must be resident at once (peers are waited on); the grid is at most
// sm_count * ctas_per_sm and ctas_per_sm must be what the kernel's resources allow.
//
// Decompositions:
//   kStreamK  every tile is stream-K; G = min(sm_count * ctas_per_sm, T * I).
//   kHybrid   "data-parallel + two-tile stream-K": with G = sm_count * ctas_per_sm CTAs and
//             T = full*G + rem tiles, the last partial wave plus one full wave (rem + G tiles)
//             are stream-K, the remaining full waves are data-parallel (one CTA per tile, no
//             fix-up, CTA c takes DP tiles c, c+G, ... after its stream-K units). rem == 0: all
//             data-parallel; full == 0: all stream-K. Stream-K tiles are the first T_sk linear ids.
//   kTail     data-parallel first, stream-K last: the full waves run whole tiles (CTA c takes
//             tiles c, c+G, ...), then only the last partial wave's rem tiles -- the last rem
//             linear ids -- are shared out. As balanced as kHybrid (to within the iterations of
//             one tile), but the CTAs run the data-parallel waves in step, at the same k, sharing
//             A and B panels in L2; stream-K pieces start at staggered k and share less (an
//             sm_90a GEMM lost 11% at 4096^3 running kHybrid's stream-K waves first). rem == 0,
//             full == 0, or fewer tail iterations than CTAs: as kHybrid.
//   kSplitTail data-parallel first, then the last partial wave's rem tiles each cut into
//             S = min(G / rem, I, max_tail_slices) equal K slices: slice s of tail tile u is CTA
//             u*S + s's last unit, k-iterations [s*I/S, (s+1)*I/S); the CTAs from rem*S on have
//             none. Unlike kTail's pieces, the slices of different tiles cover the same k-range,
//             so the tail CTAs, like a data-parallel wave, read the same k-slices of A and B
//             together (kTail's staggered pieces ran at about half speed on the H100). It
//             balances less finely: the tail takes 1/S of a tile's time. S < 2 (the last wave
//             more than half full, or rem == 0): all data-parallel.
//
//   e.g. 2x2 tiles, I = 3, G = 3 CTAs (kStreamK): 12 iterations, 4 per CTA.
//        CTA 0: tile 0 k[0,3) (complete), tile 1 k[0,1) (owner; peer CTA 1)
//        CTA 1: tile 1 k[1,3) (partial -> slot 1), tile 2 k[0,2) (owner; peer CTA 2)
//        CTA 2: tile 2 k[2,3) (partial -> slot 2), tile 3 k[0,3) (complete)
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/dim3.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/schedule/persistent.hpp>
#include <tessel/schedule/raster.hpp>
#include <tessel/schedule/schedule_error.hpp>

namespace tessel {

// StreamKDecomposition: which tiles are shared by stream-K (file comment).
enum class StreamKDecomposition { kStreamK, kHybrid, kTail, kSplitTail };

// StreamKArguments: what the host chooses for a Stream-K schedule.
struct StreamKArguments {
  int sm_count = 0;                                        // multiprocessors of the device (>= 1)
  int ctas_per_sm = 1;                                     // resident CTAs per SM (>= 1)
  RasterOrderOption raster = RasterOrderOption::kHeuristic;
  int group = 1;                                           // raster band width, 1..8
  StreamKDecomposition decomposition = StreamKDecomposition::kStreamK;
  int max_tail_slices = 4;  // kSplitTail: at most this many K slices per tail tile (>= 2)
};

// StreamKWork: one unit of a CTA's work, k-iterations [k_begin, k_end) of one tile.
//   finishes_tile:  k_begin == 0. The CTA owns the tile: after its piece it adds the partials of
//                   peers first_peer .. last_peer (in that order; none when first_peer > last_peer)
//                   and runs the epilogue.
//   !finishes_tile: the CTA is a peer: it stores its partial into workspace slot `cta` and
//                   raises that slot's flag.
struct StreamKWork {
  long long tile = 0;         // linear tile id
  GemmCoord tile_offset;      // (m, n, batch)
  long long k_begin = 0;      // first k-iteration of the tile in this unit
  long long k_end = 0;        // one past the last
  bool finishes_tile = false;
  int first_peer = 0;         // for an owner: the CTAs whose partials it adds, in order
  int last_peer = -1;
};

// StreamKScheduler: a Stream-K schedule as plain data a kernel receives by value.
class StreamKScheduler {
 public:
  StreamKScheduler() = default;

  // Builds the schedule of a tiled shape (tiles_m, tiles_n, batch count) whose tiles each need
  // `k_iterations` k-iterations.
  //   Pre: tiled shape >= 0 with batch >= 1; k_iterations >= 1; sm_count, ctas_per_sm >= 1;
  //        group in 1..8; checked on the host (ScheduleError). A problem with K = 0 has no
  //        k-iterations to share: run it data-parallel (PersistentTileScheduler).
  static constexpr StreamKScheduler make(GemmCoord tiled_shape, long long k_iterations,
                                         StreamKArguments const& args) {
    detail::check_scheduler_arguments("StreamKScheduler", tiled_shape, args.sm_count, args.ctas_per_sm,
                                      args.group);
    detail::schedule_require(k_iterations >= 1, "StreamKScheduler: k_iterations per tile = ", k_iterations,
                             " must be >= 1; a problem with K = 0 has nothing to split, schedule it with "
                             "PersistentTileScheduler");
    long long const want = static_cast<long long>(args.sm_count) * args.ctas_per_sm;
    detail::schedule_require(want <= 2147483647LL, "StreamKScheduler: sm_count * ctas_per_sm = ", want,
                             " CTAs does not fit a CUDA grid's x extent (2^31-1)");
    StreamKScheduler s;
    s.raster_ = GroupedRaster{tiled_shape.m(), tiled_shape.n(),
                              resolve_raster_order(args.raster, tiled_shape.m(), tiled_shape.n()), args.group};
    s.batches_ = tiled_shape.k();
    s.iters_ = k_iterations;
    long long const tiles = s.tile_count();
    if (args.decomposition == StreamKDecomposition::kSplitTail) {
      detail::schedule_require(args.max_tail_slices >= 2, "StreamKScheduler: max_tail_slices = ", args.max_tail_slices,
                               " must be >= 2 (kSplitTail cuts each tail tile into that many K slices at most)");
      long long const rem = tiles % want;
      long long slices = rem == 0 ? 0 : want / rem;
      slices = slices < k_iterations ? slices : k_iterations;
      slices = slices < args.max_tail_slices ? slices : args.max_tail_slices;
      s.split_ = slices >= 2 ? static_cast<int>(slices) : 0;
      s.tail_ = s.split_ > 0;
      s.sk_tiles_ = s.split_ > 0 ? rem : 0;
      long long const grid = tiles >= want ? want : s.split_ > 0 ? rem * s.split_ : tiles;
      s.grid_ = static_cast<int>(grid);
      return s;
    }
    long long sk = tiles;
    long long grid = want;
    if (args.decomposition != StreamKDecomposition::kStreamK && tiles >= want) {
      long long const rem = tiles % want;
      // kTail needs every CTA to get an iteration of the tail (an owner waits for each CTA after it
      // up to its last peer): otherwise it falls back to kHybrid.
      bool const tail = args.decomposition == StreamKDecomposition::kTail && rem != 0 && rem * k_iterations >= want;
      sk = rem == 0 ? 0 : tail ? rem : rem + want;
      s.tail_ = tail;
    }
    if (sk == tiles) {  // all stream-K: no more CTAs than iterations
      long long const iters = tiles * k_iterations;
      grid = want < iters ? want : iters;
    }
    s.sk_tiles_ = sk;
    s.grid_ = static_cast<int>(grid);
    return s;
  }

  // CTAs to launch, and the launch grid (grid_size(), 1, 1).
  TESSEL_HOST_DEVICE constexpr int grid_size() const { return grid_; }
  TESSEL_HOST_DEVICE constexpr Dim3 grid_shape() const { return Dim3{static_cast<unsigned>(grid_), 1u, 1u}; }

  TESSEL_HOST_DEVICE constexpr long long tile_count() const { return raster_.size() * batches_; }
  TESSEL_HOST_DEVICE constexpr long long k_iterations() const { return iters_; }
  // Tiles shared by stream-K (linear ids [sk_first_tile(), + sk_tile_count()): the first ones, or
  // with kTail the last ones); the rest are data-parallel.
  TESSEL_HOST_DEVICE constexpr long long sk_tile_count() const { return sk_tiles_; }
  TESSEL_HOST_DEVICE constexpr long long sk_first_tile() const { return tail_ ? tile_count() - sk_tiles_ : 0; }
  TESSEL_HOST_DEVICE constexpr long long dp_first_tile() const { return tail_ ? 0 : sk_tiles_; }
  // The index of CTA c's first stream-K unit among its units (they run after its data-parallel
  // tiles with kTail, before them otherwise).
  TESSEL_HOST_DEVICE constexpr long long sk_unit_offset(int cta) const { return tail_ ? dp_unit_count(cta) : 0; }
  TESSEL_HOST_DEVICE constexpr long long sk_iteration_count() const { return sk_tiles_ * iters_; }
  TESSEL_HOST_DEVICE constexpr GroupedRaster const& raster() const { return raster_; }
  TESSEL_HOST_DEVICE constexpr GemmCoord tiled_shape() const {
    return GemmCoord(raster_.tiles_m, raster_.tiles_n, batches_);
  }

  // CTA c's stream-K iterations: [iteration_begin(c), iteration_end(c)). Pre: 0 <= c < grid.
  TESSEL_HOST_DEVICE constexpr long long iteration_begin(int cta) const {
    if (split_ > 0) {  // kSplitTail: slice cta % S of tail tile cta / S; none from rem * S on
      if (cta >= sk_tiles_ * split_) return sk_iteration_count();
      long long const u = cta / split_, slice = cta % split_;
      return u * iters_ + slice * iters_ / split_;
    }
    return grid_ == 0 ? 0 : cta * sk_iteration_count() / grid_;
  }
  TESSEL_HOST_DEVICE constexpr long long iteration_end(int cta) const { return iteration_begin(cta + 1); }

  // The CTA whose range holds stream-K iteration `it`. Pre: 0 <= it < sk_iteration_count().
  TESSEL_HOST_DEVICE constexpr int cta_of_iteration(long long it) const {
    if (split_ > 0) {
      long long const u = it / iters_, k = it % iters_;
      return static_cast<int>(u * split_ + ((k + 1) * split_ - 1) / iters_);
    }
    return static_cast<int>(((it + 1) * grid_ - 1) / sk_iteration_count());
  }
  // kSplitTail's K slices per tail tile (0: another decomposition, or no tail).
  TESSEL_HOST_DEVICE constexpr int tail_slices() const { return split_; }

  // The tile (m, n, batch) of linear id `linear`.
  TESSEL_HOST_DEVICE constexpr GemmCoord tile_offset(long long linear) const {
    long long const per_batch = raster_.size();
    GemmCoord const mn = raster_(linear % per_batch);
    return GemmCoord(mn.m(), mn.n(), linear / per_batch);
  }

  // The CTA that finishes tile `linear` (owner of k-iteration 0; for a data-parallel tile, the
  // CTA that runs it), and the last CTA that contributes to it. The peers are owner+1 .. last.
  TESSEL_HOST_DEVICE constexpr bool is_sk_tile(long long linear) const {
    return linear >= sk_first_tile() && linear < sk_first_tile() + sk_tiles_;
  }
  TESSEL_HOST_DEVICE constexpr int tile_owner(long long linear) const {
    if (is_sk_tile(linear)) return cta_of_iteration((linear - sk_first_tile()) * iters_);
    return static_cast<int>((linear - dp_first_tile()) % grid_);
  }
  TESSEL_HOST_DEVICE constexpr int tile_last_contributor(long long linear) const {
    if (is_sk_tile(linear)) return cta_of_iteration((linear - sk_first_tile() + 1) * iters_ - 1);
    return tile_owner(linear);
  }

  // Number of work units of CTA `cta`: its stream-K pieces and its data-parallel tiles.
  TESSEL_HOST_DEVICE constexpr long long sk_unit_count(int cta) const {
    long long const b = iteration_begin(cta);
    long long const e = iteration_end(cta);
    return e > b ? (e - 1) / iters_ - b / iters_ + 1 : 0;
  }
  TESSEL_HOST_DEVICE constexpr long long dp_unit_count(int cta) const {
    long long const dp = tile_count() - sk_tiles_;
    return cta < dp ? (dp - cta + grid_ - 1) / grid_ : 0;
  }
  TESSEL_HOST_DEVICE constexpr long long unit_count(int cta) const { return sk_unit_count(cta) + dp_unit_count(cta); }

  // True when CTA `cta` stores a partial (its range starts inside a tile); its slot is `cta`.
  TESSEL_HOST_DEVICE constexpr bool stores_partial(int cta) const {
    long long const b = iteration_begin(cta);
    return iteration_end(cta) > b && b % iters_ != 0;
  }

  // Unit `i` of CTA `cta`, in the order the CTA runs them. Pre: 0 <= i < unit_count(cta).
  TESSEL_HOST_DEVICE constexpr StreamKWork unit(int cta, long long i) const {
    StreamKWork w;
    long long const sk_units = sk_unit_count(cta);
    long long const first = sk_unit_offset(cta);
    if (i >= first && i < first + sk_units) {
      long long const b = iteration_begin(cta);
      long long const e = iteration_end(cta);
      w.tile = b / iters_ + (i - first);
      long long const tile_begin = w.tile * iters_;
      long long const lo = b > tile_begin ? b : tile_begin;
      long long const hi = e < tile_begin + iters_ ? e : tile_begin + iters_;
      w.k_begin = lo - tile_begin;
      w.k_end = hi - tile_begin;
      w.tile += sk_first_tile();
    } else {
      w.tile = dp_first_tile() + cta + (tail_ ? i : i - sk_units) * grid_;
      w.k_begin = 0;
      w.k_end = iters_;
    }
    w.tile_offset = tile_offset(w.tile);
    w.finishes_tile = w.k_begin == 0;
    if (w.finishes_tile) {
      w.first_peer = cta + 1;
      w.last_peer = tile_last_contributor(w.tile);
    }
    return w;
  }

 private:
  GroupedRaster raster_{};
  long long batches_ = 1;
  long long iters_ = 1;
  long long sk_tiles_ = 0;
  int grid_ = 0;
  bool tail_ = false;  // kTail with both kinds of tiles (or kSplitTail): data-parallel first, stream-K tiles last
  int split_ = 0;      // kSplitTail: K slices per tail tile
};

}  // namespace tessel
