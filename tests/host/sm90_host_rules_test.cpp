// Four of the sm_90a GEMM host's rules, on the shapes their measurements name and over every
// small case: how many K slices a problem gets (sm90_choose_splits,
// kernel/sm90_gemm_cta.hpp), the 16-wide skinny kernel's in-flight limit (sm90_skinny_in_flight)
// and L2 cache hints (sm90_skinny_l2_hints), and the row alignment asked of an operand before it
// is read in place (sm90_operand_align, gemm/device/sm90_operand_read.hpp). No GPU.
#include <tessel/gemm/device/sm90_operand_read.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace tessel;
using kernel::detail::sm90_choose_splits;

TEST(Sm90HostRules, KSlicesOnlyFromThirtyTwoKTiles) {
  struct Case {
    long long cluster_tiles;
    int k_tiles, clusters, tile_n;
    bool skinny;
    int slices;
    char const* what;
  };
  constexpr Case cases[] = {
      // 64-wide tiles, 132 resident 1x1 clusters: below 32 k-tiles one pass.
      {32, 8, 132, 64, false, 1, "512^3 on 128x64 tiles"},
      {18, 16, 132, 64, false, 1, "384x384x1024"},
      {32, 31, 132, 64, true, 1, "31 k-tiles"},
      // From 32: as many slices as clusters allow, at least 4 k-tiles each, at most 16 (below 2048 k-tiles).
      {32, 32, 132, 64, true, 4, "16x2048x2048 on 64x16 tiles: 132 / 32 clusters a tile"},
      {8, 32, 132, 64, false, 8, "256x256x2048: 32 / 4 k-tiles"},
      {8, 64, 132, 64, false, 16, "256x256x4096: capped at 16"},
      // 64-wide tiles of a skinny D split only while they fill at most a quarter of the clusters;
      // of a wider one with 64 k-tiles or more, while they fill at most half.
      {33, 64, 132, 64, true, 4, "33 tiles fill a quarter"},
      {34, 64, 132, 64, true, 1, "34 tiles fill more"},
      {36, 64, 132, 64, false, 3, "768x384x4096 on 128x64 tiles"},
      {48, 64, 132, 64, false, 2, "256x1536x4096"},
      {64, 64, 132, 64, false, 2, "2048x256x4096"},
      {67, 64, 132, 64, false, 1, "67 tiles fill more than half"},
      {64, 32, 132, 64, false, 1, "512x1024x2048: 32 k-tiles, a quarter"},
      {8, 64, 132, 64, true, 16, "16x1024x4096 on 64x16 tiles: capped at 16"},
      // The 16-wide tiles of a decode-sized D on fast HBM (these cases' GPU): at half the clusters
      // from 64 k-tiles, a quarter below (and on slower HBM: SixteenWideTilesSplitAtHalfOnFastHbm).
      {64, 64, 132, 16, true, 2, "16x4096x4096 on 64x16 tiles: 64 tiles fill under half"},
      {66, 224, 132, 16, true, 2, "16x4224x14336: 66 tiles, half exactly"},
      {67, 64, 132, 16, true, 1, "67 tiles fill more than half"},
      {64, 63, 132, 16, true, 1, "63 k-tiles: a quarter"},
      {33, 63, 132, 16, true, 4, "33 tiles, 63 k-tiles: a quarter"},
      {128, 128, 132, 16, true, 1, "1x8192x8192: a full round"},
      {4, 512, 132, 64, false, 16, "128x128x32768 on 64x64 tiles: 512 k-tiles, still 16"},
      // One slice per 32 k-tiles where that is more than 16 (a slice of K 2048 or more).
      {4, 1024, 132, 64, false, 32, "128x128x65536 on 64x64 tiles: 1024 / 32"},
      {2, 1024, 132, 64, false, 32, "128x128x65536 on 128x64 tiles: 1024 / 32"},
      {4, 6272, 132, 64, false, 33, "64x256x401408 on 128x64 tiles: one round of 132"},
      {1, 1024, 132, 256, false, 32, "128x128x65536 on one 128x256 tile: 1024 / 32"},
      {1, 6272, 132, 256, false, 132, "64x256x401408 on one 128x256 tile: one round of 132"},
      // Wider tiles: at most half the clusters, at least 16 k-tiles a slice.
      {24, 128, 66, 192, false, 2, "1024x1024x8192 on 128x192 tiles in 2x1 clusters"},
      {1, 128, 132, 256, false, 8, "128x128x8192 on one 128x256 tile"},
      {1, 47, 66, 256, false, 2, "47 k-tiles: 2 slices of 16 or more"},
      {1, 31, 66, 256, false, 1, "31 k-tiles"},
      {34, 128, 66, 256, false, 1, "34 cluster tiles fill more than half"},
      {0, 128, 66, 256, false, 1, "no tiles: nothing to split"},
  };
  for (Case const& c : cases)
    EXPECT_EQ(sm90_choose_splits(c.cluster_tiles, c.k_tiles, c.clusters, c.tile_n, c.skinny, true), c.slices) << c.what;

  // Every case: no more units than clusters, no slice below its k-tiles, at most 16 slices or one
  // per 32 k-tiles.
  std::vector<int> k_tile_counts;  // 1..300 and some long K
  for (int k = 1; k <= 300; ++k) k_tile_counts.push_back(k);
  for (int k : {1024, 1087, 1151, 2048, 4000, 6272}) k_tile_counts.push_back(k);
  int split = 0;
  for (int clusters : {1, 66, 132}) {
    for (int tile_n : {16, 64, 128, 192, 256}) {
      int const per_slice = tile_n <= 64 ? 4 : 16;
      for (long long tiles = 1; tiles <= 80; ++tiles) {
        for (int k_tiles : k_tile_counts) {
          bool const skinny = (tiles + k_tiles) % 2 == 0, fast_hbm = (tiles + k_tiles) % 3 == 0;
          int const s = sm90_choose_splits(tiles, k_tiles, clusters, tile_n, skinny, fast_hbm);
          if (s > 1 && 2 * tiles > clusters) ADD_FAILURE() << "more than half the clusters: " << tiles << " tiles";
          ASSERT_GE(s, 1);
          if (s == 1) continue;
          ++split;
          EXPECT_GE(k_tiles, 32) << tiles << " tiles, " << k_tiles << " k-tiles, " << clusters << " clusters, " << tile_n;
          EXPECT_LE(s, k_tiles / 32 > 16 ? k_tiles / 32 : 16);
          EXPECT_LE(s * tiles, clusters) << tiles << " tiles, " << k_tiles << " k-tiles, " << clusters << " clusters";
          EXPECT_GE(k_tiles / s, per_slice) << tiles << " tiles, " << k_tiles << " k-tiles, tile_n " << tile_n;
        }
      }
    }
  }
  EXPECT_GT(split, 1000);
}

