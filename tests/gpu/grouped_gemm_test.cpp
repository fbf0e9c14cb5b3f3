// tests/gpu/grouped_gemm_test.cpp -- the sm_90a grouped GEMM (tessel::grouped_gemm) against the fp64
// reference and cuBLAS, group by group: random data, D poisoned with NaN first, ragged groups
// (empty, 1 row, skewed, tall), G from 1 to 256, N and K off the tile, both B layouts, every
// output type, beta != 0, K = 0; the rows past the last offset (and those of groups the clamped
// offsets leave empty) must stay poisoned. Skips visibly without an sm_90 GPU.
#include "gpu/gemm_verdict.hpp"
#include "gpu/gpu_test.hpp"

#include <gtest/gtest.h>
#include <tessel/gemm/device/grouped_gemm.hpp>
#include <tessel/schedule/grouped.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace tessel {
namespace {

struct Case {
  Case(std::vector<int> r, std::int64_t n_, std::int64_t k_) : rows(std::move(r)), n(n_), k(k_) {}
  std::vector<int> rows;   // per group
  std::int64_t n = 0, k = 0;
  DType ab = DType::bf16, out = DType::bf16;
  GroupedLayoutB layout = GroupedLayoutB::nk;
  float alpha = 1.25f, beta = 0.0f;
  std::int64_t extra_rows = 0;  // rows of A, C and D past the last offset (never written)
  std::int64_t ldd_pad = 0;     // ldd = N + ldd_pad (odd: no pair stores, no TMA stores)
  std::vector<int> offsets;     // empty: the prefix sums of rows; else used as given (device-side rules)
};

std::string describe(Case const& c) {
  return "G=" + std::to_string(c.rows.size()) + " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k) + " " +
         to_string(c.ab) + "->" + to_string(c.out) + " " + to_string(c.layout) + " beta=" + std::to_string(c.beta) +
         " ldd+" + std::to_string(c.ldd_pad);
}

// Runs the case and judges every group; rows no group owns must keep the poison's bytes.
void run_case(Case const& c) {
  int const groups = int(c.rows.size());
  std::vector<int> offs = c.offsets;
  if (offs.empty()) {
    offs.resize(c.rows.size());
    std::partial_sum(c.rows.begin(), c.rows.end(), offs.begin());
  }
  std::int64_t const covered = offs.empty() ? 0 : *std::max_element(offs.begin(), offs.end());
  std::int64_t const total = std::max<std::int64_t>(covered, 0) + c.extra_rows;
  GroupedGemmArguments g = make_grouped_gemm(groups, total, c.n, c.k, c.ab, c.out, c.layout);
  g.alpha = c.alpha, g.beta = c.beta;
  g.ldc = g.ldd = c.n + c.ldd_pad;
  std::size_t const in = size_of(c.ab), out = size_of(c.out);
  std::size_t const na = std::size_t(std::max<std::int64_t>(total * c.k, 1));
  std::size_t const nb = std::size_t(std::max<std::int64_t>(groups * g.batch_stride_b, 1));
  std::size_t const nd = std::size_t(std::max<std::int64_t>(total * g.ldd, 1));
  DeviceMem a(na * in), b(nb * in), cm(nd * out), d(nd * out), poison(nd * out), o(offs.size() * sizeof(int));
  ASSERT_TRUE(a.p && b.p && cm.p && d.p && poison.p && o.p);
  ASSERT_TRUE(reference::fill_uniform_device(a.p, c.ab, na, 11, -1.0f, 1.0f).ok());
  ASSERT_TRUE(reference::fill_uniform_device(b.p, c.ab, nb, 12, -1.0f, 1.0f).ok());
  ASSERT_TRUE(reference::fill_uniform_device(cm.p, c.out, nd, 13).ok());
  ASSERT_TRUE(reference::fill_constant_device(d.p, c.out, nd, NAN).ok());
  ASSERT_TRUE(reference::fill_constant_device(poison.p, c.out, nd, NAN).ok());
  TESSEL_CUDA_OK(cudaMemcpy(o.p, offs.data(), offs.size() * sizeof(int), cudaMemcpyHostToDevice));
  g.a = a.p, g.b = b.p, g.c = cm.p, g.d = d.p, g.offsets = static_cast<int const*>(o.p);

  Status const s = grouped_gemm(g);
  ASSERT_TRUE(s.ok()) << describe(c) << ": " << s.reason;
  TESSEL_CUDA_OK(cudaDeviceSynchronize());

  // Which rows some group owns (the kernel's clamping, schedule/grouped.hpp).
  std::vector<char> owned(std::size_t(total), 0);
  for (int i = 0; i < groups; ++i) {
    GroupedRows const r = grouped_rows(offs.data(), i, total);
    for (std::int64_t row = r.start; row < r.end; ++row) owned[std::size_t(row)] = 1;
  }
  std::vector<unsigned char> const got = download(d.p, nd * out), fresh = download(poison.p, nd * out);
  std::size_t const row_bytes = std::size_t(g.ldd) * out;
  for (std::int64_t row = 0; row < total; ++row) {
    std::size_t const at = std::size_t(row) * row_bytes;
    if (!owned[std::size_t(row)]) {
      ASSERT_EQ(std::memcmp(got.data() + at, fresh.data() + at, row_bytes), 0) << describe(c) << ": row " << row << " belongs to no group but was written";
    } else if (c.ldd_pad > 0) {  // the padding columns of an owned row are never written either
      ASSERT_EQ(std::memcmp(got.data() + at + std::size_t(c.n) * out, fresh.data() + at + std::size_t(c.n) * out,
                            std::size_t(c.ldd_pad) * out), 0)
          << describe(c) << ": row " << row << "'s padding was written";
    }
  }

  // Each group against the fp64 reference and cuBLAS (its slice as a plain GEMM).
  bool const nk = c.layout == GroupedLayoutB::nk;
  for (int i = 0; i < groups; ++i) {
    GroupedRows const r = grouped_rows(offs.data(), i, total);
    if (r.end == r.start) continue;
    GemmArguments x = make_packed_gemm(r.end - r.start, c.n, c.k, 1, c.ab, c.out, MatrixOrder::row_major,
                                       nk ? MatrixOrder::col_major : MatrixOrder::row_major, MatrixOrder::row_major);
    x.lda = g.lda, x.ldb = g.ldb, x.ldc = x.ldd = g.ldd;
    x.a = static_cast<char const*>(g.a) + std::size_t(r.start * g.lda) * in;
    x.b = static_cast<char const*>(g.b) + std::size_t(i * g.batch_stride_b) * in;
    x.c = static_cast<char const*>(g.c) + std::size_t(r.start * g.ldc) * out;
    x.d = static_cast<char*>(g.d) + std::size_t(r.start * g.ldd) * out;
    x.alpha = c.alpha, x.beta = c.beta;
    Verdict const v = judge(x);
    expect_good(v, describe(c) + " group " + std::to_string(i) + " (" + std::to_string(r.end - r.start) + " rows)", c.ab);
    if (::testing::Test::HasFailure()) return;  // the first bad group is enough
  }
}

// Row counts for G groups: a quarter empty, some of 1 row, the rest skewed (a few heavy groups).
std::vector<int> ragged(int groups, int mean, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> rows(static_cast<std::size_t>(groups));
  for (int i = 0; i < groups; ++i) {
    int const pick = int(rng() % 8);
    rows[std::size_t(i)] = pick < 2 ? 0 : pick == 2 ? 1 : pick == 7 ? int(rng() % std::uint64_t(4 * mean + 1)) : int(rng() % std::uint64_t(mean + 1));
  }
  return rows;
}

TEST(GroupedGemm, OneGroup) {
  TESSEL_REQUIRE_SM90();
  run_case({{300}, 200, 136});
  run_case({{1}, 64, 8});
  run_case({{257}, 4100, 520});
}

TEST(GroupedGemm, EightExpertsRagged) {
  TESSEL_REQUIRE_SM90();
  run_case({{0, 1, 517, 129, 0, 64, 1000, 3}, 1000, 264});
  Case c{{5, 0, 130, 0, 1, 256, 2, 0}, 520, 1032};
  c.extra_rows = 77;  // rows past the last offset stay poisoned
  run_case(c);
}

TEST(GroupedGemm, SixtyFourExperts) {
  TESSEL_REQUIRE_SM90();
  run_case({ragged(64, 96, 1), 384, 512});
  Case c{ragged(64, 40, 2), 200, 72};
  c.extra_rows = 5;
  run_case(c);
}

TEST(GroupedGemm, TwoHundredFiftySixExperts) {
  TESSEL_REQUIRE_SM90();
  run_case({ragged(256, 24, 3), 136, 64});
  run_case({ragged(256, 8, 4), 264, 200});
}

TEST(GroupedGemm, MoreGroupsThanSmemDefault) {  // the kernel's table holds 1024
  TESSEL_REQUIRE_SM90();
  run_case({ragged(1024, 3, 5), 64, 64});
}

TEST(GroupedGemm, OutputTypes) {
  TESSEL_REQUIRE_SM90();
  std::vector<int> const rows = {3, 0, 200, 129, 1};
  for (auto [ab, out] : {std::pair{DType::bf16, DType::f32}, std::pair{DType::f16, DType::f16}, std::pair{DType::f16, DType::f32}}) {
    Case c{rows, 300, 136};
    c.ab = ab, c.out = out;
    run_case(c);
  }
}

TEST(GroupedGemm, NContiguousWeights) {  // B as [G, K, N]
  TESSEL_REQUIRE_SM90();
  for (DType t : {DType::bf16, DType::f16}) {
    Case c{{130, 0, 1, 64, 300}, 520, 200};
    c.ab = c.out = t, c.layout = GroupedLayoutB::kn;
    run_case(c);
  }
  Case c{ragged(64, 50, 6), 264, 136};
  c.layout = GroupedLayoutB::kn, c.out = DType::f32;
  run_case(c);
}

TEST(GroupedGemm, BetaReadsC) {
  TESSEL_REQUIRE_SM90();
  Case c{{7, 0, 300, 1, 128}, 264, 136};
  c.beta = -0.5f;
  run_case(c);
  c.out = DType::f32;
  run_case(c);
}

TEST(GroupedGemm, OddLeadingDimensionOfD) {  // register stores one element at a time
  TESSEL_REQUIRE_SM90();
  Case c{{129, 0, 1, 300}, 257, 64};
  c.ldd_pad = 3, c.extra_rows = 9;
  run_case(c);
  c.ldd_pad = 8;  // padded but aligned: TMA stores, the padding untouched
  run_case(c);
}

TEST(GroupedGemm, KZeroGivesBetaC) {
  TESSEL_REQUIRE_SM90();
  Case c{{5, 0, 200, 1}, 136, 0};
  c.beta = 0.75f;
  run_case(c);
}

TEST(GroupedGemm, EveryGroupEmpty) {
  TESSEL_REQUIRE_SM90();
  Case c{{0, 0, 0, 0}, 256, 64};
  c.extra_rows = 40;  // D has rows, no group owns them
  run_case(c);
}

TEST(GroupedGemm, BadOffsetsStayInBounds) {  // decreasing and out-of-range offsets: clamped (grouped_gemm_arguments.hpp)
  TESSEL_REQUIRE_SM90();
  Case c{{0, 0, 0, 0}, 200, 64};
  c.offsets = {50, 20, 80, -3};  // groups [0,50), [50,50), [20,80) (overlapping: skipped by judge below), [80,80)
  c.extra_rows = 30;
  // Overlapping groups write the same rows in no defined order; only the untouched rows are checked.
  int const groups = int(c.offsets.size());
  std::int64_t const total = 80 + c.extra_rows;
  GroupedGemmArguments g = make_grouped_gemm(groups, total, c.n, c.k, c.ab, c.out, c.layout);
  std::size_t const nd = std::size_t(total * c.n);
  DeviceMem a(std::size_t(total * c.k) * 2), b(std::size_t(groups * g.batch_stride_b) * 2), d(nd * 2), poison(nd * 2), o(16);
  ASSERT_TRUE(reference::fill_uniform_device(a.p, c.ab, std::size_t(total * c.k), 1, -1.0f, 1.0f).ok());
  ASSERT_TRUE(reference::fill_uniform_device(b.p, c.ab, std::size_t(groups * g.batch_stride_b), 2, -1.0f, 1.0f).ok());
  ASSERT_TRUE(reference::fill_constant_device(d.p, c.out, nd, NAN).ok());
  ASSERT_TRUE(reference::fill_constant_device(poison.p, c.out, nd, NAN).ok());
  TESSEL_CUDA_OK(cudaMemcpy(o.p, c.offsets.data(), 16, cudaMemcpyHostToDevice));
  g.a = a.p, g.b = b.p, g.d = d.p, g.offsets = static_cast<int const*>(o.p);
  ASSERT_TRUE(grouped_gemm(g).ok());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<unsigned char> const got = download(d.p, nd * 2), fresh = download(poison.p, nd * 2);
  std::size_t const from = std::size_t(80 * c.n) * 2;
  EXPECT_EQ(std::memcmp(got.data() + from, fresh.data() + from, nd * 2 - from), 0) << "rows past every clamped group were written";
  for (std::size_t i = 0; i < from; i += 2)  // rows 0..79 all belong to some group: none left poisoned
    ASSERT_NE(std::memcmp(got.data() + i, fresh.data() + i, 2), 0) << "element " << i / 2 << " of an owned row was not written";
}

TEST(GroupedGemm, CanImplementAndRefusals) {
  TESSEL_REQUIRE_SM90();
  GroupedGemmArguments g = make_grouped_gemm(8, 64, 128, 64, DType::bf16, DType::bf16);
  DeviceMem a(64 * 64 * 2), b(8 * 128 * 64 * 2), d(64 * 128 * 2), o(8 * 4);
  g.a = a.p, g.b = b.p, g.d = d.p, g.offsets = static_cast<int const*>(o.p);
  EXPECT_TRUE(can_implement(g).ok()) << can_implement(g).reason;
  g.lda = 68;  // 136 bytes: not TMA-readable
  EXPECT_EQ(grouped_gemm(g).code, StatusCode::not_supported);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace tessel
