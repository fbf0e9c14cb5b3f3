// tessel/gemm/kernel/sm90_gemm_cta.hpp -- what the sm_90a GEMM kernels' CTAs share, whatever the
// schedule (cooperative: kernel/sm90_gemm_warpspecialized.hpp, ping-pong: kernel/sm90_gemm_pingpong.hpp):
// the named barriers their warpgroups meet at, where a CTA's tile starts in its cluster tile,
// which k-tiles a work unit covers, and the walk of a cluster's work units.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/core/gemm_coord.hpp>

namespace tessel::kernel::detail {

// Named barriers (0 is __syncthreads): a consumer's own 128 threads; and the handoff of consumer
// c's staging buffer to its copy warp (a D that TMA cannot store; warp 2 + c of the producer
// warpgroup), 160 threads, both sides waiting (barrier.sync, not .aligned: the two roles meet
// through different instructions): `drained` (the copy warp has read the previous
// tile out of the buffer) before the consumer writes it, `staged` (the tile is in it) after.
TESSEL_HOST_DEVICE constexpr int sm90_consumer_barrier(int consumer) { return 1 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_drained_barrier(int consumer) { return 3 + consumer; }
TESSEL_HOST_DEVICE constexpr int sm90_staged_barrier(int consumer) { return 5 + consumer; }
inline constexpr int kSm90HandoffThreads = 128 + 32;

// The ping-pong schedule's order barriers (kernel/sm90_gemm_pingpong.hpp): consumer c may start
// its next mainloop once the other consumer has issued its own; 256 threads, the other
// consumer's 128 arriving (barrier.arrive) and consumer c's 128 waiting (barrier.sync).
TESSEL_HOST_DEVICE constexpr int sm90_order_barrier(int consumer) { return 7 + consumer; }
inline constexpr int kSm90OrderThreads = 128 + 128;

// The first row and column of CTA `cta_rank`'s tile in cluster tile `tile`: a cluster covers
// ClusterM consecutive tile rows or ClusterN consecutive tile columns.
template <class Config>
struct Sm90TileOrigin {
  int m0, n0;
  TESSEL_HOST_DEVICE Sm90TileOrigin(GemmCoord const& tile, int cta_rank)
      : m0(int((tile.m() * Config::ClusterM + (Config::ClusterM > 1 ? cta_rank : 0)) * Config::TileM)),
        n0(int((tile.n() * Config::ClusterN + (Config::ClusterN > 1 ? cta_rank : 0)) * Config::TileN)) {}
};

// The rows of an operand share a CTA copies: the whole share (one box), none (every row past the
// operand's edge), or -- where the share ends past the edge and the operand has edge rows
// (edge_rows > 0, Sm90GemmParams::a_edge_rows) -- edge_rows rows: K-major, one edge box of the
// share's rows inside rounded up to whole swizzle atoms; MN-major, its boxes that hold a row inside. (Shares start at multiples of their rows, so the one
// that holds the edge has the extent's remainder inside, which edge_rows covers.) Rows past the
// edge feed only rows or columns of D past its edge, which the epilogue never writes, so they need
// not be copied: TMA would zero-fill them, but slowly (the producer, kernel/sm90_gemm_producer.hpp).
// H100, 2x1-cluster 128x128 kernel, a D 8192 x n (K = 8192): n = 256 (no share past the edge) 64 us; n = 192, the second CTA's B share
// of every second tile wholly past N, 80 us zero-filled, 62 us not copied; n = 224 (that share
// half past N) 68 us zero-filled, 63 us in an edge box.
TESSEL_HOST_DEVICE constexpr int sm90_share_rows(std::int64_t first, std::int64_t extent, int rows, int edge_rows) {
  std::int64_t const inside = extent - first;
  if (inside >= rows) return rows;
  if (inside <= 0) return 0;
  return edge_rows > 0 ? edge_rows : rows;
}

// The rows of the edge box of an operand of `extent` rows cut into shares of `share_rows` (the
// host makes its map, src/gemm/sm90_gemm.cpp): the remainder rounded up to whole 8-row swizzle
// atoms, or 0 where no share ends inside the operand or the rounding reaches a whole share (the
// full box serves then).
TESSEL_HOST_DEVICE constexpr int sm90_edge_rows(std::int64_t extent, int share_rows) {
  int const rest = int(extent % share_rows);
  int const edge = (rest + 7) / 8 * 8;
  return rest != 0 && edge < share_rows ? edge : 0;
}

// The same for an MN-major operand, whose shares are boxes of `box_rows` rows (128 bytes of them):
// the remainder rounded up to whole boxes, or 0 where that is the whole share. The boxes wholly
// past the edge are not copied (a 64-row M on 128-row tiles, a 1x1 convolution's weight gradient:
// TMA would zero-fill half of every A stage).
TESSEL_HOST_DEVICE constexpr int sm90_mn_edge_rows(std::int64_t extent, int share_rows, int box_rows) {
  int const rest = int(extent % share_rows);
  int const edge = (rest + box_rows - 1) / box_rows * box_rows;
  return rest != 0 && edge < share_rows ? edge : 0;
}

// The shares of one operand tile: `Shares` shares of Rows rows from row `first` (Shares > 1: the
// tile a cluster shares, this CTA's being share `mine`; else the CTA's own tile, mine = 0). Adds
// the rows every share brings to *total and returns this CTA's.
template <int Shares, int Rows>
TESSEL_HOST_DEVICE int sm90_count_shares(std::int64_t first, std::int64_t extent, int edge_rows, int mine, int* total) {
  int own = 0;
  TESSEL_UNROLL
  for (int r = 0; r < Shares; ++r) {
    int const rows = sm90_share_rows(first + r * Rows, extent, Rows, edge_rows);
    *total += rows;
    if (r == mine) own = rows;
  }
  return own;
}

// What a CTA copies into each stage of a unit: the rows of its A share and B share
// (sm90_share_rows), and the bytes its stage receives (expect_tx) -- every share of a shared tile,
// from whichever CTA of the cluster copies it.
struct Sm90StageCopies {
  bool whole;  // every share of both tiles whole (a_rows, b_rows and bytes as for an interior tile)
  int a_rows, b_rows;
  std::uint32_t bytes;
};
template <class Config>
TESSEL_HOST_DEVICE Sm90StageCopies sm90_stage_copies(Sm90GemmParams const& p, Sm90TileOrigin<Config> const& at, int cta_rank) {
  constexpr int ClusterM = Config::ClusterM, ClusterN = Config::ClusterN;
  constexpr int RowsA = Config::TileM / ClusterN, RowsB = Config::TileN / ClusterM;
  constexpr std::uint32_t RowBytes = std::uint32_t(Config::TileK * int(sizeof(typename Config::Element)));
  // A tile inside M and N (with ClusterN > 1 the CTAs share tile row at.m0, with ClusterM > 1 tile
  // column at.n0; an unshared tile is the CTA's own): every share whole.
  if (at.m0 + Config::TileM <= p.m && at.n0 + Config::TileN <= p.n)
    return {true, RowsA, RowsB, Config::StageBytes};
  int rows = 0;
  int const a = sm90_count_shares<ClusterN, RowsA>(at.m0, p.m, p.a_edge_rows, ClusterN > 1 ? cta_rank : 0, &rows);
  int const b = sm90_count_shares<ClusterM, RowsB>(at.n0, p.n, p.b_edge_rows, ClusterM > 1 ? cta_rank : 0, &rows);
  std::uint32_t const bytes = std::uint32_t(rows) * RowBytes;
  // (Shares past the edge copied whole, where no edge map was made, leave it whole.)
  return {bytes == Config::StageBytes && a == RowsA && b == RowsB, a, b, bytes};
}

// The k-tiles [begin, end) of K slice `split` of `splits` (parallel split-K; splits == 1: all
// k_tiles), in whole blocks of `block` k-tiles (an fp8 kernel's promotion blocks; 1 otherwise).
// Consecutive slices partition [0, k_tiles) -- or, when block does not divide k_tiles, [0, k_tiles
// rounded up to a block): the last block reaches past K, where TMA reads zeros. None is empty when
// splits <= k_tiles / block (the host's rule). 64-bit products: k_tiles may approach 2^31.
struct Sm90KRange {
  int begin, end;
};
TESSEL_HOST_DEVICE constexpr Sm90KRange sm90_k_range(int k_tiles, int splits, int split, int block = 1) {
  int const blocks = (k_tiles + block - 1) / block;
  if (splits == 1) return {0, block * blocks};
  return {block * int(static_cast<long long>(split) * blocks / splits),
          block * int(static_cast<long long>(split + 1) * blocks / splits)};
}

// Parallel split-K slices (the host's rule, src/gemm/sm90_gemm.cpp): only when the cluster tiles
// cannot fill half the resident clusters -- a quarter for the 64-wide tiles of a skinny (memory-
// bound) D, for the 16-wide ones on HBM slower than `fast_hbm`'s (below), and for any D below 64
// k-tiles -- and K has at least 32 k-tiles, each slice keeping at least 4; never more units than
// clusters. (16x8192x8192 on the H100: 64 unsplit tiles of the 128x64 kernel 55.2 us, 2 slices on
// 128 SMs plus the reduction pass 57.4; the compute-bound 128x256 tiles 145 us unsplit, 99 us in
// 2 slices.)
// On fast HBM (the H200's; `fast_hbm`) the 16-wide tiles of a decode-sized D with 64 k-tiles or
// more split at half, like the wide ones: 64 tiles leave half the SMs idle (H200, same-run A/B,
// ratio to cuBLAS: 8x4096x4096 0.82 -> 0.92 in 2 slices, 1x4096x4096 0.78 -> 0.91, 4x4096x4096
// 0.98 -> 1.14, 16x4096x8192 0.85 -> 0.94, 16x4096x14336 0.77 -> 0.94, 16x4096x4096 +1%; 3
// slices, 192 CTAs in two rounds, lost). On the H100 half a round of them in slices had lost 11%
// (skinny_gemm.md, Tried and not kept); its in-flight limit serves those tiles instead.
// The wide tiles' slices keep at least 16 k-tiles each: with fewer, the reduction pass costs more
// than the slices save (H100: 1024^3 in 4 slices of 4 k-tiles 29 us, unsplit 19).
// Below 32 k-tiles no slices at all (H100, bench_api_overhead, GPU time per call
// queued back to back: 512^3 5.1 us unsplit against 7.1 in 2 slices, 384x384x1024 6.7 against 7.4
// in 4; at 32 k-tiles and more the slices won: 16x2048x2048 6.3 against 6.9, 256x256x2048 7.5
// against 10.0, 16x1024x4096 6.8 against 10.8).
// The 64-wide tiles of a D wider and taller than 64 (not `skinny`) with at least 64 k-tiles split
// like the wider ones, while they fill at most half the clusters (H100,
// bench_api_overhead, GPU time per call queued, 128x64 tiles: 256x1536x4096, 48 tiles, 17.7 us
// unsplit against 13.8 in 2 slices; 768x384x4096, 36 tiles, 17.5 against 11.7 in 3;
// 2048x256x4096 17.7 against 14.4; with 32 k-tiles 512x1024x2048, 64 tiles, 10.9 against 11.9).
// Returns the slice count S (1: no split) for `cluster_tiles` cluster tiles of `k_tiles` k-tiles on
// `clusters` resident clusters, tiles `tile_n` wide, of a D at most 64 wide or tall (`skinny`) or
// not, on a GPU whose HBM is `fast_hbm` (peak 4 TB/s or more) or not.
TESSEL_HOST_DEVICE constexpr int sm90_choose_splits(long long cluster_tiles, int k_tiles, int clusters, int tile_n,
                                                    bool skinny, bool fast_hbm) {
  bool const quarter = k_tiles < 64 || (skinny && (tile_n > 16 || !fast_hbm));
  int const fill = tile_n <= 64 && quarter ? 4 : 2;
  int const per_slice = tile_n <= 64 ? 4 : 16;
  if (cluster_tiles < 1 || cluster_tiles * fill > clusters || k_tiles < 32) return 1;
  // At most 16 slices, or one per 32 k-tiles where that is more: with 16 the partials and their
  // reduction cost more than further slices save (H200: 128x128x8192 0.91x cuBLAS in 16 slices,
  // 0.76x in 33; 192x768x16384 0.50x against 0.46x), but where a slice still streams a K of 2048
  // or more it pays for them, and few tiles with such a K leave most SMs idle in 16 -- a 1x1
  // convolution's weight gradient, 64x256x401408 on 4 tiles of 128x64: 0.61x in 16 slices, 0.86x
  // in 33 (nt, MN-major operands); 128x128x65536 (H200, GPU time queued): 64x64 tiles 18.3 us in
  // 16 slices, 15.2-15.9 in 32; 128x64 21.3-21.6 in 16, 15.6-16.3 in 32, 16.6-17.2 in 64. One per
  // 16 k-tiles (128x128x32768 11.4 us against 11.9) lost 128x128x65536, whose 128x64 tiles then
  // took 64 slices and the pick from the 64x64 tiles: 17.2 us against 15.2.
  int const cap = k_tiles / 32 > 16 ? k_tiles / 32 : 16;
  long long s = clusters / cluster_tiles;
  s = s < k_tiles / per_slice ? s : k_tiles / per_slice;
  s = s < cap ? s : cap;
  return s > 1 ? int(s) : 1;
}

// The in-flight limit of a 16-wide skinny kernel (Sm90GemmParams::in_flight; 0: none) for a D one
// tile column wide in `tiles` tiles of `k_tiles` k-tiles on `ctas` resident CTAs, on a GPU whose
// HBM is `fast_hbm` (peak 4 TB/s or more: the H200) or not (the H100). Measured, not derived
// (the 64x16x64 kernel, 21 stages of 10 KiB, ratio to cuBLAS in the same run). Fewer k-tiles in
// flight per SM serve the SMs more evenly -- on the H200 at 16x8192x8192 the CTAs' mainloops ended
// within 3.6 us of each other instead of 10 -- but cap what each SM can pull (~10 KiB a k-tile over
// a ~2 us loaded latency), so they pay only where enough CTAs stream: on the H200 a full round of
// tiles with a long K (16x8192x8192 0.92-0.94 -> 0.95-0.96, 16x28672x8192 0.99 -> 1.03) while 64
// tiles starve (16x4096x4096 0.97 -> 0.83); on the H100 64 tiles gain (16x4096x4096 0.91-0.92 ->
// 0.98, 16x4096x8192 0.88 -> 0.96, 16x4096x14336 0.89-0.90 -> 0.92-0.93) while 48 starve
// (16x3072x8192 1.00 -> 0.84) and 128 lose 1.5% (16x8192x8192).
//   e.g. sm90_skinny_in_flight(128, 128, 132, true) == 9; sm90_skinny_in_flight(64, 64, 132, false) == 10
TESSEL_HOST_DEVICE constexpr int sm90_skinny_in_flight(long long tiles, int k_tiles, int ctas, bool fast_hbm) {
  if (fast_hbm) return 10 * tiles >= 9LL * ctas && k_tiles >= 128 ? 9 : 0;
  return 2 * tiles <= ctas && 100 * tiles >= 45LL * ctas && k_tiles >= 64 ? 10 : 0;
}

// Whether a 16-wide skinny kernel's loads carry L2 cache hints (Sm90GemmParams::l2_priority_a/b:
// the long operand, read once, evict-first; the narrow one, which every CTA reads whole,
// evict-last) for `tiles` tiles on `ctas` resident CTAs: where the tiles fill at least 90% of a
// round. Measured on the H200 (same binary, alternating): 16x8192x8192 0.98-1.00x cuBLAS against
// 0.96-0.97 unhinted, 8192x16x8192 0.975-0.98 against 0.94, 16x8192x16384 1.03-1.04 against
// 1.00-1.01; half a round loses (16x4096x8192 2.8% slower), 1x8192x8192 even.
//   e.g. sm90_skinny_l2_hints(128, 132) == true; sm90_skinny_l2_hints(64, 132) == false
TESSEL_HOST_DEVICE constexpr bool sm90_skinny_l2_hints(long long tiles, int ctas) { return 10 * tiles >= 9LL * ctas; }

// Whether the kTail Stream-K schedule (schedule/stream_k.hpp) should pay, by tile rounds, for `cluster_tiles` cluster tiles of `k_tiles`
// k-tiles on `clusters` resident clusters: more tiles than clusters but not a whole number of
// rounds, the data-parallel walk leaving at least 1% of the clusters' time idle (the last round
// part-filled), and tiles of at least 8 k-tiles, so that each piece spans several.
// (On the H100, 66 clusters of 2: 4096^3 in 128x256 tiles, 256 cluster tiles, 3% idle -- yes;
// 8192x28672x4096, 3584, 1.3% -- yes; 5200x6200 in 2x1 clusters, 525, 0.6% -- no. Measured,
// it did not pay at 4096^3: the GEMM runs it only when asked, src/gemm/sm90_gemm.cpp.)
TESSEL_HOST_DEVICE constexpr bool sm90_stream_k_pays(long long cluster_tiles, int clusters, int k_tiles) {
  if (clusters < 1 || cluster_tiles <= clusters || cluster_tiles % clusters == 0 || k_tiles < 8) return false;
  long long const rounds = (cluster_tiles + clusters - 1) / clusters;
  return 100 * (rounds * clusters - cluster_tiles) >= rounds * clusters;  // idle >= 1%
}

// The K slices per tail tile of the kSplitTail schedule (schedule/stream_k.hpp) for
// `cluster_tiles` cluster tiles of `k_tiles` k-tiles on `clusters` resident clusters, or 0 where
// the data-parallel walk stays: one to sixteen whole rounds, a last round at most half full (2
// slices or more per tile fit the clusters), at most 3 slices (the finisher adds each peer's
// 128 KiB partial from L2, ~1 us apiece) and at least 20 k-tiles a slice. The last round then
// takes 1/S of a tile's time instead of a whole one. H100, 66 clusters, same-run A/B:
// 2304x4608x4096 (2 rounds and 30 tiles, 2 slices) 0.887x cuBLAS against 0.847-0.849, fp16
// 0.842-0.845 against 0.823-0.826; 4352x4096x4096 (4 rounds and 8 tiles, 3 slices) 0.960-0.961
// against 0.924. Slices of 16 k-tiles lost (2560x4096x2048: 0.802-0.810 against 0.839-0.864): each
// unit's turn, fix-up and epilogue weigh more on a short slice. 6-8 rounds still gain:
// 4352x6144x4096 (6 and 12) 0.288-0.289 ms against 0.295, 3328x8192x4096 (6 and 20) 0.292 against
// 0.299-0.300, 5120x6912x4096 (8 and 12) ~1%; 9-14 rounds ~1% (6144x6400x4096 0.407-0.409 ms
// against 0.412-0.413 on the balanced grid's 60 clusters, 7424x8192x4096 0.619-0.623 against
// 0.627-0.629). Long runs gain nothing: under the power cap the idle SMs of a last round let the
// others clock higher, and with more clusters busy the clocks fall (8192x28672x4096, 54 rounds and
// 20 tiles, 0.984-0.986 against 0.971-0.986; 8192x14336x4096, whose balanced grid runs 28 whole
// rounds on 64 clusters, 1.003-1.006 against 1.011-1.013).
TESSEL_HOST_DEVICE constexpr int sm90_split_tail_slices(long long cluster_tiles, int clusters, int k_tiles) {
  if (clusters < 1 || cluster_tiles <= clusters || cluster_tiles > 17LL * clusters) return 0;
  long long const rem = cluster_tiles % clusters;
  if (rem == 0) return 0;
  long long s = clusters / rem;
  s = s < k_tiles / 20 ? s : k_tiles / 20;
  s = s < 3 ? s : 3;
  return s >= 2 ? int(s) : 0;
}

// One work unit of a cluster: k-tiles [k_begin, k_end) of cluster tile `tile` (m, n, batch and
// K slice: tile.k() = slice * batch + b). Stream-K units (p.stream_k) also say their part in the
// tile's fix-up: a unit that starts inside the tile (!finishes) stores a partial; the one that
// starts at k-tile 0 adds peers first_peer..last_peer's partials (none when first > last) and
// writes D. Units of the persistent walk finish their tile alone.
struct Sm90Unit {
  GemmCoord tile;
  int k_begin, k_end;
  bool finishes;
  int first_peer, last_peer;
};

// A unit as the consumers of a cooperative kernel use it, in 32 bits (the host keeps M, N, the
// batch count and the k-tiles below 2^31), with this CTA's tile origin: the producer works it out
// (sm90_produce_tiles) and hands it over in shared memory, so the consumers' way from one tile to
// the next has no scheduler arithmetic on it.
struct Sm90UnitNote {
  int m0, n0;        // this CTA's tile origin (Sm90TileOrigin)
  int slice, batch;  // tile.k() (K slice * batch count + batch), and the batch
  int k_begin, k_end;
  int first_peer, last_peer;  // Stream-K (Sm90Unit)
  bool finishes;
};

template <class Config>
TESSEL_DEVICE Sm90UnitNote sm90_unit_note(Sm90Unit const& w, int cta_rank, int batches) {
  Sm90TileOrigin<Config> const at(w.tile, cta_rank);
  int const slice = int(w.tile.k());
  return {at.m0, at.n0, slice, slice % batches, w.k_begin, w.k_end, w.first_peer, w.last_peer, w.finishes};
}

// How many units cluster `cluster` runs, and its unit `u` (0 <= u < count) -- the producer and
// the consumers walk the same list. `block`: the promoted fp8 kernels' K slices hold whole
// blocks of that many k-tiles (sm90_k_range); stream-K is not used with block > 1.
//
// Two paths, chosen by p.compact_units (the host's rule). Compact: the persistent walk in 32
// bits, every division by a divisor the host prepared (PersistentTileScheduler::tiles_for32,
// tile_offset32) -- short straight-line code. General: Stream-K units, and schedules past 32 bits.
// A CTA's first load waits for this code: with one path that tested for 64 bits and Stream-K at
// each step, the producer's way to its first unit crossed ~19 KB of branches and division
// routines: 1.0 us on an H100 for the count and unit 0, 0.25 us when the same instructions ran
// a second time -- instruction fetch more than arithmetic. The compact path takes 0.6 (a trace
// of the producer's first unit, docs/sm90_gemm.md "Schedule"). (A copy of the producer's whole loop per path was
// not pursued: the larger kernel had its consumers' mainloop outlined by the compiler, the
// parameters copied to a 992-byte stack frame.)
template <bool Compact>
TESSEL_DEVICE long long sm90_unit_count_as(Sm90GemmParams const& p, int cluster) {
  if constexpr (Compact) {
    return p.scheduler.tiles_for32(cluster);
  } else {
    return p.stream_k ? p.sk.unit_count(cluster) : p.scheduler.tiles_for(cluster);
  }
}
template <bool Compact>
TESSEL_DEVICE Sm90Unit sm90_unit_as(Sm90GemmParams const& p, int cluster, long long u, int block) {
  if constexpr (Compact) {
    PersistentTileScheduler const& sched = p.scheduler;
    GemmCoord const tile = sched.tile_offset32(unsigned(cluster) + unsigned(u) * unsigned(sched.grid_size()));
    int const slice = p.splits == 1 ? 0 : int(unsigned(tile.k()) / unsigned(p.batch));
    Sm90KRange const k = sm90_k_range(p.k_tiles, p.splits, slice, block);
    return {tile, k.begin, k.end, true, 0, -1};
  } else {
    // (A tail schedule's whole rounds are the persistent walk's tiles: p.sk_rounds. Through the
    // Stream-K scheduler's 64-bit divisions each took the producer ~1.4 us more to work out, and
    // 8192x28672x4096 ran 3% slower with its 55 units per cluster.)
    if (p.stream_k && u >= p.sk_rounds) {
      StreamKWork const w = p.sk.unit(cluster, u);
      return {w.tile_offset, int(w.k_begin), int(w.k_end), w.finishes_tile, w.first_peer, w.last_peer};
    }
    GemmCoord const tile = p.scheduler.tile_offset(p.scheduler.linear_tile(cluster, u));
    // tile.k() = slice * batch + b < splits * batch (the host keeps that below 2^31 per factor;
    // only a split-K launch divides, and in 32 bits when it fits).
    int const slice = p.splits == 1                  ? 0
                      : tile.k() <= 0xffffffffLL     ? int(unsigned(tile.k()) / unsigned(p.batch))
                                                     : int(tile.k() / p.batch);
    Sm90KRange const k = sm90_k_range(p.k_tiles, p.splits, slice, block);
    return {tile, k.begin, k.end, true, 0, -1};
  }
}
TESSEL_DEVICE inline long long sm90_unit_count(Sm90GemmParams const& p, int cluster) {
  return p.compact_units ? sm90_unit_count_as<true>(p, cluster) : sm90_unit_count_as<false>(p, cluster);
}
TESSEL_DEVICE inline Sm90Unit sm90_unit(Sm90GemmParams const& p, int cluster, long long u, int block) {
  return p.compact_units ? sm90_unit_as<true>(p, cluster, u, block) : sm90_unit_as<false>(p, cluster, u, block);
}
// As above, for a kernel's Config: a Lean one (Sm90GemmConfig) has the compact path only.
template <class Config>
constexpr bool sm90_lean_config() {
  if constexpr (requires { Config::Lean; }) {
    return Config::Lean;
  } else {
    return false;  // (the ping-pong kernel's Config)
  }
}
template <class Config>
inline constexpr bool kSm90LeanConfig = sm90_lean_config<Config>();
template <class Config>
TESSEL_DEVICE long long sm90_unit_count_of(Sm90GemmParams const& p, int cluster) {
  if constexpr (kSm90LeanConfig<Config>) return sm90_unit_count_as<true>(p, cluster);
  else return sm90_unit_count(p, cluster);
}
template <class Config>
TESSEL_DEVICE Sm90Unit sm90_unit_of(Sm90GemmParams const& p, int cluster, long long u, int block) {
  if constexpr (kSm90LeanConfig<Config>) return sm90_unit_as<true>(p, cluster, u, block);
  else return sm90_unit(p, cluster, u, block);
}

}  // namespace tessel::kernel::detail
