// The grouped raster and the persistent tile scheduler: bijections, the worked examples, the
// raster heuristic, and coverage of every (tile, k-iteration) exactly once.
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel {
void PrintTo(GemmCoord const& c, std::ostream* os) { *os << "(" << c.m() << "," << c.n() << "," << c.k() << ")"; }
}  // namespace tessel

using namespace tessel;

namespace {

TEST(GroupedRaster, HeaderExample) {
  // 4 x 3 tiles, along N, group 2: the id at each tile (rows m, columns n).
  constexpr int kIds[4][3] = {{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11}};
  GroupedRaster const r{4, 3, RasterOrder::kAlongN, 2};
  for (int m = 0; m < 4; ++m) {
    for (int n = 0; n < 3; ++n) {
      EXPECT_EQ(r(kIds[m][n]), GemmCoord(m, n, 0));
      EXPECT_EQ(r.index_of(m, n), kIds[m][n]);
    }
  }
}

TEST(GroupedRaster, GroupOneIsRowOrColumnMajor) {
  GroupedRaster const rows{5, 7, RasterOrder::kAlongN, 1};
  GroupedRaster const cols{5, 7, RasterOrder::kAlongM, 1};
  for (long long id = 0; id < 35; ++id) {
    EXPECT_EQ(rows(id), GemmCoord(id / 7, id % 7, 0));
    EXPECT_EQ(cols(id), GemmCoord(id % 5, id / 5, 0));
  }
}

TEST(GroupedRaster, BijectionAndBandLocality) {
  for (RasterOrder order : {RasterOrder::kAlongM, RasterOrder::kAlongN}) {
    for (int group = 1; group <= 8; ++group) {
      for (long long tm = 1; tm <= 23; ++tm) {
        for (long long tn = 1; tn <= 23; ++tn) {
          GroupedRaster const r{tm, tn, order, group};
          std::vector<int> hit(static_cast<size_t>(tm * tn), 0);
          for (long long id = 0; id < tm * tn; ++id) {
            GemmCoord const t = r(id);
            ASSERT_TRUE(t.m() >= 0 && t.m() < tm && t.n() >= 0 && t.n() < tn);
            ASSERT_EQ(r.index_of(t.m(), t.n()), id);
            ++hit[static_cast<size_t>(t.m() * tn + t.n())];
            // Consecutive ids stay within one band of `group` rows (columns).
            long long const across = order == RasterOrder::kAlongN ? t.m() : t.n();
            long long const along = order == RasterOrder::kAlongN ? tn : tm;
            ASSERT_EQ(across / group, id / (group * along)) << "id " << id;
          }
          for (int h : hit) ASSERT_EQ(h, 1);
        }
      }
    }
  }
}

// operator() walks in 32 bits when the grid fits; the 64-bit walk is the same map.
TEST(GroupedRaster, ThirtyTwoAndSixtyFourBitWalksAgree) {
  for (RasterOrder order : {RasterOrder::kAlongM, RasterOrder::kAlongN}) {
    for (int group : {1, 3, 8, 16}) {
      for (long long tm : {1LL, 7LL, 33LL, 64LL}) {
        for (long long tn : {1LL, 5LL, 32LL, 65LL}) {
          GroupedRaster const r{tm, tn, order, group};
          for (long long id = 0; id < tm * tn; ++id) {
            GemmCoord const a = r.walk<long long>(id), b = r.walk<unsigned>(unsigned(id)), c = r(id);
            ASSERT_EQ(a.m(), b.m()) << id;
            ASSERT_EQ(a.n(), b.n()) << id;
            ASSERT_EQ(a.m(), c.m()) << id;
            ASSERT_EQ(a.n(), c.n()) << id;
          }
        }
      }
    }
  }
  // A grid past 2^32 tiles takes the 64-bit walk.
  GroupedRaster const big{1LL << 20, 1LL << 13, RasterOrder::kAlongN, 8};
  long long const id = (1LL << 33) - 5;
  GemmCoord const t = big(id);
  EXPECT_EQ(big.index_of(t.m(), t.n()), id);
}

TEST(GroupedRaster, HeuristicWalksTheDimensionWithFewerTiles) {
  EXPECT_EQ(choose_raster_order(64, 32), RasterOrder::kAlongN);
  EXPECT_EQ(choose_raster_order(32, 64), RasterOrder::kAlongM);
  EXPECT_EQ(choose_raster_order(8, 8), RasterOrder::kAlongN);
  EXPECT_EQ(resolve_raster_order(RasterOrderOption::kAlongM, 64, 32), RasterOrder::kAlongM);
  EXPECT_EQ(resolve_raster_order(RasterOrderOption::kHeuristic, 3, 4), RasterOrder::kAlongM);
}

TEST(Persistent, HeaderExample) {
  PersistentArguments args;
  args.sm_count = 3;
  args.raster = RasterOrderOption::kAlongN;
  auto const s = PersistentTileScheduler::make(GemmCoord(4, 4, 1), args);
  ASSERT_EQ(s.grid_size(), 3);
  EXPECT_EQ(s.grid_shape(), (Dim3{3, 1, 1}));
  std::vector<std::vector<GemmCoord>> const want = {
      {{0, 0, 0}, {0, 3, 0}, {1, 2, 0}, {2, 1, 0}, {3, 0, 0}, {3, 3, 0}},
      {{0, 1, 0}, {1, 0, 0}, {1, 3, 0}, {2, 2, 0}, {3, 1, 0}},
      {{0, 2, 0}, {1, 1, 0}, {2, 0, 0}, {2, 3, 0}, {3, 2, 0}}};
  for (int c = 0; c < 3; ++c) {
    std::vector<GemmCoord> got;
    for (long long t = s.first_tile(c); s.is_valid(t); t = s.next_tile(t)) got.push_back(s.tile_offset(t));
    EXPECT_EQ(got, want[c]) << "CTA " << c;
    EXPECT_EQ(s.tiles_for(c), static_cast<long long>(want[c].size()));
  }
}

TEST(Persistent, GridIsSmsTimesCtasCappedByTiles) {
  PersistentArguments args;
  args.sm_count = 132;
  args.ctas_per_sm = 2;
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(64, 32, 1), args).grid_size(), 264);
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(10, 10, 1), args).grid_size(), 100);
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(10, 10, 3), args).grid_size(), 264);
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(0, 10, 1), args).grid_size(), 0);
  // The heuristic raster comes from the tile counts unless overridden.
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(64, 32, 1), args).raster().order, RasterOrder::kAlongN);
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(32, 64, 1), args).raster().order, RasterOrder::kAlongM);
  args.raster = RasterOrderOption::kAlongN;
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(32, 64, 1), args).raster().order, RasterOrder::kAlongN);
}

