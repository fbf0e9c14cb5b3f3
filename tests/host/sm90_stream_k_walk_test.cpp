// The sm_90a cooperative GEMM's walk of work units (kernel/sm90_gemm_cta.hpp): sm90_unit over the
// persistent schedule is the old tile walk (every grid-th cluster tile, the K slice's k-tiles);
// over the hybrid and tail Stream-K schedules, the units of all clusters cover every k-tile of every tile
// exactly once, a unit that stores a partial is its cluster's first and the only one, and each
// finisher's peers are exactly the clusters holding the tile's other pieces. And
// sm90_stream_k_pays, the rule that picks Stream-K, on the shapes its comment names.
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

using namespace tessel;
using kernel::Sm90GemmParams;
using kernel::detail::sm90_stream_k_pays;
using kernel::detail::sm90_split_tail_slices;
using kernel::detail::sm90_unit;
using kernel::detail::sm90_unit_count;
using kernel::detail::Sm90Unit;

namespace {

Sm90GemmParams persistent(long long rows, long long cols, int batch, int splits, int k_tiles, int clusters) {
  Sm90GemmParams p;
  PersistentArguments a;
  a.sm_count = clusters, a.group = 8;
  p.scheduler = PersistentTileScheduler::make(GemmCoord(rows, cols, batch * splits), a);
  p.batch = batch, p.splits = splits, p.k_tiles = k_tiles;
  return p;
}

TEST(Sm90StreamKWalk, PersistentUnitsAreTheTileWalk) {
  for (int splits : {1, 3}) {
    Sm90GemmParams const p = persistent(7, 5, 2, splits, 40, 6);
    for (int c = 0; c < p.scheduler.grid_size(); ++c) {
      long long u = 0;
      for (long long t = p.scheduler.first_tile(c); p.scheduler.is_valid(t); t = p.scheduler.next_tile(t), ++u) {
        ASSERT_LT(u, sm90_unit_count(p, c));
        Sm90Unit const w = sm90_unit(p, c, u, 1);
        GemmCoord const tile = p.scheduler.tile_offset(t);
        EXPECT_EQ(w.tile.m(), tile.m());
        EXPECT_EQ(w.tile.n(), tile.n());
        EXPECT_EQ(w.tile.k(), tile.k());
        auto const k = kernel::detail::sm90_k_range(40, splits, int(tile.k() / 2));
        EXPECT_EQ(w.k_begin, k.begin);
        EXPECT_EQ(w.k_end, k.end);
        EXPECT_TRUE(w.finishes);
        EXPECT_GT(w.first_peer, w.last_peer);
      }
      EXPECT_EQ(u, sm90_unit_count(p, c)) << "cluster " << c;
    }
  }
}

TEST(Sm90StreamKWalk, HybridUnitsCoverEveryKTileOnceAndPeersMatch) {
  struct Case {
    long long rows, cols;
    int batch, k_tiles, clusters;
  };
  for (auto const d : {StreamKDecomposition::kHybrid, StreamKDecomposition::kTail, StreamKDecomposition::kSplitTail}) {
  for (Case const cs : {Case{16, 16, 1, 64, 66}, Case{9, 8, 1, 17, 66}, Case{5, 7, 3, 9, 13}, Case{3, 3, 1, 8, 4},
                        Case{25, 21, 1, 41, 66}, Case{16, 112, 1, 64, 66}}) {
    Sm90GemmParams p = persistent(cs.rows, cs.cols, cs.batch, 1, cs.k_tiles, cs.clusters);
    StreamKArguments a;
    a.sm_count = cs.clusters, a.group = 8, a.decomposition = d;
    p.sk = StreamKScheduler::make(GemmCoord(cs.rows, cs.cols, cs.batch), cs.k_tiles, a);
    p.stream_k = true;
    ASSERT_EQ(p.sk.grid_size(), p.scheduler.grid_size());
    // The host's shortcut for a tail schedule's whole rounds (src/gemm/sm90_gemm.cpp): the same
    // units as the Stream-K scheduler's own, unit by unit.
    Sm90GemmParams q = p;
    q.sk_rounds = p.sk.sk_first_tile() > 0 ? p.sk.sk_first_tile() / p.sk.grid_size() : 0;
    if (d != StreamKDecomposition::kHybrid && p.sk.sk_tile_count() > 0) {
      EXPECT_EQ(q.sk_rounds * p.sk.grid_size(), p.sk.sk_first_tile());
    }
    for (int c = 0; c < p.sk.grid_size(); ++c) {
      ASSERT_EQ(sm90_unit_count(q, c), sm90_unit_count(p, c)) << "cluster " << c << " decomposition " << int(d) << " case " << cs.rows << "x" << cs.cols << "x" << cs.batch << " on " << cs.clusters << ", rounds " << q.sk_rounds << ", sk tiles " << p.sk.sk_tile_count() << " first " << p.sk.sk_first_tile();
      for (long long u = 0, n = sm90_unit_count(p, c); u < n; ++u) {
        Sm90Unit const a = sm90_unit(p, c, u, 1), b = sm90_unit(q, c, u, 1);
        bool const no_peers = a.first_peer > a.last_peer && b.first_peer > b.last_peer;
        EXPECT_TRUE(a.tile == b.tile && a.k_begin == b.k_begin && a.k_end == b.k_end && a.finishes == b.finishes &&
                    (!a.finishes || no_peers || (a.first_peer == b.first_peer && a.last_peer == b.last_peer)))
            << "cluster " << c << " unit " << u << " decomposition " << int(d) << " case " << cs.rows << "x" << cs.cols
            << " rounds " << q.sk_rounds << ": (" << a.tile.m() << "," << a.tile.n() << "," << a.tile.k() << ") k[" << a.k_begin
            << "," << a.k_end << ") against (" << b.tile.m() << "," << b.tile.n() << "," << b.tile.k() << ") k[" << b.k_begin
            << "," << b.k_end << ")";
      }
    }
    std::map<std::vector<long long>, std::vector<int>> covered;    // tile -> count per k-tile
    std::map<std::vector<long long>, std::set<int>> holders;       // tile -> clusters with a piece
    std::map<std::vector<long long>, std::vector<int>> finishers;  // tile -> (finisher, first, last)
    for (int c = 0; c < p.sk.grid_size(); ++c) {
      int partials = 0;
      for (long long u = 0, n = sm90_unit_count(p, c); u < n; ++u) {
        Sm90Unit const w = sm90_unit(p, c, u, 1);
        std::vector<long long> const key{w.tile.m(), w.tile.n(), w.tile.k()};
        auto& ks = covered[key];
        ks.resize(std::size_t(cs.k_tiles));
        ASSERT_LT(w.k_begin, w.k_end);
        for (int k = w.k_begin; k < w.k_end; ++k) ++ks[std::size_t(k)];
        holders[key].insert(c);
        if (!w.finishes) {
          ++partials;
          EXPECT_EQ(u, p.sk.sk_unit_offset(c)) << "cluster " << c << ": a partial-storing unit must be its first stream-K unit";
        } else {
          EXPECT_EQ(w.k_begin, 0);
          EXPECT_EQ(finishers.count(key), 0u) << "two finishers";
          finishers[key] = {c, w.first_peer, w.last_peer};
        }
      }
      EXPECT_LE(partials, 1) << "cluster " << c << " stores more than one partial (one slot each)";
    }
    EXPECT_EQ(covered.size(), std::size_t(cs.rows * cs.cols * cs.batch));
    for (auto const& [key, ks] : covered) {
      for (int k = 0; k < cs.k_tiles; ++k) EXPECT_EQ(ks[std::size_t(k)], 1) << "k-tile " << k;
      ASSERT_EQ(finishers.count(key), 1u);
      std::vector<int> const& f = finishers[key];
      std::set<int> expected = holders[key];
      expected.erase(f[0]);
      std::set<int> peers;
      for (int q = f[1]; q <= f[2]; ++q) peers.insert(q);
      EXPECT_EQ(peers, expected) << "tile (" << key[0] << "," << key[1] << "," << key[2] << ")";
    }
  }
  }
}

TEST(Sm90StreamKWalk, SplitTailWhereTheLastRoundIsAtMostHalfFull) {
  EXPECT_EQ(sm90_split_tail_slices(162, 66, 64), 2);    // 2304x4608x4096: 2 rounds + 30 tiles
  EXPECT_EQ(sm90_split_tail_slices(144, 66, 64), 3);    // 3072x3072x4096: 2 rounds + 12 tiles
  EXPECT_EQ(sm90_split_tail_slices(144, 66, 40), 2);    // 20 k-tiles a slice at least
  EXPECT_EQ(sm90_split_tail_slices(144, 66, 39), 0);
  EXPECT_EQ(sm90_split_tail_slices(160, 66, 32), 0);    // 2560x4096x2048: slices of 16 lost
  EXPECT_EQ(sm90_split_tail_slices(16 * 66 + 20, 66, 64), 3);  // 16 whole rounds: still
  EXPECT_EQ(sm90_split_tail_slices(17 * 66 + 20, 66, 64), 0);  // 17: no (long runs are power-capped: no gain)
  EXPECT_EQ(sm90_split_tail_slices(3584, 66, 64), 0);   // 8192x28672x4096: 54 rounds + 20 tiles
  EXPECT_EQ(sm90_split_tail_slices(256, 66, 64), 0);    // 4096^3: 58 of 66 in the last round
  EXPECT_EQ(sm90_split_tail_slices(1024, 66, 128), 0);  // 8192^3: 34 of 66
  EXPECT_EQ(sm90_split_tail_slices(99, 66, 64), 2);     // 33 of 66: exactly half
  EXPECT_EQ(sm90_split_tail_slices(70, 66, 4096), 3);   // at most 3 slices
  EXPECT_EQ(sm90_split_tail_slices(132, 66, 64), 0);    // whole rounds
  EXPECT_EQ(sm90_split_tail_slices(40, 66, 64), 0);     // no whole round (split-K's domain)
  EXPECT_EQ(sm90_split_tail_slices(66, 66, 64), 0);
  EXPECT_EQ(sm90_split_tail_slices(70, 0, 64), 0);
}

TEST(Sm90StreamKWalk, StreamKPaysWhereTheLastRoundIsPartFilled) {
  EXPECT_TRUE(sm90_stream_k_pays(256, 66, 64));    // 4096^3, 2x1 clusters of 128x256: 3% idle
  EXPECT_TRUE(sm90_stream_k_pays(3584, 66, 64));   // 8192x28672x4096: 1.3%
  EXPECT_TRUE(sm90_stream_k_pays(1024, 66, 128));  // 8192^3: 3%
  EXPECT_FALSE(sm90_stream_k_pays(525, 66, 41));   // 0.6%
  EXPECT_FALSE(sm90_stream_k_pays(264, 66, 64));   // whole rounds
  EXPECT_FALSE(sm90_stream_k_pays(64, 66, 64));    // fewer tiles than clusters
  EXPECT_FALSE(sm90_stream_k_pays(71, 66, 7));     // too few k-tiles to share
  EXPECT_TRUE(sm90_stream_k_pays(71, 66, 8));
}

}  // namespace
