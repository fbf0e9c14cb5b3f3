// tests/host/sm90_heuristic_test.cpp -- the sm_90a heuristic's picks without a GPU: the measured
// cases of tests/sm90_pick_cases.hpp on an assumed 132-SM H100/H200, whose resident counts
// sm90_select_gemm_kernel(args, resident) takes instead of asking the device. (The GPU test runs
// the same table on the device in hand.)
#include "sm90_pick_cases.hpp"

#include <gtest/gtest.h>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace tessel {
namespace {

// Every sm_90a entry holds one CTA per SM (each takes more than half of the 227 KiB of shared
// memory), so a 132-SM GPU fits 132 / cluster size of its clusters at once.
std::vector<int> resident_on_132_sms() {
  std::vector<int> resident;
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) resident.push_back(132 / sm90_cluster_size(k));
  return resident;
}

// The pick on a 132-SM GPU with `hbm` bytes/s of HBM for a packed "tn" problem with a column-major
// D (canonical M = n, N = m) of `ab` inputs and a D of `cd`.
std::string pick_tn(std::int64_t m, std::int64_t n, std::int64_t k, DType ab, DType cd, double hbm) {
  GemmArguments const g = make_packed_gemm(m, n, k, 1, ab, cd, MatrixOrder::row_major, MatrixOrder::col_major,
                                           MatrixOrder::col_major);
  GemmKernelInfo const* e = sm90_select_gemm_kernel(g, resident_on_132_sms(), hbm);
  return std::string(e != nullptr ? e->name : "(none)");
}

// pick_tn with a D of the input type, and the HBM bandwidths the rules tell the GPUs apart by.
std::string pick(std::int64_t m, std::int64_t n, std::int64_t k, DType ab, double hbm) { return pick_tn(m, n, k, ab, ab, hbm); }
constexpr double h200 = 4.8e12, h100 = 3.35e12;

TEST(Sm90Heuristic, PicksTheMeasuredEntriesOnA132SmGpu) {
  std::vector<int> const resident = resident_on_132_sms();
  ASSERT_FALSE(resident.empty());
  for (test::Sm90PickCase const& c : test::kSm90Picks) {
    GemmKernelInfo const* k = sm90_select_gemm_kernel(test::sm90_pick_problem(c), resident);
    ASSERT_NE(k, nullptr) << c.m << "x" << c.n << "x" << c.k;
    EXPECT_EQ(std::string(k->name).rfind(c.entry, 0), 0u)
        << c.m << "x" << c.n << "x" << c.k << " " << to_string(c.ab) << " " << c.layout << " beta " << c.beta << " ldc+"
        << c.ldc_pad << " ldd+" << c.ldd_pad << ": " << k->name;
  }
}

TEST(Sm90Heuristic, ClusterSizesFollowTheEntryNames) {
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    std::string const name = k.name;
    bool const pair = name.find("_c2") != std::string::npos || name.find("_c1x2") != std::string::npos;
    EXPECT_EQ(sm90_cluster_size(k), pair ? 2 : 1) << name;
  }
  GemmKernelInfo const other{};
  EXPECT_EQ(sm90_cluster_size(other), -1);
}