TEST(Persistent, RefusesBadArguments) {
  PersistentArguments args;
  args.sm_count = 0;
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(4, 4, 1), args), ScheduleError);
  args.sm_count = 4;
  args.group = 9;
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(4, 4, 1), args), ScheduleError);
  args.group = 0;
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(4, 4, 1), args), ScheduleError);
  args.group = 8;
  args.ctas_per_sm = 0;
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(4, 4, 1), args), ScheduleError);
  args.ctas_per_sm = 1;
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(4, 4, 0), args), ScheduleError);
  EXPECT_THROW(PersistentTileScheduler::make(GemmCoord(-1, 4, 1), args), ScheduleError);
  try {
    args.group = 12;
    PersistentTileScheduler::make(GemmCoord(4, 4, 1), args);
    FAIL() << "group 12 must be refused";
  } catch (ScheduleError const& e) {
    EXPECT_NE(std::string(e.what()).find("group = 12 must be in 1..8"), std::string::npos) << e.what();
  }
}

// Every (tile, k-iteration) of the tiled shape is covered exactly once when each CTA walks its
// tiles and runs all k_iters iterations of each. `next` is the walk's step (the scheduler's
// next_tile, or a broken one in the checker's own test). Returns "" or the first violation.
template <class Next>
std::string check_walk(PersistentTileScheduler const& s, long long k_iters, Next next) {
  GemmCoord const tiled = s.tiled_shape();
  std::vector<int> hits(static_cast<size_t>(tiled.product() * k_iters), 0);
  for (int c = 0; c < s.grid_size(); ++c) {
    long long steps = 0;
    for (long long t = s.first_tile(c); s.is_valid(t); t = next(t), ++steps) {
      GemmCoord const x = s.tile_offset(t);
      if (!tile_in_bounds(tiled, x)) return "tile outside the grid";
      if (s.linear_of(x) != t) return "linear_of is not the inverse of tile_offset";
      if (s.linear_tile(c, steps) != t) return "linear_tile disagrees with the walk";
      long long const tile = (x.k() * tiled.m() + x.m()) * tiled.n() + x.n();
      for (long long k = 0; k < k_iters; ++k) ++hits[static_cast<size_t>(tile * k_iters + k)];
    }
    if (steps != s.tiles_for(c)) return "tiles_for disagrees with the walk";
  }
  for (int h : hits)
    if (h != 1) return "a (tile, k-iteration) covered " + std::to_string(h) + " times";
  return "";
}