TEST(Sm90HostRules, SixteenWideTilesSplitAtHalfOnFastHbm) {
  // 64 tiles of 64x16 (16x4096xK) on 132 SMs: 2 slices on the H200's HBM, none on the H100's,
  // whose in-flight limit serves them (sm90_skinny_in_flight); a quarter of the clusters splits on both.
  EXPECT_EQ(sm90_choose_splits(64, 64, 132, 16, true, true), 2);
  EXPECT_EQ(sm90_choose_splits(64, 64, 132, 16, true, false), 1);
  EXPECT_EQ(sm90_choose_splits(48, 128, 132, 16, true, false), 1);
  EXPECT_EQ(sm90_choose_splits(32, 64, 132, 16, true, false), 4);
  EXPECT_EQ(sm90_choose_splits(32, 64, 132, 16, true, true), 4);
  // The 64-wide tiles of a skinny D keep the quarter on either GPU.
  EXPECT_EQ(sm90_choose_splits(64, 64, 132, 64, true, true), 1);
  EXPECT_EQ(sm90_choose_splits(33, 64, 132, 64, true, true), 4);
}

TEST(Sm90HostRules, SkinnyInFlightLimitOnlyWhereItWasMeasuredToPay) {
  // The 16-wide skinny kernel's in-flight limit (measured: kernel/sm90_gemm_cta.hpp; a D one tile
  // column wide, 132 resident CTAs): the H200 limits a full
  // round of tiles with a long K and leaves half a round alone; the H100 limits about half a round
  // (60-66 tiles) and leaves fewer (starved) and more alone.
  struct Case {
    long long tiles;
    int k_tiles;
    bool fast_hbm;
    int limit;
    char const* what;
  };
  constexpr Case cases[] = {
      {128, 128, true, 9, "H200 16x8192x8192: 0.92 -> 0.95"},
      {448, 128, true, 9, "H200 16x28672x8192: 0.99 -> 1.03"},
      {64, 64, true, 0, "H200 16x4096x4096: 0.97 -> 0.83 with a limit"},
      {64, 224, true, 0, "H200 16x4096x14336: 0.86 -> 0.68 with a limit"},
      {128, 64, true, 0, "H200, 64 k-tiles: not measured, left alone"},
      {64, 64, false, 10, "H100 16x4096x4096: 0.92 -> 0.99"},
      {64, 224, false, 10, "H100 16x4096x14336: 0.89-0.90 -> 0.92-0.93"},
      {64, 128, false, 10, "H100 16x4096x8192: 0.88 -> 0.96"},
      {48, 128, false, 0, "H100 16x3072x8192: 1.00 -> 0.84 with a limit (48 CTAs cannot pull the HBM's rate)"},
      {80, 128, false, 0, "H100 16x5120x8192: even"},
      {128, 128, false, 0, "H100 16x8192x8192: 0.99 -> 0.98 with a limit"},
      {448, 128, false, 0, "H100 16x28672x8192: even"},
      {16, 64, false, 0, "a few tiles (split K instead)"},
  };
  for (Case const& c : cases)
    EXPECT_EQ(kernel::detail::sm90_skinny_in_flight(c.tiles, c.k_tiles, 132, c.fast_hbm), c.limit) << c.what;
  // Any case: no limit, or one below the 16-wide kernel's 21 stages that still keeps several
  // k-tiles in flight.
  for (bool fast : {false, true})
    for (long long tiles = 1; tiles <= 600; tiles += 7)
      for (int k_tiles = 1; k_tiles <= 400; k_tiles += 3) {
        int const l = kernel::detail::sm90_skinny_in_flight(tiles, k_tiles, 132, fast);
        EXPECT_TRUE(l == 0 || (l >= 8 && l < 21)) << tiles << " tiles, " << k_tiles << " k-tiles: " << l;
      }
}

