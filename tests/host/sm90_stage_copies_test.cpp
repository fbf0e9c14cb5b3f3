// What the sm_90a producer copies into a stage on a tile at the edge (sm90_stage_copies,
// kernel/sm90_gemm_cta.hpp): for every cluster shape and tile width the kernels use, every extent
// around the tile and share boundaries, with and without edge maps, and every tile and CTA of the
// grid --
//   * each CTA's share of A and of B is copied with at least its rows inside the operand (none
//     when it has none), in whole 8-row swizzle atoms or as the whole share, never more;
//   * the bytes each CTA announces are exactly the rows that land in its stage: its own copy of an
//     unshared tile, every CTA's copy of a shared one (a miscount hangs the stage or lets the
//     consumers read it early);
//   * `whole` means exactly what an interior tile copies, and every interior tile is whole.
// And sm90_edge_rows and sm90_mn_edge_rows, the host's rules for the edge box and the MN-major
// edge boxes.
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace tessel;
using kernel::Sm90GemmParams;
using kernel::detail::sm90_edge_rows;
using kernel::detail::sm90_mn_edge_rows;
using kernel::detail::sm90_stage_copies;
using kernel::detail::Sm90StageCopies;
using kernel::detail::Sm90TileOrigin;

namespace {

// The fields of a kernel configuration that the stage arithmetic reads (Sm90GemmConfig's names).
template <int TileM_, int TileN_, int ClusterM_, int ClusterN_, class Element_ = std::uint16_t>
struct FakeConfig {
  using Element = Element_;
  static constexpr int TileM = TileM_, TileN = TileN_, TileK = 128 / int(sizeof(Element));
  static constexpr int ClusterM = ClusterM_, ClusterN = ClusterN_;
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
};

constexpr std::int64_t kExtents[] = {1, 7, 8, 9, 16, 17, 40, 63, 64, 65, 96, 100, 127, 128, 129,
                                     150, 192, 200, 224, 255, 256, 257, 300, 383, 384, 520};

template <class Config>
void check_config(std::string const& name) {
  constexpr int ClusterM = Config::ClusterM, ClusterN = Config::ClusterN;
  constexpr int RowsA = Config::TileM / ClusterN, RowsB = Config::TileN / ClusterM;
  constexpr std::uint32_t RowBytes = std::uint32_t(Config::TileK * int(sizeof(typename Config::Element)));
  constexpr int Ranks = ClusterM * ClusterN;
  for (std::int64_t m : kExtents) {
    for (std::int64_t n : kExtents) {
      // Edge rows: none, K-major edge maps, MN-major boxes (16-bit operands whose shares are whole
      // 64-row boxes: the kernels that read MN-major operands in place).
      for (int edges : {0, 1, 2}) {
        constexpr int Box = 128 / int(sizeof(typename Config::Element));
        bool const mn_a = edges == 2 && sizeof(typename Config::Element) == 2 && RowsA % Box == 0;
        bool const mn_b = edges == 2 && sizeof(typename Config::Element) == 2 && RowsB % Box == 0;
        Sm90GemmParams p;
        p.m = m, p.n = n;
        p.a_edge_rows = edges == 0 ? 0 : mn_a ? sm90_mn_edge_rows(m, RowsA, Box) : sm90_edge_rows(m, RowsA);
        p.b_edge_rows = edges == 0 ? 0 : mn_b ? sm90_mn_edge_rows(n, RowsB, Box) : sm90_edge_rows(n, RowsB);
        std::int64_t const rows = ((m + Config::TileM - 1) / Config::TileM + ClusterM - 1) / ClusterM;
        std::int64_t const cols = ((n + Config::TileN - 1) / Config::TileN + ClusterN - 1) / ClusterN;
        for (std::int64_t tm = 0; tm < rows; ++tm) {
          for (std::int64_t tn = 0; tn < cols; ++tn) {
            std::string const where = name + " m " + std::to_string(m) + " n " + std::to_string(n) +
                                      (edges == 2 ? " MN-major edges" : edges == 1 ? " edge maps" : " no edge maps") + " cluster tile (" +
                                      std::to_string(tm) + ", " + std::to_string(tn) + ")";
            std::vector<Sm90StageCopies> c;
            std::vector<Sm90TileOrigin<Config>> at;
            for (int r = 0; r < Ranks; ++r) {
              at.emplace_back(GemmCoord(tm, tn, 0), r);
              c.push_back(sm90_stage_copies<Config>(p, at.back(), r));
            }
            int a_all = 0, b_all = 0;  // the rows of a shared tile every CTA receives
            for (int r = 0; r < Ranks; ++r) a_all += c[r].a_rows, b_all += c[r].b_rows;
            for (int r = 0; r < Ranks; ++r) {
              std::string const who = where + " rank " + std::to_string(r);
              // This CTA's shares: the first row of each, the rows inside, what is copied.
              std::int64_t const a0 = at[r].m0 + (ClusterN > 1 ? r * RowsA : 0);
              std::int64_t const b0 = at[r].n0 + (ClusterM > 1 ? r * RowsB : 0);
              auto const inside = [](std::int64_t first, std::int64_t extent, int share) {
                std::int64_t const v = extent - first;
                return v <= 0 ? 0 : v >= share ? share : int(v);
              };
              auto const check_share = [&](char const* op, int copied, int valid, int share, bool mn) {
                if (valid == 0) {
                  EXPECT_EQ(copied, 0) << who << ": " << op << " share wholly past the edge is copied";
                } else {
                  EXPECT_GE(copied, valid) << who << ": " << op << " share loses rows inside the operand";
                  EXPECT_LE(copied, share) << who << ": " << op << " share copies more than itself";
                  EXPECT_TRUE(copied == share || copied % (mn ? Box : 8) == 0)
                      << who << ": " << op << " edge of " << copied << " rows is not whole " << (mn ? "boxes" : "swizzle atoms");
                }
              };
              check_share("A", c[r].a_rows, inside(a0, m, RowsA), RowsA, mn_a);
              check_share("B", c[r].b_rows, inside(b0, n, RowsB), RowsB, mn_b);
              // The bytes that land in this CTA's stage.
              int const a_lands = ClusterN > 1 ? a_all : c[r].a_rows;
              int const b_lands = ClusterM > 1 ? b_all : c[r].b_rows;
              EXPECT_EQ(c[r].bytes, std::uint32_t(a_lands + b_lands) * RowBytes) << who << ": bytes announced";
              bool const interior = at[r].m0 + Config::TileM <= m && at[r].n0 + Config::TileN <= n;
              if (interior) {
                EXPECT_TRUE(c[r].whole) << who << ": an interior tile is not whole";
              }
              if (c[r].whole) {
                EXPECT_EQ(c[r].bytes, Config::StageBytes) << who;
                EXPECT_EQ(c[r].a_rows, RowsA) << who;
                EXPECT_EQ(c[r].b_rows, RowsB) << who;
              }
              if (::testing::Test::HasFailure()) return;  // one report per configuration
            }
          }
        }
      }
    }
  }
}

}  // namespace

