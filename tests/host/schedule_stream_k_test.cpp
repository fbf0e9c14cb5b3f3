// Stream-K: the worked example, balance, coverage of every (tile, k-iteration) exactly once,
// and the fix-up structure (owner, peers in order, one partial per CTA) over a sweep.
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace tessel {
void PrintTo(GemmCoord const& c, std::ostream* os) { *os << "(" << c.m() << "," << c.n() << "," << c.k() << ")"; }
}  // namespace tessel

using namespace tessel;

namespace {

StreamKArguments args_for(int sms, StreamKDecomposition d = StreamKDecomposition::kStreamK, int group = 1,
                          RasterOrderOption raster = RasterOrderOption::kHeuristic) {
  StreamKArguments a;
  a.sm_count = sms;
  a.decomposition = d;
  a.group = group;
  a.raster = raster;
  return a;
}

TEST(StreamK, HeaderExample) {
  // 2x2 tiles, 3 k-iterations each, 3 CTAs: 12 iterations, 4 per CTA.
  auto const s = StreamKScheduler::make(GemmCoord(2, 2, 1), 3, args_for(3, StreamKDecomposition::kStreamK, 1,
                                                                         RasterOrderOption::kAlongN));
  ASSERT_EQ(s.grid_size(), 3);
  ASSERT_EQ(s.sk_iteration_count(), 12);
  struct Want {
    long long tile, k_begin, k_end;
    bool finishes;
    int first_peer, last_peer;
  };
  std::vector<std::vector<Want>> const want = {
      {{0, 0, 3, true, 1, 0}, {1, 0, 1, true, 1, 1}},
      {{1, 1, 3, false, 0, -1}, {2, 0, 2, true, 2, 2}},
      {{2, 2, 3, false, 0, -1}, {3, 0, 3, true, 3, 2}}};
  for (int c = 0; c < 3; ++c) {
    ASSERT_EQ(s.unit_count(c), static_cast<long long>(want[c].size())) << "CTA " << c;
    for (size_t i = 0; i < want[c].size(); ++i) {
      StreamKWork const w = s.unit(c, static_cast<long long>(i));
      EXPECT_EQ(w.tile, want[c][i].tile) << "CTA " << c << " unit " << i;
      EXPECT_EQ(w.k_begin, want[c][i].k_begin) << "CTA " << c << " unit " << i;
      EXPECT_EQ(w.k_end, want[c][i].k_end) << "CTA " << c << " unit " << i;
      EXPECT_EQ(w.finishes_tile, want[c][i].finishes) << "CTA " << c << " unit " << i;
      if (w.finishes_tile) {
        EXPECT_EQ(w.first_peer, want[c][i].first_peer) << "CTA " << c << " unit " << i;
        EXPECT_EQ(w.last_peer, want[c][i].last_peer) << "CTA " << c << " unit " << i;
      }
    }
  }
  EXPECT_EQ(s.unit(1, 1).tile_offset, GemmCoord(1, 0, 0));
  EXPECT_FALSE(s.stores_partial(0));
  EXPECT_TRUE(s.stores_partial(1));
  EXPECT_TRUE(s.stores_partial(2));
  EXPECT_EQ(s.tile_owner(1), 0);
  EXPECT_EQ(s.tile_last_contributor(1), 1);
  EXPECT_EQ(s.tile_owner(3), 2);
  EXPECT_EQ(s.tile_last_contributor(3), 2);
}

TEST(StreamK, GridAndDecomposition) {
  // Pure stream-K never launches more CTAs than iterations.
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(1, 1, 1), 5, args_for(132)).grid_size(), 5);
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(64, 32, 1), 128, args_for(132)).grid_size(), 132);
  // Hybrid, 25 tiles on 4 CTAs: 6 full waves + 1; the last partial wave and one full wave (5
  // tiles) are stream-K, 20 are data-parallel.
  auto const h = StreamKScheduler::make(GemmCoord(5, 5, 1), 4, args_for(4, StreamKDecomposition::kHybrid));
  EXPECT_EQ(h.grid_size(), 4);
  EXPECT_EQ(h.sk_tile_count(), 5);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(h.dp_unit_count(c), 5);
  // Hybrid with a whole number of waves is all data-parallel; with less than a wave all stream-K.
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(4, 4, 1), 4, args_for(8, StreamKDecomposition::kHybrid)).sk_tile_count(), 0);
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(2, 3, 1), 4, args_for(8, StreamKDecomposition::kHybrid)).sk_tile_count(), 6);
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(0, 3, 1), 4, args_for(8)).grid_size(), 0);
  // Tail, 25 tiles on 4 CTAs: 24 data-parallel tiles first (6 each), then the last tile shared
  // out, a quarter of its iterations each, as each CTA's last unit.
  auto const t = StreamKScheduler::make(GemmCoord(5, 5, 1), 4, args_for(4, StreamKDecomposition::kTail));
  EXPECT_EQ(t.sk_tile_count(), 1);
  EXPECT_EQ(t.sk_first_tile(), 24);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(t.dp_unit_count(c), 6);
    ASSERT_EQ(t.unit_count(c), 7);
    EXPECT_EQ(t.unit(c, 0).tile, c);
    EXPECT_EQ(t.unit(c, 6).tile, 24);
    EXPECT_EQ(t.unit(c, 6).k_begin, c);
    EXPECT_EQ(t.unit(c, 6).k_end, c + 1);
  }
  EXPECT_EQ(t.tile_owner(24), 0);
  EXPECT_EQ(t.tile_last_contributor(24), 3);
  // Split tail, 26 tiles on 8 CTAs, 9 k-iterations: 24 data-parallel tiles (3 each), then tiles 24
  // and 25 in 8 / 2 = 4 slices each (capped at max_tail_slices = 4): CTA 4u + s takes slice s of
  // tile 24 + u, k [9s/4, 9(s+1)/4) -- the same k-range for both tiles.
  auto const st = StreamKScheduler::make(GemmCoord(2, 13, 1), 9, args_for(8, StreamKDecomposition::kSplitTail));
  EXPECT_EQ(st.grid_size(), 8);
  EXPECT_EQ(st.tail_slices(), 4);
  EXPECT_EQ(st.sk_tile_count(), 2);
  EXPECT_EQ(st.sk_first_tile(), 24);
  int const cuts[5] = {0, 2, 4, 6, 9};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(st.dp_unit_count(c), 3);
    ASSERT_EQ(st.unit_count(c), 4);
    StreamKWork const w = st.unit(c, 3);
    EXPECT_EQ(w.tile, 24 + c / 4);
    EXPECT_EQ(w.k_begin, cuts[c % 4]);
    EXPECT_EQ(w.k_end, cuts[c % 4 + 1]);
    EXPECT_EQ(w.finishes_tile, c % 4 == 0);
    EXPECT_EQ(st.stores_partial(c), c % 4 != 0);
  }
  EXPECT_EQ(st.tile_owner(25), 4);
  EXPECT_EQ(st.tile_last_contributor(25), 7);
  // A last wave more than half full (no room for 2 slices each), or none: all data-parallel.
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(1, 13, 1), 4, args_for(8, StreamKDecomposition::kSplitTail)).sk_tile_count(), 0);
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(4, 4, 1), 4, args_for(8, StreamKDecomposition::kSplitTail)).sk_tile_count(), 0);
  // 8192x28672x4096 on 2x1 clusters of 128x256 tiles, 66 clusters: 3584 cluster tiles, 20 left over
  // after 54 rounds, in 3 slices of 64 k-tiles (21, 21, 22) on clusters 0..59.
  auto const big = StreamKScheduler::make(GemmCoord(32, 112, 1), 64, args_for(66, StreamKDecomposition::kSplitTail));
  EXPECT_EQ(big.tail_slices(), 3);
  EXPECT_EQ(big.sk_tile_count(), 20);
  EXPECT_EQ(big.unit_count(59), 55);
  EXPECT_EQ(big.unit_count(60), 54);
  EXPECT_EQ(big.unit(59, 54).k_begin, 42);
  EXPECT_EQ(big.unit(59, 54).k_end, 64);
  StreamKArguments two = args_for(66, StreamKDecomposition::kSplitTail);
  two.max_tail_slices = 2;
  EXPECT_EQ(StreamKScheduler::make(GemmCoord(32, 112, 1), 64, two).tail_slices(), 2);
  two.max_tail_slices = 1;
  EXPECT_THROW(StreamKScheduler::make(GemmCoord(32, 112, 1), 64, two), ScheduleError);
  EXPECT_THROW(StreamKScheduler::make(GemmCoord(2, 2, 1), 0, args_for(8)), ScheduleError);
  EXPECT_THROW(StreamKScheduler::make(GemmCoord(2, 2, 1), 4, args_for(0)), ScheduleError);
  EXPECT_THROW(StreamKScheduler::make(GemmCoord(2, 2, 1), 4, args_for(8, StreamKDecomposition::kStreamK, 9)),
               ScheduleError);
}

