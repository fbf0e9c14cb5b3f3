// The host-side decisions of the sm_80 skinny GEMM: the wave-balanced split-K choice
// (schedule/split_k_waves.hpp), which side is small and its tile, when the heuristic takes the
// skinny kernel (gemm/device/sm80_skinny_policy.hpp), and the CTA -> work map of the kernel
// (gemm/kernel/sm80_skinny_gemm_params.hpp). No GPU.
#include <tessel/gemm/device/sm80_skinny_policy.hpp>
#include <tessel/gemm/kernel/sm80_skinny_gemm_params.hpp>
#include <tessel/schedule/split_k_waves.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace tessel;

namespace {

// The cost model, evaluated directly: the smallest-cost S (fewest slices on ties) by brute force.
int brute_force_splits(long long tiles, long long iterations, long long slots, int overhead, int min_iterations,
                       int max_slices) {
  int best = 1;
  long long best_cost = split_k_waves_cost(tiles, iterations, slots, overhead, 1);
  for (int s = 2; s <= max_slices; ++s) {
    if ((iterations + s - 1) / s < min_iterations) continue;
    long long const c = split_k_waves_cost(tiles, iterations, slots, overhead, s);
    if (c < best_cost) best = s, best_cost = c;
  }
  return best;
}

}  // namespace

TEST(SplitKWaves, TheIssueShapeFillsOneWave) {
  // M=16, N=K=8192: 64 strips of 128 columns, 128 k-tiles of 64, 132 SMs x 2 CTAs.
  EXPECT_EQ(choose_split_k_waves(64, 128, 264, 5, 4, 512), 4);  // 256 CTAs, 32 k-tiles each
  EXPECT_EQ(sm80_skinny_splits(64, 128, 264, 5), 4);
  // 108 slots: 5 slices (320 CTAs, 3 waves of 26 k-tiles) beat one unsplit wave of 128 and the
  // 2-wave splits (3 slices: 2 x 43).
  EXPECT_EQ(choose_split_k_waves(64, 128, 108, 5, 4, 512), 5);
  // Already more tiles than slots: no split.
  EXPECT_EQ(choose_split_k_waves(1000, 128, 264, 5, 4, 512), 1);
  // One tile, very long K: one wave of slots, the fewest slices that reach 63 k-tiles each.
  EXPECT_EQ(choose_split_k_waves(1, 16384, 264, 5, 4, 512), 261);
}

TEST(SplitKWaves, MatchesTheCostModelEverywhere) {
  for (long long tiles : {1LL, 3LL, 16LL, 64LL, 100LL, 263LL, 264LL, 265LL, 1000LL}) {
    for (long long iters : {0LL, 1LL, 4LL, 7LL, 64LL, 128LL, 1001LL}) {
      for (long long slots : {1LL, 108LL, 264LL}) {
        int const s = choose_split_k_waves(tiles, iters, slots, 5, 4, 64);
        EXPECT_EQ(s, brute_force_splits(tiles, iters, slots, 5, 4, 64))
            << "tiles " << tiles << " iterations " << iters << " slots " << slots;
        EXPECT_GE(s, 1);
        EXPECT_LE(s, 64);
        if (s > 1) {
          EXPECT_GE((iters + s - 1) / s, 4) << "each slice keeps at least min_iterations";
        }
      }
    }
  }
}

TEST(Sm80SkinnyPolicy, SmallSideAndTile) {
  constexpr Sm80SkinnyShape a = sm80_skinny_shape(16, 8192);
  static_assert(!a.swap && a.small == 16 && a.large == 8192 && a.tile_m == 16);
  constexpr Sm80SkinnyShape b = sm80_skinny_shape(8192, 16);  // a column-major D: canonical N small
  static_assert(b.swap && b.small == 16 && b.large == 8192 && b.tile_m == 16);
  EXPECT_EQ(sm80_skinny_shape(1, 100).tile_m, 16);
  EXPECT_EQ(sm80_skinny_shape(17, 100).tile_m, 32);
  EXPECT_EQ(sm80_skinny_shape(32, 100).tile_m, 32);
  EXPECT_EQ(sm80_skinny_shape(33, 100).tile_m, 64);
  EXPECT_EQ(sm80_skinny_shape(64, 100).tile_m, 64);
  EXPECT_EQ(sm80_skinny_shape(500, 300).tile_m, 64);  // by name only: several 64-row tiles
  EXPECT_FALSE(sm80_skinny_shape(7, 7).swap);         // ties keep the canonical orientation
}

TEST(Sm80SkinnyPolicy, PaysForSkinnyProblemsWithALongOperandOfMegabytes) {
  EXPECT_TRUE(sm80_skinny_pays(16, 8192, 8192, 1, 2));
  EXPECT_TRUE(sm80_skinny_pays(8192, 16, 8192, 1, 2));
  EXPECT_TRUE(sm80_skinny_pays(1, 8192, 8192, 1, 2));
  EXPECT_TRUE(sm80_skinny_pays(64, 8192, 8192, 1, 2));
  EXPECT_FALSE(sm80_skinny_pays(65, 8192, 8192, 1, 2));
  EXPECT_TRUE(sm80_skinny_pays(16, 4096, 1024, 1, 2));   // exactly 8 MiB
  EXPECT_FALSE(sm80_skinny_pays(16, 4096, 1023, 1, 2));  // just below
  EXPECT_TRUE(sm80_skinny_pays(16, 1024, 1024, 4, 2));   // all batches count
  EXPECT_FALSE(sm80_skinny_pays(0, 8192, 8192, 1, 2));
  EXPECT_TRUE(sm80_skinny_pays(16, 1LL << 40, 1LL << 40, 1LL << 30, 2));  // no overflow
}

TEST(Sm80SkinnyWork, EveryCtaOwnsOneTileSliceAndTheSlicesOfATileShareItsGroup) {
  for (int tiles_m : {1, 2, 4}) {
    for (int splits : {1, 3, 4}) {
      for (int tiles_n : {1, 5}) {
        long long const batch = 3, ctas = tiles_m * splits * tiles_n * batch;
        long long const groups = tiles_m * tiles_n * batch;
        std::vector<int> seen(std::size_t(groups * splits), 0);
        for (long long cta = 0; cta < ctas; ++cta) {
          kernel::Sm80SkinnyWork const w = kernel::sm80_skinny_work(cta, tiles_m, splits, tiles_n);
          ASSERT_TRUE(w.m_tile >= 0 && w.m_tile < tiles_m && w.slice >= 0 && w.slice < splits && w.n_tile >= 0 &&
                      w.n_tile < tiles_n && w.batch >= 0 && w.batch < batch);
          EXPECT_EQ(w.group, w.m_tile + tiles_m * (w.n_tile + tiles_n * w.batch));
          ++seen[std::size_t(w.group * splits + w.slice)];
          if (cta > 0) {  // the m tile varies fastest, then the slice
            kernel::Sm80SkinnyWork const prev = kernel::sm80_skinny_work(cta - 1, tiles_m, splits, tiles_n);
            if (w.m_tile != 0) {
              EXPECT_EQ(w.m_tile, prev.m_tile + 1);
            }
          }
        }
        for (int c : seen) EXPECT_EQ(c, 1) << "every (tile, slice) exactly once";
      }
    }
  }
}
