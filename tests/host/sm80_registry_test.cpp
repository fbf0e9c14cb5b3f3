// The sm_80 GEMM registry (src/gemm/sm80_gemm.cpp): its entries' tile text is read from the
// compiled configurations, so it states the shared memory of the kernel that runs. The expected
// sizes here come from the tile arithmetic (A and B tiles per stage), not from the library.
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using namespace tessel;

int kib(int rows_a, int rows_b, int tile_k, int bytes, int stages) {
  return ((rows_a + rows_b) * tile_k * bytes * stages + 1023) / 1024;
}

TEST(Sm80Registry, TileTextStatesTheCompiledConfiguration) {
  auto const text = [](int m, int n, int k, int wm, int wn, int stages, int bytes) {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ", " + std::to_string(wm * wn) +
           " warps (" + std::to_string(wm) + "x" + std::to_string(wn) + "), " + std::to_string(stages) + " stages, " +
           std::to_string(kib(m, n, k, bytes, stages)) + " KiB smem";
  };
  std::map<std::string, std::string> const expected = {
      {"sm80_bf16_128x256x64", text(128, 256, 64, 2, 4, 3, 2)},  // 144 KiB
      {"sm80_bf16_128x128x32", text(128, 128, 32, 2, 2, 4, 2)},  // 64 KiB
      {"sm80_bf16_64x64x64", text(64, 64, 64, 2, 2, 3, 2)},      // 48 KiB
      {"sm80_fp16_128x128x32", text(128, 128, 32, 2, 2, 4, 2)},
      {"sm80_fp16_64x64x64", text(64, 64, 64, 2, 2, 3, 2)},
      {"sm80_tf32_128x128x32", text(128, 128, 32, 2, 2, 3, 4)},  // 96 KiB
      {"sm80_tf32_64x64x32", text(64, 64, 32, 2, 2, 3, 4)},      // 48 KiB
  };
  std::string const skinny = "small side 16|32|64 (the smallest covering min(M, N); more rows take several tiles) x 128 x 64, "
                             "4 warps (1x4), 5|5|4 stages, " +
                             std::to_string(kib(16, 128, 64, 2, 5)) + "|" + std::to_string(kib(32, 128, 64, 2, 5)) + "|" +
                             std::to_string(kib(64, 128, 64, 2, 4)) + " KiB smem";  // 90|100|96
  int seen = 0;
  for (GemmKernelInfo const& k : sm80_gemm_kernels()) {
    ++seen;
    std::string const name = k.name;
    if (name.find("skinny") != std::string::npos) {
      EXPECT_EQ(k.tile, skinny) << name;
    } else {
      ASSERT_TRUE(expected.count(name)) << name << " is not listed here";
      EXPECT_EQ(k.tile, expected.at(name)) << name;
    }
    EXPECT_EQ(k.min_cc, 80) << name;
  }
  EXPECT_EQ(seen, int(expected.size()) + 2);
}

// The heuristic's picks and the by-name lookup name the same entries.
TEST(Sm80Registry, TheHeuristicPicksRegistryEntries) {
  for (DType t : {DType::bf16, DType::f16, DType::tf32}) {
    for (long long m : {16LL, 1000LL, 8192LL}) {
      GemmArguments g = make_packed_gemm(m, 4096, 4096, 1, t, t == DType::tf32 ? DType::f32 : t, MatrixOrder::row_major,
                                         MatrixOrder::col_major, MatrixOrder::row_major);
      GemmKernelInfo const* k = sm80_select_gemm_kernel(g, 132);
      ASSERT_NE(k, nullptr) << to_string(t) << " m " << m;
      GemmKernelInfo const* by_name = find_gemm_kernel(k->name);
      ASSERT_NE(by_name, nullptr) << k->name;
      EXPECT_STREQ(by_name->tile, k->tile) << k->name;
    }
  }
}

}  // namespace