// Each sm_90a entry's `tile` text ("128x256x64, 3 warpgroups, 3 stages, cluster 2x1, 209 KiB smem")
// states the configuration it was compiled with (sm90_kernel_shape reads the instance), and its
// name carries the tile: the registry's prose cannot drift from the code.
TEST(Sm90Heuristic, RegistryTextStatesTheCompiledConfiguration) {
  int entries = 0;
  for (GemmKernelInfo const& k : sm90_gemm_kernels()) {
    std::optional<Sm90KernelShape> const sh = sm90_kernel_shape(k);
    ASSERT_TRUE(sh.has_value()) << k.name;
    std::string const text = k.tile;
    int tm = 0, tn = 0, tk = 0;
    ASSERT_EQ(std::sscanf(text.c_str(), "%dx%dx%d", &tm, &tn, &tk), 3) << k.name << ": " << text;
    auto const number_before = [&](char const* words) {
      std::size_t const at = text.find(words);
      if (at == std::string::npos || at == 0) return -1;
      std::size_t begin = text.rfind(' ', at - 2);
      begin = begin == std::string::npos ? 0 : begin + 1;
      return std::atoi(text.c_str() + begin);
    };
    int cm = 0, cn = 0;
    std::size_t const cluster = text.find("cluster ");
    ASSERT_NE(cluster, std::string::npos) << k.name << ": " << text;
    ASSERT_EQ(std::sscanf(text.c_str() + cluster, "cluster %dx%d", &cm, &cn), 2) << k.name << ": " << text;
    EXPECT_EQ(tm, sh->tile_m) << k.name << ": " << text;
    EXPECT_EQ(tn, sh->tile_n) << k.name << ": " << text;
    EXPECT_EQ(tk, sh->tile_k) << k.name << ": " << text;
    EXPECT_EQ(cm, sh->cluster_m) << k.name << ": " << text;
    EXPECT_EQ(cn, sh->cluster_n) << k.name << ": " << text;
    EXPECT_EQ(number_before(" stages"), sh->stages) << k.name << ": " << text;
    EXPECT_EQ(number_before(" warpgroups") * 128, sh->threads) << k.name << ": " << text;
    int const kib = number_before(" KiB smem");
    EXPECT_TRUE(kib == sh->smem_bytes / 1024 || kib == (sh->smem_bytes + 1023) / 1024)
        << k.name << ": " << text << " against " << sh->smem_bytes << " bytes";
    std::string const tile = std::to_string(sh->tile_m) + "x" + std::to_string(sh->tile_n) + "x" + std::to_string(sh->tile_k);
    EXPECT_NE(std::string(k.name).find(tile), std::string::npos) << k.name << " does not name its tile " << tile;
    ++entries;
  }
  EXPECT_GT(entries, 20);
  EXPECT_FALSE(sm90_kernel_shape(GemmKernelInfo{}).has_value());
}

// The decode grid (bench/decode.txt: M 1-16 against N x K weights of 4096-28672; BLAS convention,
// so N is the long side): the 64x16 tiles where they fit one round (N <= 8192: at most 128 tiles),
// the 128x64 tiles where the 64x16 ones would need two or more (N = 14336: 224 tiles of 64 rows,
// 112 of 128). What the H200's decode suite ran (decode-h200.json); by name the 64x16 kernel was
// ahead at N = 14336 on some lines and behind at N = 28672 (docs/skinny_gemm.md).
TEST(Sm90Heuristic, DecodeGridTakesTheMeasuredTiles) {
  for (std::int64_t const m : {1, 2, 4, 8, 16}) {
    for (std::int64_t const n : {4096, 8192, 14336, 28672}) {
      for (std::int64_t const k : {4096, 8192, 14336, 28672}) {
        std::string const want = n <= 8192 ? "sm90_bf16_64x16x64" : "sm90_bf16_128x64x64";
        EXPECT_EQ(pick(m, n, k, DType::bf16, h200), want) << m << "x" << n << "x" << k;
      }
    }
  }
}