// The whole contract for one schedule, reading its units through unit_of(cta, i) (the
// scheduler's own unit(), or a broken one in the checker's test). Returns "" or the first
// violation.
template <class UnitOf>
std::string check_units(StreamKScheduler const& s, UnitOf unit_of) {
  GemmCoord const tiled = s.tiled_shape();
  long long const I = s.k_iterations();
  long long const T = s.tile_count();
  std::vector<int> hits(static_cast<size_t>(T * I), 0);
  std::vector<int> finisher(static_cast<size_t>(T), -1);
  std::vector<std::vector<std::pair<int, StreamKWork>>> pieces(static_cast<size_t>(T));
  long long lo = -1;
  long long hi = -1;
  if (s.grid_size() == 0) return T == 0 ? "" : "no CTAs for a non-empty problem";
  for (int c = 0; c < s.grid_size(); ++c) {
    long long const work = s.iteration_end(c) - s.iteration_begin(c);
    lo = lo < 0 ? work : std::min(lo, work);
    hi = std::max(hi, work);
    int partials = 0;
    long long const units = s.unit_count(c);
    for (long long i = 0; i < units; ++i) {
      StreamKWork const w = unit_of(c, i);
      if (w.tile < 0 || w.tile >= T) return "unit names a tile outside the problem";
      if (w.tile_offset != s.tile_offset(w.tile)) return "tile_offset mismatch";
      if (!tile_in_bounds(tiled, w.tile_offset)) return "tile offset outside the tiled shape";
      if (!(0 <= w.k_begin && w.k_begin < w.k_end && w.k_end <= I)) return "bad k range";
      for (long long k = w.k_begin; k < w.k_end; ++k) ++hits[static_cast<size_t>(w.tile * I + k)];
      if (w.finishes_tile != (w.k_begin == 0)) return "finishes_tile must mean k_begin == 0";
      if (w.finishes_tile) {
        if (finisher[static_cast<size_t>(w.tile)] >= 0) return "two CTAs finish one tile";
        finisher[static_cast<size_t>(w.tile)] = c;
        if (s.tile_owner(w.tile) != c) return "tile_owner disagrees with the units";
        if (w.last_peer >= w.first_peer && i != s.sk_unit_offset(c) + s.sk_unit_count(c) - 1)
          return "an owner with peers must run that tile as its last stream-K unit";
      } else {
        ++partials;
        if (i != s.sk_unit_offset(c)) return "only a CTA's first stream-K unit may store a partial";
        if (!s.stores_partial(c)) return "stores_partial disagrees with the units";
      }
      pieces[static_cast<size_t>(w.tile)].push_back({c, w});
    }
    if (partials > 1) return "a CTA stores more than one partial";
    if (partials == 0 && s.stores_partial(c)) return "stores_partial without a partial unit";
  }
  if (s.tail_slices() == 0 && hi - lo > 1) return "stream-K iteration ranges are unbalanced";
  if (s.tail_slices() > 0) {  // kSplitTail: the slices of a tile within one iteration of each other, aligned across tiles
    long long const S = s.tail_slices();
    for (int c = 0; c < s.grid_size(); ++c) {
      long long const work = s.iteration_end(c) - s.iteration_begin(c);
      if (c < s.sk_tile_count() * S) {
        if (work != (c % S + 1) * I / S - (c % S) * I / S) return "a tail slice is not its even share of the tile";
      } else if (work != 0) {
        return "a CTA past the tail's slices has tail work";
      }
    }
  }
  for (int h : hits)
    if (h != 1) return "a (tile, k-iteration) covered " + std::to_string(h) + " times";
  // Fix-up order: the owner's piece starts the tile, the peers owner+1 .. last follow in CTA
  // order, and their pieces continue the k range without gaps.
  for (long long t = 0; t < T; ++t) {
    auto const& p = pieces[static_cast<size_t>(t)];
    if (p.empty() || finisher[static_cast<size_t>(t)] != p.front().first) return "tile without its owner first";
    StreamKWork const owner = p.front().second;
    int const last = p.size() == 1 ? p.front().first : p.back().first;
    if (s.tile_last_contributor(t) != last) return "tile_last_contributor disagrees with the units";
    if (p.size() > 1 && (owner.first_peer != p.front().first + 1 || owner.last_peer != last))
      return "owner's peer range is wrong";
    if (p.size() == 1 && owner.first_peer <= owner.last_peer) return "owner without peers lists peers";
    for (size_t i = 1; i < p.size(); ++i) {
      if (p[i].first != p[i - 1].first + 1) return "peers are not consecutive CTAs";
      if (p[i].second.k_begin != p[i - 1].second.k_end) return "peer pieces are not contiguous";
    }
  }
  return "";
}

