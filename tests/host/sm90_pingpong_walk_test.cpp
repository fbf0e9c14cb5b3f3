// The ping-pong GEMM's bookkeeping on the host (kernel/sm90_gemm_pingpong.hpp): PipelineState::skip
// is that many advances; sm90_k_range partitions the k-tiles; and, on schedules with every
// per-CTA tile count (1, odd, even), split-K and ring depths, the consumers' pipeline states --
// advance() over their own k-tiles, skip() over the other's tiles, as the kernel walks -- name
// the stage and round parity the producer filled for each of their k-tiles, and the order
// barriers' arrivals and waits pair up (none left pending, none waited for in vain).
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/schedule/persistent.hpp>

#include <gtest/gtest.h>

#include <vector>

using namespace tessel;
using kernel::detail::sm90_k_range;
using kernel::detail::Sm90KRange;

namespace {

template <int Stages>
void check_skip() {
  for (int index = 0; index < Stages; ++index) {
    for (std::uint32_t phase : {0u, 1u}) {
      PipelineState stepped{index, phase};
      for (int n = 0; n <= 4 * Stages + 3; ++n) {
        PipelineState skipped{index, phase};
        skipped.skip<Stages>(n);
        EXPECT_EQ(skipped.index, stepped.index) << "Stages " << Stages << " from (" << index << "," << phase << ") skip " << n;
        EXPECT_EQ(skipped.phase, stepped.phase) << "Stages " << Stages << " from (" << index << "," << phase << ") skip " << n;
        stepped.advance<Stages>();
      }
    }
  }
}

// One CTA of the ping-pong kernel, played out: what the producer fills, what each consumer
// waits for, and the order barriers' traffic.
template <int Stages>
void check_walk(PersistentTileScheduler const& sched, int cta, int k_tiles, int splits, int batch) {
  struct Fill {
    int index;
    std::uint32_t phase;
  };
  std::vector<Fill> fills;  // per k-tile of the walk, the producer's state
  std::vector<int> owner;   // per k-tile of the walk, the local tile it belongs to
  PipelineState producer;
  int local = 0;
  for (long long t = sched.first_tile(cta); sched.is_valid(t); t = sched.next_tile(t), ++local) {
    Sm90KRange const k = sm90_k_range(k_tiles, splits, int(sched.tile_offset(t).k()) / batch);
    ASSERT_LT(k.begin, k.end);
    for (int kt = k.begin; kt < k.end; ++kt) {
      fills.push_back({producer.index, producer.phase});
      owner.push_back(local);
      producer.advance<Stages>();
    }
  }
  int const tiles = local;
  int arrivals[2] = {0, 0}, waits[2] = {0, 0};  // at order barrier c
  for (int consumer = 0; consumer < 2; ++consumer) {
    PipelineState st;
    std::size_t q = 0;  // k-tile of the walk
    bool mine = consumer == 0;
    local = 0;
    for (long long t = sched.first_tile(cta); sched.is_valid(t); t = sched.next_tile(t), mine = !mine, ++local) {
      Sm90KRange const k = sm90_k_range(k_tiles, splits, int(sched.tile_offset(t).k()) / batch);
      if (!mine) {
        st.skip<Stages>(k.end - k.begin);
        q += std::size_t(k.end - k.begin);
        continue;
      }
      if (t != sched.first_tile(cta)) ++waits[consumer];
      for (int kt = k.begin; kt < k.end; ++kt, ++q) {
        ASSERT_EQ(owner[q], local);
        EXPECT_EQ(st.index, fills[q].index) << "consumer " << consumer << " k-tile " << q;
        EXPECT_EQ(st.phase, fills[q].phase) << "consumer " << consumer << " k-tile " << q;
        st.advance<Stages>();
      }
      if (sched.is_valid(sched.next_tile(t))) ++arrivals[1 - consumer];
    }
    EXPECT_EQ(q, fills.size());
  }
  // Consumer c waits before each of its tiles but L[0]: tiles / 2 waits for consumer 1 (L[1],
  // L[3], ...), (tiles - 1) / 2 for consumer 0 (L[2], L[4], ...) -- each matched by one arrival.
  for (int c = 0; c < 2; ++c) EXPECT_EQ(arrivals[c], waits[c]) << "order barrier " << c << ", " << tiles << " tiles";
  EXPECT_EQ(waits[1], tiles / 2);
  EXPECT_EQ(waits[0], tiles > 0 ? (tiles - 1) / 2 : 0);
}

}  // namespace

TEST(Sm90PingpongWalk, SkipIsThatManyAdvances) {
  check_skip<2>();
  check_skip<3>();
  check_skip<5>();
  check_skip<8>();
  PipelineState big;
  big.skip<5>(2147483647);  // 2^31 - 1 = 5 * 429496729 + 2: 429496729 wraps, odd
  EXPECT_EQ(big.index, 2);
  EXPECT_EQ(big.phase, 1u);
}

TEST(Sm90PingpongWalk, KRangesPartitionTheKTiles) {
  for (int k_tiles : {1, 2, 7, 64, 79, 1000}) {
    for (int splits = 1; splits <= k_tiles && splits <= 16; ++splits) {
      int next = 0;
      for (int s = 0; s < splits; ++s) {
        Sm90KRange const k = sm90_k_range(k_tiles, splits, s);
        EXPECT_EQ(k.begin, next) << k_tiles << " k-tiles, slice " << s << " of " << splits;
        EXPECT_LT(k.begin, k.end) << k_tiles << " k-tiles, slice " << s << " of " << splits;
        next = k.end;
      }
      EXPECT_EQ(next, k_tiles);
    }
  }
}

TEST(Sm90PingpongWalk, ConsumersFollowTheProducersRingOnEveryTileCount) {
  struct Case {
    int tiles_m, tiles_n, batch, splits, grid, k_tiles;
  };
  // Per-CTA tile counts 1, 1-2, 2-3, 3 and many; a grid larger than the tiles (grid = tiles);
  // split-K slices of unequal length; k-tile counts below, at and above the ring depth.
  constexpr Case cases[] = {{1, 1, 1, 1, 66, 1},    {3, 5, 1, 1, 66, 9},   {8, 9, 1, 1, 66, 4},  {7, 19, 1, 1, 66, 5},
                            {11, 18, 1, 1, 66, 13}, {2, 3, 2, 3, 66, 17},  {1, 2, 1, 5, 7, 23},  {33, 17, 1, 1, 132, 65},
                            {4, 4, 3, 1, 5, 2},     {5, 7, 1, 4, 9, 11}};
  for (Case const& c : cases) {
    PersistentArguments args;
    args.sm_count = c.grid;
    args.group = 8;
    PersistentTileScheduler const sched =
        PersistentTileScheduler::make(GemmCoord(c.tiles_m, c.tiles_n, c.batch * c.splits), args);
    for (int cta = 0; cta < sched.grid_size(); ++cta) {
      SCOPED_TRACE(testing::Message() << c.tiles_m << "x" << c.tiles_n << "x" << c.batch << " splits " << c.splits << " grid "
                                      << c.grid << " k-tiles " << c.k_tiles << " CTA " << cta);
      check_walk<5>(sched, cta, c.k_tiles, c.splits, c.batch);
      check_walk<3>(sched, cta, c.k_tiles, c.splits, c.batch);
    }
  }
}