// A D 65 to 128 wide (two tile columns of 128x64) whose long operand has at least 2^25
// elements takes the 1x2 clusters, which multicast each strip of it to both columns, on a GPU
// with fast HBM (the H200); the 1x1 kernel on the H100, and on the H200 below that size (measured:
// src/gemm/sm90_gemm.cpp, shared_strip). Column-major D: BLAS 128 x 8192 is canonical 8192 x 128.
TEST(Sm90Heuristic, TwoTileColumnsShareTheLongOperandOnFastHbm) {
  EXPECT_EQ(pick(128, 8192, 8192, DType::bf16, h200), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(128, 8192, 8192, DType::f16, h200), "sm90_fp16_128x64x64_c1x2");
  EXPECT_EQ(pick(96, 8192, 8192, DType::bf16, h200), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(128, 8192, 4096, DType::bf16, h200), "sm90_bf16_128x64x64_c1x2");  // 2^25 elements
  EXPECT_EQ(pick(128, 4096, 8192, DType::bf16, h200), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(128, 4096, 4096, DType::bf16, h200), "sm90_bf16_128x64x64");       // 2^24: even
  EXPECT_EQ(pick(128, 6000, 4096, DType::bf16, h200), "sm90_bf16_128x64x64");       // slower in clusters
  EXPECT_EQ(pick(128, 8192, 1024, DType::bf16, h200), "sm90_bf16_128x64x64");
  EXPECT_EQ(pick(128, 8192, 8192, DType::bf16, h100), "sm90_bf16_128x64x64");
  EXPECT_EQ(pick(128, 8192, 8192, DType::f16, h100), "sm90_fp16_128x64x64");
  EXPECT_EQ(pick(128, 8192, 8192, DType::bf16, 0.0), "sm90_bf16_128x64x64");        // not known
  // An fp32 D with a long K: the promoted kernels, in the cluster shape the fast ones would take
  // (the fast kernels' unsplit sum read 5x cuBLAS's error there); with K below 2048 the fast ones.
  auto pick32 = [](std::int64_t m, std::int64_t n, std::int64_t k, DType ab, double hbm) {
    return pick_tn(m, n, k, ab, DType::f32, hbm);
  };
  EXPECT_EQ(pick32(112, 8192, 4100, DType::bf16, h200), "sm90_bf16_128x64x64_promoted_c1x2");
  EXPECT_EQ(pick32(128, 8192, 8192, DType::f16, h200), "sm90_fp16_128x64x64_promoted_c1x2");
  EXPECT_EQ(pick32(128, 8192, 8192, DType::bf16, h100), "sm90_bf16_128x64x64_promoted");
  EXPECT_EQ(pick32(128, 4096, 4096, DType::bf16, h200), "sm90_bf16_128x64x64_promoted");
  EXPECT_EQ(pick32(112, 8192, 4100, DType::f16, h100), "sm90_fp16_128x64x64_promoted");
  EXPECT_EQ(pick32(128, 8192, 1024, DType::bf16, h100), "sm90_bf16_128x64x64");
  // Not a D two tiles wide: a tall one (canonical 128 x 8192, one tile row), a 64-wide one.
  EXPECT_EQ(pick(8192, 128, 8192, DType::bf16, h200).find("_c1x2"), std::string::npos);
  EXPECT_EQ(pick(64, 8192, 8192, DType::bf16, h200).find("_c1x2"), std::string::npos);
}

TEST(Sm90Heuristic, FourTileColumnsShareTheLongOperand) {
  // A D 193 to 256 wide (canonical: column-major, 193-256 BLAS rows) that takes 128x64 tiles as a
  // small problem: in 1x2 clusters from 2^24 elements of the long operand with K up to 4096, on
  // either GPU.
  EXPECT_EQ(pick(256, 4096, 4096, DType::bf16, h100), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(256, 4096, 4096, DType::f16, h100), "sm90_fp16_128x64x64_c1x2");
  EXPECT_EQ(pick(256, 4096, 4096, DType::bf16, h200), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(200, 4096, 4096, DType::bf16, h100), "sm90_bf16_128x64x64_c1x2");
  EXPECT_EQ(pick(256, 4096, 6144, DType::bf16, h200), "sm90_bf16_128x64x64");       // a longer K: slower
  EXPECT_EQ(pick(256, 4096, 4096, DType::bf16, 0.0), "sm90_bf16_128x64x64_c1x2");  // no HBM rule here
  EXPECT_EQ(pick(256, 2048, 4096, DType::bf16, h100), "sm90_bf16_128x64x64");       // 2^23 elements
  EXPECT_EQ(pick(192, 4096, 4096, DType::bf16, h100), "sm90_bf16_128x64x64");       // three tile columns
  // K of 8192 leaves the small problems: 128x128 tiles in 2x1 clusters, as before.
  EXPECT_EQ(pick(256, 4096, 8192, DType::bf16, h100), "sm90_bf16_128x128x64_c2");
  // The other orientation (canonical 256 x 4096: two tile rows) is not this problem.
  EXPECT_EQ(pick(4096, 256, 4096, DType::bf16, h100).find("_c1x2"), std::string::npos);
}