std::string check_stream_k(StreamKScheduler const& s) {
  return check_units(s, [&](int c, long long i) { return s.unit(c, i); });
}

TEST(StreamK, CoversEveryTileAndKIterationOnceWithOrderedFixup) {
  long long configs = 0;
  for (long long tm = 1; tm <= 37; ++tm) {
    for (long long tn = 1; tn <= 53; tn += (tm % 2 == 0 ? 1 : 2)) {
      for (long long iters : {1, 2, 5, 8}) {
        for (int sms : {1, 3, 7, 132}) {
          for (auto d : {StreamKDecomposition::kStreamK, StreamKDecomposition::kHybrid, StreamKDecomposition::kTail,
                         StreamKDecomposition::kSplitTail}) {
            int const group = static_cast<int>((tm + tn) % 8) + 1;
            long long const batch = (tm * tn) % 2 + 1;
            auto const s = StreamKScheduler::make(GemmCoord(tm, tn, batch), iters, args_for(sms, d, group));
            ASSERT_EQ(check_stream_k(s), "") << tm << "x" << tn << "x" << batch << " iters " << iters << " sms "
                                             << sms << (d == StreamKDecomposition::kHybrid ? " hybrid" : d == StreamKDecomposition::kTail ? " tail"
                                                 : d == StreamKDecomposition::kSplitTail ? " split tail" : "");
            ++configs;
          }
        }
      }
    }
  }
  EXPECT_GT(configs, 40000);
}