std::string check_persistent(PersistentTileScheduler const& s, long long k_iters) {
  return check_walk(s, k_iters, [&](long long t) { return s.next_tile(t); });
}

TEST(Persistent, TheCheckerCatchesBrokenWalks) {
  PersistentArguments args{5, 1, RasterOrderOption::kAlongN, 2};
  auto const s = PersistentTileScheduler::make(GemmCoord(6, 7, 1), args);
  EXPECT_EQ(check_persistent(s, 3), "");
  // Striding one too far skips tiles; one too short visits tiles twice.
  EXPECT_NE(check_walk(s, 3, [&](long long t) { return t + s.grid_size() + 1; }), "");
  EXPECT_NE(check_walk(s, 3, [&](long long t) { return t + s.grid_size() - 1; }), "");
}

TEST(Persistent, BalancedGridTakesTheSameWavesWithTheFewestCtas) {
  PersistentArguments args;
  args.sm_count = 66;  // 132 SMs in clusters of 2
  args.balance_waves = true;
  // 4096^3 in 128x256 tiles, 2x1 clusters: 256 cluster tiles, 4 waves on 66 clusters or on 64.
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(16, 16, 1), args).grid_size(), 64);
  // 8192x28672x4096: 3584 cluster tiles, 55 waves on 66; 65 would need 56.
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(32, 112, 1), args).grid_size(), 66);
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(5, 13, 1), args).grid_size(), 65);  // fewer tiles than CTAs
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(67, 1, 1), args).grid_size(), 34);  // 2 waves: 34 + 33
  EXPECT_EQ(PersistentTileScheduler::make(GemmCoord(0, 4, 1), args).grid_size(), 0);
  // The property, by brute force: the waves of the full grid, and no smaller grid takes as few.
  for (int sms : {1, 7, 64, 66, 132}) {
    for (long long tiles = 1; tiles <= 700; ++tiles) {
      args.sm_count = sms;
      int const g = PersistentTileScheduler::make(GemmCoord(tiles, 1, 1), args).grid_size();
      long long const full = std::min<long long>(sms, tiles);
      auto const waves = [&](long long grid) { return (tiles + grid - 1) / grid; };
      ASSERT_TRUE(g >= 1 && g <= full) << tiles << " tiles, " << sms << " CTAs: grid " << g;
      ASSERT_EQ(waves(g), waves(full)) << tiles << " tiles, " << sms << " CTAs: grid " << g;
      if (g > 1) ASSERT_GT(waves(g - 1), waves(full)) << tiles << " tiles, " << sms << " CTAs: grid " << g;
      auto const s = PersistentTileScheduler::make(GemmCoord(tiles, 1, 1), args);
      ASSERT_EQ(check_persistent(s, 1), "") << tiles << " tiles, " << sms << " CTAs";
    }
  }
}

