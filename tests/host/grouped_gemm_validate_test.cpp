// tests/host/grouped_gemm_validate_test.cpp -- the grouped GEMM's argument rules
// (gemm/device/grouped_gemm_arguments.hpp) and its tile walk (schedule/grouped.hpp), no GPU needed.
#include <gtest/gtest.h>
#include <tessel/gemm/device/grouped_gemm_arguments.hpp>
#include <tessel/schedule/grouped.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tessel {
namespace {

// Fake, aligned device addresses: validation never dereferences them.
void const* fake(std::uintptr_t at) { return reinterpret_cast<void const*>(at); }

GroupedGemmArguments valid() {
  GroupedGemmArguments g = make_grouped_gemm(8, 1000, 4096, 1024, DType::bf16, DType::bf16);
  g.a = fake(0x10000), g.b = fake(0x20000), g.d = const_cast<void*>(fake(0x30000));
  g.offsets = static_cast<int const*>(fake(0x40000));
  return g;
}

void expect_refused(GroupedGemmArguments const& g, StatusCode code, std::string const& starts) {
  Status const s = grouped_gemm_validate(g);
  EXPECT_EQ(s.code, code) << s.reason;
  EXPECT_EQ(s.reason.rfind(starts, 0), 0u) << "reason: " << s.reason;
}

TEST(GroupedGemmValidate, AcceptsPackedProblems) {
  EXPECT_TRUE(grouped_gemm_validate(valid()).ok()) << grouped_gemm_validate(valid()).reason;
  GroupedGemmArguments g = valid();
  g.b_layout = GroupedLayoutB::kn, g.ldb = g.n, g.batch_stride_b = g.k * g.n;
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;
  g = valid();
  g.d_type = DType::f32;
  EXPECT_TRUE(grouped_gemm_validate(g).ok());
  g.groups = kGroupedGemmMaxGroups;
  g.batch_stride_b = g.n * g.k;
  EXPECT_TRUE(grouped_gemm_validate(g).ok());
}

TEST(GroupedGemmValidate, GroupCount) {
  GroupedGemmArguments g = valid();
  g.groups = 0;
  expect_refused(g, StatusCode::invalid_argument, "groups: 0 must be >= 1");
  g.groups = -3;
  expect_refused(g, StatusCode::invalid_argument, "groups: -3");
  g.groups = kGroupedGemmMaxGroups + 1;
  expect_refused(g, StatusCode::not_supported, "groups: 1025 is above");
}

TEST(GroupedGemmValidate, Sizes) {
  for (char const* name : {"total_m", "n", "k"}) {
    GroupedGemmArguments g = valid();
    std::string const n = name;
    (n == "total_m" ? g.total_m : n == "n" ? g.n : g.k) = -1;
    expect_refused(g, StatusCode::invalid_argument, n + ": -1 is negative");
  }
  GroupedGemmArguments g = valid();
  g.total_m = std::int64_t(1) << 31;
  expect_refused(g, StatusCode::not_supported, "total_m: 2147483648 is above 2^31 - 1");
}

TEST(GroupedGemmValidate, NoOpsNeedNoPointers) {
  GroupedGemmArguments g = make_grouped_gemm(4, 0, 128, 64, DType::f16, DType::f16);
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;  // total_m = 0
  g = make_grouped_gemm(4, 100, 0, 64, DType::f16, DType::f16);
  EXPECT_TRUE(grouped_gemm_validate(g).ok());  // N = 0
  g = valid();  // K = 0: D = beta * C, A and B not read
  g.k = 0, g.a = nullptr, g.b = nullptr;
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;
  g = valid();  // alpha = 0 likewise
  g.alpha = 0.0f, g.a = nullptr, g.b = nullptr;
  EXPECT_TRUE(grouped_gemm_validate(g).ok());
}

TEST(GroupedGemmValidate, Dtypes) {
  GroupedGemmArguments g = valid();
  g.ab_type = DType::f32;
  expect_refused(g, StatusCode::invalid_argument, "ab_type: fp32");
  g = valid();
  g.d_type = DType::f16;
  expect_refused(g, StatusCode::invalid_argument, "d_type: fp16 output with bf16 inputs");
  g = valid();
  g.ab_type = DType::e4m3;
  expect_refused(g, StatusCode::invalid_argument, "ab_type:");
}

TEST(GroupedGemmValidate, NullPointers) {
  struct Case { char const* starts; void (*breaks)(GroupedGemmArguments&); };
  for (Case c : {Case{"offsets: null", [](GroupedGemmArguments& g) { g.offsets = nullptr; }},
                 Case{"d: null", [](GroupedGemmArguments& g) { g.d = nullptr; }},
                 Case{"a: null", [](GroupedGemmArguments& g) { g.a = nullptr; }},
                 Case{"b: null", [](GroupedGemmArguments& g) { g.b = nullptr; }},
                 Case{"c: null, but C is read", [](GroupedGemmArguments& g) { g.beta = 1.0f; }}}) {
    GroupedGemmArguments g = valid();
    c.breaks(g);
    expect_refused(g, StatusCode::invalid_argument, c.starts);
  }
}

TEST(GroupedGemmValidate, LeadingDimensionsAndStrides) {
  GroupedGemmArguments g = valid();
  g.lda = 1000;
  expect_refused(g, StatusCode::invalid_argument, "lda: 1000 is below the minimum 1024");
  g = valid();
  g.ldb = 8;
  expect_refused(g, StatusCode::invalid_argument, "ldb: 8 is below the minimum 1024 (B is [G, N, K] (nk)");
  g = valid();
  g.b_layout = GroupedLayoutB::kn;  // ldb = K = 1024 < N
  expect_refused(g, StatusCode::invalid_argument, "ldb: 1024 is below the minimum 4096 (B is [G, K, N] (kn)");
  g = valid();
  g.ldd = 100;
  expect_refused(g, StatusCode::invalid_argument, "ldd: 100 is below the minimum 4096");
  g = valid();
  g.beta = 0.5f, g.c = fake(0x50000), g.ldc = 7;
  expect_refused(g, StatusCode::invalid_argument, "ldc: 7 is below the minimum 4096");
  g = valid();
  g.batch_stride_b = 1024;
  expect_refused(g, StatusCode::invalid_argument, "batch_stride_b: 1024 is below");
  g.groups = 1;  // one group: its stride is never used
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;
}

TEST(GroupedGemmValidate, TmaAlignment) {
  GroupedGemmArguments g = make_grouped_gemm(8, 1000, 4096, 1020, DType::bf16, DType::bf16);  // K not a multiple of 8
  g.a = fake(0x10000), g.b = fake(0x20000), g.d = const_cast<void*>(fake(0x30000));
  g.offsets = static_cast<int const*>(fake(0x40000));
  expect_refused(g, StatusCode::not_supported, "lda: 1020 elements (2040 bytes) is not a multiple of 16 bytes");
  g.lda = 1024;  // A padded: B's rows still are not
  expect_refused(g, StatusCode::not_supported, "ldb: 1020 elements");
  g.ldb = 1024, g.batch_stride_b = 1024 * 4096;
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;  // padded rows, any K
  g.batch_stride_b = 1024 * 4096 + 4;
  expect_refused(g, StatusCode::not_supported, "batch_stride_b:");
  g = valid();
  g.a = fake(0x10008);
  expect_refused(g, StatusCode::not_supported, "a: not 16-byte aligned");
  g = valid();
  g.d = const_cast<void*>(fake(0x30001));
  expect_refused(g, StatusCode::invalid_argument, "d: not aligned to its 2-byte bf16 elements");
  g = valid();  // D's leading dimension is free (odd: register stores)
  g.ldd = 4097;
  EXPECT_TRUE(grouped_gemm_validate(g).ok());
  g = valid();
  g.offsets = static_cast<int const*>(fake(0x40002));
  expect_refused(g, StatusCode::invalid_argument, "offsets: not aligned");
}

TEST(GroupedGemmValidate, ArrayForm) {
  std::int64_t m[3] = {5, 0, 7}, n[3] = {16, 16, 16}, k[3] = {8, 8, 8}, ld8[3] = {8, 8, 8}, ld16[3] = {16, 16, 16};
  void const* ptr[3] = {fake(0x1000), fake(0x2000), fake(0x3000)};
  void* out[3] = {const_cast<void*>(fake(0x4000)), nullptr, const_cast<void*>(fake(0x5000))};
  GroupedGemmArrayArguments g;
  g.groups = 3, g.m = m, g.n = n, g.k = k, g.a = ptr, g.lda = ld8, g.b = ptr, g.ldb = ld8, g.d = out, g.ldd = ld16;
  EXPECT_TRUE(grouped_gemm_validate(g).ok()) << grouped_gemm_validate(g).reason;  // group 1 is empty: d[1] unused
  m[2] = -1;
  Status s = grouped_gemm_validate(g);
  EXPECT_EQ(s.reason.rfind("m[2]: -1 is negative", 0), 0u) << s.reason;
  m[2] = 7;
  g.b_layout = GroupedLayoutB::kn;  // ldb must then cover N = 16
  s = grouped_gemm_validate(g);
  EXPECT_EQ(s.reason.rfind("ldb[0]: 8 is below the minimum 16", 0), 0u) << s.reason;
  g.b_layout = GroupedLayoutB::nk;
  g.beta = 1.0f;
  s = grouped_gemm_validate(g);
  EXPECT_EQ(s.reason.rfind("c: null", 0), 0u) << s.reason;
  g.beta = 0.0f, g.groups = -1;
  s = grouped_gemm_validate(g);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  g.groups = 0;
  EXPECT_TRUE(grouped_gemm_validate(g).ok());
}

// ---- the tile walk ------------------------------------------------------------------------------

TEST(GroupedSchedule, RowsClampOffsets) {
  int const offs[] = {300, 300, 301, 250, -5, 5000};
  std::int64_t const total = 1000;
  auto rows = [&](int g) { GroupedRows r = grouped_rows(offs, g, total); return std::pair{r.start, r.end}; };
  EXPECT_EQ(rows(0), (std::pair<std::int64_t, std::int64_t>{0, 300}));
  EXPECT_EQ(rows(1), (std::pair<std::int64_t, std::int64_t>{300, 300}));  // empty
  EXPECT_EQ(rows(2), (std::pair<std::int64_t, std::int64_t>{300, 301}));  // one row
  EXPECT_EQ(rows(3), (std::pair<std::int64_t, std::int64_t>{301, 301}));  // decreasing: empty
  EXPECT_EQ(rows(4), (std::pair<std::int64_t, std::int64_t>{250, 250}));  // negative end: empty
  EXPECT_EQ(rows(5), (std::pair<std::int64_t, std::int64_t>{0, 1000}));   // clamped to [0, total_m]
}

TEST(GroupedSchedule, WorkedExample) {  // the file comment's
  long long const ends[] = {6, 6, 8};
  std::vector<std::tuple<int, int, int>> got;
  for (long long t = 0; t < 8; ++t) {
    GroupedTile w = grouped_tile_of(t, ends, 3, 2);
    got.emplace_back(w.group, w.m_tile, w.n_tile);
  }
  std::vector<std::tuple<int, int, int>> const want = {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 0, 1}, {0, 1, 1}, {0, 2, 1},
                                                       {2, 0, 0}, {2, 0, 1}};
  EXPECT_EQ(got, want);
}