// The assumed counts are the ones used: with them the small problem takes 64x64 tiles; with none
// known (as after a failed device query) not, since that rule needs the counts -- whatever GPU
// this host has.
TEST(Sm90Heuristic, TheAssumedCountsAreTheOnesUsed) {
  test::Sm90PickCase const c{256, 192, 1000, "tn", test::bf16, "", true, 0.0f};
  std::vector<int> const resident = resident_on_132_sms();
  EXPECT_STREQ(sm90_select_gemm_kernel(test::sm90_pick_problem(c), resident)->name, "sm90_bf16_64x64x64");
  std::vector<int> const unknown(resident.size(), 0);
  GemmKernelInfo const* k = sm90_select_gemm_kernel(test::sm90_pick_problem(c), unknown);
  ASSERT_NE(k, nullptr);
  EXPECT_NE(std::string(k->name), "sm90_bf16_64x64x64");
}

// An fp32 D 17-64 wide with K of 2048 or more takes the 64-wide tiles' promoted siblings where
// both operands are K-major (H100: the tensor core's own sum read 3-15x cuBLAS's error),
// the fast kernels otherwise: a 16-bit D, a shorter K, or an MN-major operand (staged for the
// promoted kernels, 3x the time at 32x8192x8192 nt).
TEST(Sm90Heuristic, AnFp32DWithALongKTakesThePromotedKernels) {
  std::vector<int> const resident = resident_on_132_sms();
  auto pick = [&](std::int64_t m, std::int64_t n, std::int64_t k, DType ab, DType cd, char const* layout) {
    MatrixOrder const ao = layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
    MatrixOrder const bo = layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
    GemmArguments const g = make_packed_gemm(m, n, k, 1, ab, cd, ao, bo, MatrixOrder::col_major);
    GemmKernelInfo const* e = sm90_select_gemm_kernel(g, resident);
    return std::string(e != nullptr ? e->name : "(none)");
  };
  // Column-major D: the canonical M is the BLAS N, so 4000 x 40 is a D 40 wide.
  EXPECT_EQ(pick(4000, 40, 4100, DType::bf16, DType::f32, "tn"), "sm90_bf16_64x64x64_promoted");
  EXPECT_EQ(pick(4000, 40, 4100, DType::f16, DType::f32, "tn"), "sm90_fp16_64x64x64_promoted");
  EXPECT_EQ(pick(12000, 40, 8250, DType::bf16, DType::f32, "tn"), "sm90_bf16_128x64x64_promoted");
  EXPECT_EQ(pick(4000, 40, 4100, DType::bf16, DType::bf16, "tn"), "sm90_bf16_64x64x64");
  EXPECT_EQ(pick(4000, 40, 1024, DType::bf16, DType::f32, "tn"), "sm90_bf16_64x64x64");
  EXPECT_EQ(pick(4000, 40, 4100, DType::bf16, DType::f32, "nt"), "sm90_bf16_64x64x64");
  EXPECT_EQ(pick(8192, 16, 8192, DType::bf16, DType::f32, "tn"), "sm90_bf16_64x16x64");
}