// tiles_for and tile_offset take 32-bit paths where the tile count allows; they must agree with
// the plain 64-bit formulas, on both sides of 2^31 and 2^32 tiles.
TEST(Persistent, ThirtyTwoBitPathsAgreeWithSixtyFourBitFormulas) {
  PersistentArguments args;
  args.sm_count = 132;
  args.group = 8;
  for (GemmCoord shape : {GemmCoord(32, 16, 1), GemmCoord(37, 53, 3), GemmCoord(1000, 1000, 2000),  // 2e9 tiles
                          GemmCoord(1000, 1000, 3000),                                              // 3e9: 64-bit tiles_for
                          GemmCoord(70000, 70000, 2)}) {                                            // 9.8e9: 64-bit both
    auto const s = PersistentTileScheduler::make(shape, args);
    long long const tiles = shape.m() * shape.n() * shape.k(), per_batch = shape.m() * shape.n();
    ASSERT_EQ(s.tile_count(), tiles);
    for (int cta : {0, 1, 65, s.grid_size() - 1})
      EXPECT_EQ(s.tiles_for(cta), (tiles - cta + s.grid_size() - 1) / s.grid_size()) << shape.m() << "x" << shape.n();
    for (long long linear : {0LL, 1LL, per_batch - 1, per_batch, tiles / 2 + 7, 0xffffffffLL, 0x100000000LL, tiles - 1}) {
      if (linear < 0 || linear >= tiles) continue;
      GemmCoord const t = s.tile_offset(linear);
      GemmCoord const mn = s.raster()(linear % per_batch);
      EXPECT_EQ(t.m(), mn.m()) << linear;
      EXPECT_EQ(t.n(), mn.n()) << linear;
      EXPECT_EQ(t.k(), linear / per_batch) << linear;
    }
  }
}

// FastDivisor32 against the hardware's division: every divisor up to 2^12 with dividends around
// its multiples, powers of two and their neighbours, and divisors and dividends near 2^31.
TEST(FastDivisor32, AgreesWithDivision) {
  auto const check = [](long long d, long long n) {
    if (n < 0 || n > 0x7fffffffLL) return;
    FastDivisor32 const f = FastDivisor32::make(d);
    ASSERT_EQ(f.divisor(), std::uint32_t(d));
    ASSERT_EQ(f.div(std::uint32_t(n)), std::uint32_t(n / d)) << n << " / " << d;
  };
  for (long long d = 1; d <= 4096; ++d)
    for (long long q : {0LL, 1LL, 2LL, 7LL, 1000LL, 0x7fffffffLL / d - 1, 0x7fffffffLL / d})
      for (long long r : {-1LL, 0LL, 1LL, d - 1}) check(d, q * d + r);
  for (int k = 0; k < 31; ++k) {
    for (long long d : {(1LL << k) - 1, 1LL << k, (1LL << k) + 1}) {
      if (d < 1 || d > 0x7fffffffLL) continue;
      for (long long n : {0LL, d - 1, d, d + 1, 3 * d - 1, 0x7fffffffLL, 0x7ffffffeLL, 0x40000000LL, 123456789LL}) check(d, n);
    }
  }
  std::uint64_t x = 0x9e3779b97f4a7c15ull;  // a fixed xorshift stream: random divisors and dividends
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    long long const d = 1 + static_cast<long long>((x >> 3) % (i % 2 ? 0x7fffffffull : 100000ull));
    check(d, static_cast<long long>((x >> 33) & 0x7fffffff));
  }
  EXPECT_THROW(FastDivisor32::make(0), ScheduleError);
  EXPECT_THROW(FastDivisor32::make(0x80000000LL), ScheduleError);
}