TEST(Sm90HostRules, SkinnyL2HintsFromNineTenthsOfARound) {
  // On 132 SMs (one 16-wide CTA each): 16x8192x8192 and 8192x16x8192 (128 tiles) take them, and
  // so would 448 tiles (16x28672x8192 by name; the heuristic runs it on 128x64 tiles);
  // 16x4096x8192 (64 tiles, 2.8% slower with them on the H200) does not.
  EXPECT_TRUE(kernel::detail::sm90_skinny_l2_hints(128, 132));
  EXPECT_TRUE(kernel::detail::sm90_skinny_l2_hints(448, 132));
  EXPECT_TRUE(kernel::detail::sm90_skinny_l2_hints(119, 132));
  EXPECT_FALSE(kernel::detail::sm90_skinny_l2_hints(118, 132));
  EXPECT_FALSE(kernel::detail::sm90_skinny_l2_hints(64, 132));
  EXPECT_FALSE(kernel::detail::sm90_skinny_l2_hints(1, 132));
}

TEST(Sm90HostRules, RowsOffTheSectorsAreStagedOnlyForALargeD) {
  // M N / (M + N) >= 3072: 8192^3, 6144^3 and 4096 x 12288 ask 32-byte rows; 4096^3, 1024^3 and
  // the skinny 16 x 8192 (whose B a copy would read twice more) keep TMA's 16.
  EXPECT_EQ(sm90_operand_align(8192, 8192), 32);
  EXPECT_EQ(sm90_operand_align(6144, 6144), 32);
  EXPECT_EQ(sm90_operand_align(4096, 12288), 32);
  EXPECT_EQ(sm90_operand_align(4096, 4096), 16);
  EXPECT_EQ(sm90_operand_align(1024, 1024), 16);
  EXPECT_EQ(sm90_operand_align(16, 8192), 16);
  EXPECT_EQ(sm90_operand_align(0, 8192), 16);
  // With sm90_operand_read: bf16 K-major rows K + 8 elements apart (16 mod 32 bytes) are staged
  // at 8192^3 and read in place at 4096^3; 32-byte multiple rows are read in place at any size.
  constexpr std::uintptr_t base = 0x10000;
  EXPECT_EQ(sm90_operand_read(base, 8200, 1, 0, 1, 2, true, sm90_operand_align(8192, 8192)), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(base, 4104, 1, 0, 1, 2, true, sm90_operand_align(4096, 4096)), Sm90OperandRead::k_major);
  EXPECT_EQ(sm90_operand_read(base, 8208, 1, 0, 1, 2, true, sm90_operand_align(8192, 8192)), Sm90OperandRead::k_major);
}
