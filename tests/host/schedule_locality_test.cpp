// The L2-locality model and figure: hand-counted waves, and the figure's claim that the
// swizzled and grouped orders touch fewer panels per wave than the identity order.
#include <tessel/schedule.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace tessel;

namespace {

TEST(WaveFootprints, CountsDistinctPanelsPerWave) {
  // Positions 0..6 in waves of 3: tiles (0,0) (0,1) (1,1) | no-op (2,0) (2,0) | (0,0,batch 1).
  std::vector<std::optional<GemmCoord>> const order = {
      GemmCoord(0, 0, 0), GemmCoord(0, 1, 0), GemmCoord(1, 1, 0), std::nullopt,
      GemmCoord(2, 0, 0), GemmCoord(2, 0, 0), GemmCoord(0, 0, 1)};
  auto const waves = wave_footprints(7, 3, [&](long long p) { return order[static_cast<size_t>(p)]; });
  ASSERT_EQ(waves.size(), 3u);
  EXPECT_EQ(waves[0].tiles, 3);
  EXPECT_EQ(waves[0].a_panels, 2);  // m = 0, 1
  EXPECT_EQ(waves[0].b_panels, 2);  // n = 0, 1
  EXPECT_EQ(waves[1].tiles, 2);
  EXPECT_EQ(waves[1].panels(), 2);
  EXPECT_EQ(waves[2].panels(), 2);  // another batch reads other panels
  EXPECT_THROW(wave_footprints(7, 0, [&](long long p) { return order[static_cast<size_t>(p)]; }), ScheduleError);
}

LocalityRow const& row(std::vector<LocalityRow> const& rows, std::string const& prefix) {
  for (auto const& r : rows)
    if (r.order.rfind(prefix, 0) == 0) return r;
  throw std::runtime_error("no row " + prefix);
}

TEST(LocalityFigure, SquareProblemWithWidePanels) {
  // 8192 x 8192 with 128 x 256 tiles: 64 x 32 tiles, 2048 of them; waves of 132 CTAs -> 16 waves.
  auto const rows = l2_locality_figure(GemmCoord(8192, 8192, 8192), GemmCoord(128, 256, 64), 132);
  ASSERT_EQ(rows.size(), 13u);
  for (auto const& r : rows) {
    ASSERT_EQ(r.waves.size(), 16u) << r.order;
    long long tiles = 0;
    for (auto const& w : r.waves) tiles += w.tiles;
    EXPECT_EQ(tiles, 2048) << r.order;
  }
  // Identity<1>: x = m is fastest, so each wave of 132 blocks spans every one of the 64 tile rows
  // and 3 tile columns (132 = 2*64 + 4); the last wave has 68 blocks: 64 rows, 2 columns.
  LocalityRow const& identity = row(rows, "identity<1>");
  for (size_t w = 0; w + 1 < identity.waves.size(); ++w) {
    EXPECT_EQ(identity.waves[w].a_panels, 64) << "wave " << w;
    EXPECT_EQ(identity.waves[w].b_panels, 3) << "wave " << w;
  }
  EXPECT_EQ(identity.waves.back().panels(), 66);
  // Horizontal (and persistent along N, group 1): row-major, 132 = 4*32 + 4 -> 5 rows, 32 columns.
  EXPECT_EQ(row(rows, "horizontal").waves[0].panels(), 37);
  EXPECT_EQ(row(rows, "persistent along-N group 1").waves[0].panels(), 37);
  // Persistent along N, group 8: bands of 8 rows x 32 columns; 132 tiles = 8 rows x 16.5 columns.
  EXPECT_EQ(row(rows, "persistent along-N group 8").waves[0].a_panels, 8);
  EXPECT_EQ(row(rows, "persistent along-N group 8").waves[0].b_panels, 17);
  // Identity<8>: L = 3, block x = 8m + (n mod 8): 132 blocks = 16.5 tile rows x 8 columns.
  EXPECT_EQ(row(rows, "identity<8>").waves[0].a_panels, 17);
  EXPECT_EQ(row(rows, "identity<8>").waves[0].b_panels, 8);

  // The figure's claim: every swizzled or grouped order touches fewer panels per wave, on
  // average, than the identity order; the best ones (group 8) touch well under half.
  int grouped = 0;
  for (auto const& r : rows) {
    if (!r.grouped) continue;
    ++grouped;
    EXPECT_LT(r.mean_panels(), identity.mean_panels()) << r.order;
  }
  EXPECT_EQ(grouped, 9);
  EXPECT_LT(row(rows, "identity<8>").mean_panels(), 0.45 * identity.mean_panels());
  EXPECT_LT(row(rows, "persistent along-N group 8").mean_panels(), 0.45 * identity.mean_panels());
  EXPECT_LT(row(rows, "persistent along-M group 8").mean_panels(), 0.45 * identity.mean_panels());
}

}  // namespace