// The 32-bit walk (tiles_for32, tile_offset32: the divisions by FastDivisor32s make() prepared)
// agrees with tiles_for and tile_offset on every tile of schedules with ragged last bands,
// either raster order, one or several batches.
TEST(Persistent, ThirtyTwoBitWalkAgreesWithTheGeneralOne) {
  int schedules = 0;
  for (RasterOrderOption order : {RasterOrderOption::kAlongM, RasterOrderOption::kAlongN}) {
    for (int group : {1, 3, 8}) {
      for (GemmCoord shape : {GemmCoord(1, 1, 1), GemmCoord(13, 5, 1), GemmCoord(32, 16, 1), GemmCoord(37, 53, 3),
                              GemmCoord(64, 112, 1), GemmCoord(43, 150, 2), GemmCoord(9, 200, 1)}) {
        for (int sms : {1, 7, 66, 132}) {
          PersistentArguments args;
          args.sm_count = sms, args.raster = order, args.group = group, args.balance_waves = sms % 2 == 0;
          auto const s = PersistentTileScheduler::make(shape, args);
          ASSERT_TRUE(s.fits32());
          for (int cta = 0; cta < s.grid_size(); ++cta) ASSERT_EQ(s.tiles_for32(cta), s.tiles_for(cta)) << cta;
          for (long long linear = 0; linear < s.tile_count(); ++linear)
            ASSERT_EQ(s.tile_offset32(std::uint32_t(linear)), s.tile_offset(linear)) << linear;
          ++schedules;
        }
      }
    }
  }
  EXPECT_EQ(schedules, 2 * 3 * 7 * 4);
  PersistentArguments args;
  args.sm_count = 132, args.group = 8;
  EXPECT_TRUE(PersistentTileScheduler::make(GemmCoord(1000, 1000, 2000), args).fits32());    // 2e9 tiles
  EXPECT_FALSE(PersistentTileScheduler::make(GemmCoord(1000, 1000, 3000), args).fits32());   // 3e9
  args.raster = RasterOrderOption::kAlongN;
  EXPECT_FALSE(PersistentTileScheduler::make(GemmCoord(1, 300000000, 1), args).fits32());    // bands of 2.4e9 ids
}

TEST(Persistent, CoversEveryTileAndKIterationOnce) {
  long long configs = 0;
  for (long long tm = 1; tm <= 37; ++tm) {
    for (long long tn = 1; tn <= 53; ++tn) {
      for (int sms : {1, 7, 132}) {
        for (auto raster : {RasterOrderOption::kAlongM, RasterOrderOption::kAlongN, RasterOrderOption::kHeuristic}) {
          for (int group : {1, 2, 3, 8}) {
            PersistentArguments args{sms, 1, raster, group};
            long long const batch = (tm + tn) % 3 + 1;  // 1..3 batches over the sweep
            auto const s = PersistentTileScheduler::make(GemmCoord(tm, tn, batch), args);
            ASSERT_EQ(check_persistent(s, 2), "") << tm << "x" << tn << "x" << batch << " sms " << sms
                                                  << " group " << group;
            ++configs;
          }
        }
      }
    }
  }
  EXPECT_EQ(configs, 37LL * 53 * 3 * 3 * 4);
}

TEST(Persistent, AlongMGroupsReproduceTheIdentitySwizzlesOrder) {
  // Two independently written mappings agree: identity<2^L>'s blocks in dispatch order visit the
  // tiles in the order of a persistent schedule along M with group 2^L, when 2^L divides tiles_n.
  auto check = []<int N>(std::integral_constant<int, N>) {
    using S = GemmIdentityThreadblockSwizzle<N>;
    for (long long tm = 1; tm <= 20; ++tm) {
      for (long long tn = N; tn <= 40; tn += N) {
        GemmCoord const tiled(tm, tn, 1);
        int const L = S::get_log_tile(tiled);
        Dim3 const grid = S::get_grid_shape(tiled);
        PersistentArguments args{1, 1, RasterOrderOption::kAlongM, 1 << L};
        auto const p = PersistentTileScheduler::make(tiled, args);
        ASSERT_EQ(grid.volume(), p.tile_count());
        for (long long i = 0; i < grid.volume(); ++i)
          ASSERT_EQ(S::get_tile_offset(L, block_index_at(grid, i)), p.tile_offset(i))
              << "N " << N << " tiles " << tm << "x" << tn << " position " << i;
      }
    }
  };
  check(std::integral_constant<int, 1>{});
  check(std::integral_constant<int, 2>{});
  check(std::integral_constant<int, 4>{});
  check(std::integral_constant<int, 8>{});
}

}  // namespace