TEST(Sm90StageCopies, EveryShareAndEveryByteOnEveryClusterShape) {
  check_config<FakeConfig<128, 256, 1, 1>>("128x256 1x1");
  check_config<FakeConfig<128, 256, 2, 1>>("128x256 2x1");
  check_config<FakeConfig<128, 256, 1, 2>>("128x256 1x2");
  check_config<FakeConfig<128, 192, 2, 1>>("128x192 2x1");
  check_config<FakeConfig<128, 128, 2, 1>>("128x128 2x1");
  check_config<FakeConfig<128, 64, 1, 1>>("128x64 1x1");
  check_config<FakeConfig<64, 64, 1, 1>>("64x64 1x1");
  check_config<FakeConfig<64, 16, 1, 1>>("64x16 1x1");
  check_config<FakeConfig<128, 256, 2, 1, std::uint8_t>>("fp8 128x256 2x1");
  check_config<FakeConfig<128, 128, 2, 1, std::uint8_t>>("fp8 128x128 2x1");
  check_config<FakeConfig<128, 256, 4, 1>>("128x256 4x1 (allowed by Sm90GemmConfig, not registered)");
}

TEST(Sm90StageCopies, EdgeRowsAreTheRemainderInWholeSwizzleAtoms) {
  EXPECT_EQ(sm90_edge_rows(192, 64), 0);   // no share ends inside
  EXPECT_EQ(sm90_edge_rows(200, 64), 8);   // 8 rows inside
  EXPECT_EQ(sm90_edge_rows(150, 64), 24);  // 22 -> 24
  EXPECT_EQ(sm90_edge_rows(1000, 128), 104);
  EXPECT_EQ(sm90_edge_rows(4097, 64), 8);  // one row -> one atom
  EXPECT_EQ(sm90_edge_rows(4095, 256), 0);  // 255 rows round to the whole share: the full box
  EXPECT_EQ(sm90_edge_rows(17, 16), 8);
}

TEST(Sm90StageCopies, MnMajorEdgeRowsAreTheRemainderInWholeBoxes) {
  EXPECT_EQ(sm90_mn_edge_rows(64, 128, 64), 64);   // a 64-row M on 128-row tiles: one box of two
  EXPECT_EQ(sm90_mn_edge_rows(65, 128, 64), 0);    // rounds to the whole share
  EXPECT_EQ(sm90_mn_edge_rows(1, 256, 64), 64);
  EXPECT_EQ(sm90_mn_edge_rows(130, 256, 64), 192);
  EXPECT_EQ(sm90_mn_edge_rows(512, 256, 64), 0);   // no share ends inside
  EXPECT_EQ(sm90_mn_edge_rows(200, 128, 64), 0);   // 72 rows: two boxes, the whole share
}