// Every tile of every group exactly once, for ragged groups (empty, 1 row, tall ones spanning
// several raster bands) and tile columns 1..7.
TEST(GroupedSchedule, CoversEveryTileOnce) {
  std::vector<int> sizes = {0, 1, 127, 128, 129, 0, 0, 2000, 1, 1025, 3000, 0};
  constexpr int TileM = 128;
  for (int n_tiles = 1; n_tiles <= 7; ++n_tiles) {
    std::vector<int> offs;
    std::vector<long long> ends;
    int total = 0;
    long long sum = 0;
    for (int s : sizes) offs.push_back(total += s);
    for (int g = 0; g < int(sizes.size()); ++g) {
      GroupedRows r = grouped_rows(offs.data(), g, total);
      ends.push_back(sum += grouped_tiles(r.end - r.start, TileM, n_tiles));
    }
    std::set<std::tuple<int, int, int>> seen;
    for (long long t = 0; t < sum; ++t) {
      GroupedTile w = grouped_tile_of(t, ends.data(), int(ends.size()), n_tiles);
      ASSERT_GT(sizes[w.group], 0) << "tile " << t << " in empty group " << w.group;
      ASSERT_GE(w.m_tile, 0);
      ASSERT_LT(w.m_tile, (sizes[w.group] + TileM - 1) / TileM) << "t=" << t;
      ASSERT_GE(w.n_tile, 0);
      ASSERT_LT(w.n_tile, n_tiles);
      ASSERT_TRUE(seen.emplace(w.group, w.m_tile, w.n_tile).second) << "tile " << t << " repeats";
    }
    long long want = 0;
    for (int s : sizes) want += (s + TileM - 1) / TileM * (long long)n_tiles;
    EXPECT_EQ((long long)seen.size(), want);
  }
}

// Inside a raster band, consecutive ids walk tile rows first (they share one B strip).
TEST(GroupedSchedule, BandsWalkRowsFirst) {
  long long const ends[] = {20 * 3};  // one group: 20 tile rows, 3 tile columns
  GroupedTile a = grouped_tile_of(0, ends, 1, 3), b = grouped_tile_of(7, ends, 1, 3), c = grouped_tile_of(8, ends, 1, 3);
  EXPECT_EQ(std::tuple(a.m_tile, a.n_tile), std::tuple(0, 0));
  EXPECT_EQ(std::tuple(b.m_tile, b.n_tile), std::tuple(7, 0));
  EXPECT_EQ(std::tuple(c.m_tile, c.n_tile), std::tuple(0, 1));
  GroupedTile last = grouped_tile_of(59, ends, 1, 3);  // the last band holds 4 tile rows
  EXPECT_EQ(std::tuple(last.m_tile, last.n_tile), std::tuple(19, 2));
}

}  // namespace
}  // namespace tessel