TEST(StreamK, DeterministicFixupIsAFixedSumOrder) {
  // Model the kernel's arithmetic: each unit contributes float partial sums; the owner adds
  // its peers' partials in CTA order. The same schedule gives bitwise the same result however
  // the CTAs are timed (the order of accumulation never depends on arrival).
  auto const s = StreamKScheduler::make(GemmCoord(3, 5, 1), 7, args_for(11));
  auto value = [](long long tile, long long k) { return 1.0f / static_cast<float>(3 + tile * 7 + k); };
  auto run = [&](bool reverse_arrival) {
    std::vector<float> partial(static_cast<size_t>(s.grid_size()), 0.0f);
    std::vector<float> out(static_cast<size_t>(s.tile_count()), 0.0f);
    // Phase 1: every peer stores its partial (arrival order varies).
    std::vector<int> ctas;
    for (int c = 0; c < s.grid_size(); ++c) ctas.push_back(c);
    if (reverse_arrival) std::reverse(ctas.begin(), ctas.end());
    for (int c : ctas) {
      if (!s.stores_partial(c)) continue;
      StreamKWork const w = s.unit(c, 0);
      float acc = 0;
      for (long long k = w.k_begin; k < w.k_end; ++k) acc += value(w.tile, k);
      partial[static_cast<size_t>(c)] = acc;
    }
    // Phase 2: owners finish in any order; each adds peers in CTA order.
    for (int c : ctas) {
      for (long long i = 0; i < s.unit_count(c); ++i) {
        StreamKWork const w = s.unit(c, i);
        if (!w.finishes_tile) continue;
        float acc = 0;
        for (long long k = w.k_begin; k < w.k_end; ++k) acc += value(w.tile, k);
        for (int p = w.first_peer; p <= w.last_peer; ++p) acc += partial[static_cast<size_t>(p)];
        out[static_cast<size_t>(w.tile)] = acc;
      }
    }
    return out;
  };
  std::vector<float> const a = run(false);
  std::vector<float> const b = run(true);
  for (size_t t = 0; t < a.size(); ++t) {
    EXPECT_EQ(a[t], b[t]) << "tile " << t;
    float ref = 0;
    for (long long k = 0; k < 7; ++k) ref += value(static_cast<long long>(t), k);
    EXPECT_NEAR(a[t], ref, 1e-6f) << "tile " << t;
  }
}

TEST(StreamK, TheCheckerCatchesBrokenSchedules) {
  auto const s = StreamKScheduler::make(GemmCoord(3, 3, 1), 4, args_for(5));
  ASSERT_EQ(check_stream_k(s), "");
  ASSERT_TRUE(s.stores_partial(1));
  // A unit one iteration short leaves a (tile, k-iteration) uncovered.
  EXPECT_NE(check_units(s, [&](int c, long long i) {
              StreamKWork w = s.unit(c, i);
              if (c == 0 && i == 0) --w.k_end;
              return w;
            }),
            "");
  // A peer that claims to finish its tile makes two finishers.
  EXPECT_NE(check_units(s, [&](int c, long long i) {
              StreamKWork w = s.unit(c, i);
              if (c == 1 && i == 0) w.finishes_tile = true;
              return w;
            }),
            "");
  // An owner that forgets its last peer breaks the fix-up order.
  EXPECT_NE(check_units(s, [&](int c, long long i) {
              StreamKWork w = s.unit(c, i);
              if (w.finishes_tile && w.last_peer >= w.first_peer) --w.last_peer;
              return w;
            }),
            "");
}

}  // namespace