// Block-scaled fp8 (scale_mode block) runs on its own entry, whatever the shape, layout or output
// type; per-tensor fp8 never does. By name, the block-scaled entry refuses per-tensor calls and
// every other entry refuses block-scaled ones, each naming scale_mode; without an sm_90 GPU the
// heuristic says block scaling needs one.
TEST(Sm90Heuristic, BlockScaledFp8TakesTheBlockScaledEntryOnly) {
  std::vector<int> const resident = resident_on_132_sms();
  static float scales[4];
  static char data[16];
  auto problem = [&](std::int64_t m, std::int64_t n, std::int64_t k, DType cd, MatrixOrder co, ScaleMode mode) {
    GemmArguments g = make_packed_gemm(m, n, k, 1, DType::e4m3, cd, MatrixOrder::row_major, MatrixOrder::col_major, co);
    g.a = g.b = g.c = data;
    g.d = data;
    g.scale_mode = mode;
    if (mode == ScaleMode::block) g.a_scales = g.b_scales = scales;
    return g;
  };
  auto pick = [&](GemmArguments const& g) {
    GemmKernelInfo const* e = sm90_select_gemm_kernel(g, resident, h200);
    return std::string(e != nullptr ? e->name : "(none)");
  };
  constexpr char kBlocks[] = "sm90_e4m3_128x256x128_c2_blockscaled";
  for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
    for (DType cd : {DType::bf16, DType::f16, DType::f32}) {
      EXPECT_EQ(pick(problem(8192, 8192, 8192, cd, co, ScaleMode::block)), kBlocks);
      EXPECT_EQ(pick(problem(4096, 14336, 4096, cd, co, ScaleMode::block)), kBlocks);
      EXPECT_EQ(pick(problem(100, 64, 1000, cd, co, ScaleMode::block)), kBlocks);  // small and narrow too
      EXPECT_NE(pick(problem(8192, 8192, 8192, cd, co, ScaleMode::per_tensor)), kBlocks);
      EXPECT_NE(pick(problem(100, 64, 1000, cd, co, ScaleMode::per_tensor)), kBlocks);
    }
  }
  GemmKernelInfo const* blocks = find_gemm_kernel(kBlocks);
  ASSERT_NE(blocks, nullptr);
  EXPECT_TRUE(sm90_is_block_scaled(*blocks));
  GemmArguments g = problem(4095, 4097, 1000, DType::bf16, MatrixOrder::col_major, ScaleMode::block);
  EXPECT_TRUE(blocks->check(g).ok()) << blocks->check(g).reason;
  g.b_type = DType::e5m2;  // the promoted kernels take every pair
  EXPECT_TRUE(blocks->check(g).ok()) << blocks->check(g).reason;
  GemmArguments const per_tensor = problem(4096, 4096, 4096, DType::bf16, MatrixOrder::col_major, ScaleMode::per_tensor);
  Status const refused = blocks->check(per_tensor);
  EXPECT_EQ(refused.code, StatusCode::not_supported);
  EXPECT_EQ(refused.reason.rfind("scale_mode:", 0), 0u) << refused.reason;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    if (&k == blocks) continue;
    EXPECT_FALSE(sm90_is_block_scaled(k)) << k.name;
    GemmArguments named = problem(512, 512, 512, DType::bf16, MatrixOrder::col_major, ScaleMode::block);
    named.kernel = k.name;
    Status why;
    EXPECT_EQ(select_gemm_kernel(named, &why), nullptr) << k.name;
    EXPECT_EQ(why.reason.rfind("scale_mode:", 0), 0u) << k.name << ": " << why.reason;
  }
  // The heuristic without an sm_90 GPU (this host test's machine, or another GPU): refused.
  {
    Status why;
    GemmArguments const any = problem(512, 512, 512, DType::bf16, MatrixOrder::col_major, ScaleMode::block);
    GemmKernelInfo const* k = select_gemm_kernel(any, &why);
    if (k == nullptr) {
      EXPECT_EQ(why.code, StatusCode::not_supported);
      EXPECT_EQ(why.reason.rfind("scale_mode:", 0), 0u) << why.reason;
      EXPECT_NE(why.reason.find("sm_90a"), std::string::npos) << why.reason;
    } else {
      EXPECT_STREQ(k->name, kBlocks);  // (an sm_90 GPU in hand)
    }
  }
}

}  // namespace
}  // namespace tessel
