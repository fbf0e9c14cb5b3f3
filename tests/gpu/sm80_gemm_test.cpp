// The sm_80 tensor-core GEMMs (tessel/gemm/device/sm80_gemm_kernels.hpp) on the GPU, each entry
// run directly (sm80_gemm_run), judged by the fp64 GPU reference and against cuBLAS on the same
// inputs: our componentwise error may not exceed twice cuBLAS's (plus a few fp32 units).
//
// Random inputs (never zeros), D poisoned with NaN, ragged shapes (1x1x1, 17x33x65, K below one
// tile, tiles that overhang in every direction), every layout with C/D in either order, batches
// (with a broadcast operand), serial split-K (and its determinism), unaligned pointers and leading
// dimensions (the staging path), forced staging equal to in-place reads bit for bit, NaN/Inf
// propagation as in cuBLAS, the whole-tile epilogue beside edge tiles, and the large odd shapes
// 4095x4097x4099 and 8191x8193x8191.
// Tests whose name contains "Small" are the compute-sanitizer sweep (scripts/gpu-check.sh sanitize); Sweep
// and Large are the full ragged sweep and the large odd shapes.
#include "gpu/gpu_test.hpp"
#include "gpu/sm80_gemm_check.hpp"

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/reference/gemm_device.hpp>

#include <cstdint>
#include <string>

using namespace tessel;
using namespace tessel::sm80_check;

namespace {

struct DtypeCase {
  DType ab, cd;
  char const* big;    // the largest tile of the dtype (bf16: 128x256, fp16 and tf32: 128x128)
  char const* small;  // a smaller one
};
constexpr DtypeCase kDtypes[] = {
    {DType::bf16, DType::bf16, "sm80_bf16_128x256x64", "sm80_bf16_64x64x64"},
    {DType::bf16, DType::f32, "sm80_bf16_128x256x64", "sm80_bf16_128x128x32"},
    {DType::f16, DType::f16, "sm80_fp16_128x128x32", "sm80_fp16_64x64x64"},
    {DType::f16, DType::f32, "sm80_fp16_128x128x32", "sm80_fp16_64x64x64"},
    {DType::tf32, DType::f32, "sm80_tf32_128x128x32", "sm80_tf32_64x64x32"},
};
constexpr char const* kLayouts[] = {"tn", "nn", "nt", "tt"};

}  // namespace

// ---- small problems: the compute-sanitizer sweep ------------------------------------------------------

TEST(Sm80Small, EveryEntryOnARaggedProblem) {
  TESSEL_REQUIRE_GPU();
  for (GemmKernelInfo const& k : sm80_gemm_kernels()) {
    DType const ab = std::string(k.name).find("bf16") != std::string::npos   ? DType::bf16
                     : std::string(k.name).find("fp16") != std::string::npos ? DType::f16
                                                                              : DType::tf32;
    GemmArguments g = problem(137, 263, 97, "tn", MatrixOrder::col_major, ab, ab == DType::tf32 ? DType::f32 : ab);
    Operands ops(g, 11);
    expect_good(run_and_check(k, g), what(k, g, "tn"), g.a_type);
  }
}

TEST(Sm80Sweep, RaggedShapesEveryLayoutAndOrder) {
  TESSEL_REQUIRE_GPU();
  struct Shape {
    std::int64_t m, n, k;
  };
  // 1x1x1; odd everything; K below one k-tile; K one element past a k-tile; a tile-multiple problem.
  constexpr Shape shapes[] = {{1, 1, 1}, {17, 33, 65}, {70, 45, 7}, {129, 65, 33}, {64, 128, 64}};
  for (DtypeCase const& dt : kDtypes) {
    for (Shape const& s : shapes) {
      for (char const* layout : kLayouts) {
        for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
          for (char const* name : {dt.big, dt.small}) {
            GemmArguments g = problem(s.m, s.n, s.k, layout, co, dt.ab, dt.cd);
            Operands ops(g, std::uint64_t(s.m * 7 + s.k));
            expect_good(run_and_check(entry(name), g), what(entry(name), g, layout), g.a_type);
          }
        }
      }
    }
  }
}

TEST(Sm80Small, BetaZeroDoesNotReadC) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(40, 50, 60, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 5);
  std::size_t const nc = elems(1, 0, g.m, g.n, g.ldc, g.c_order);
  ASSERT_TRUE(reference::fill_constant_device(const_cast<void*>(g.c), g.c_type, nc, NAN).ok());
  g.beta = 0.0f;
  Verdict v = run_and_check(entry("sm80_bf16_128x256x64"), g);
  EXPECT_TRUE(v.ours.passed()) << "NaN in C leaked through beta = 0: " << v.ours.describe();
}

// beta == 0 with D's rows aligned: tiles that lie inside D take the epilogue's whole-tile path
// (sm80_epilogue_staged.hpp), the overhanging ones the passes; both in one problem, batched, for
// every output type and both D orders.
TEST(Sm80Sweep, WholeTileEpilogueBesideEdgeTiles) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
      for (char const* name : {dt.big, dt.small}) {
        GemmArguments g = problem(320, 544, 96, "tn", co, dt.ab, dt.cd, 2);
        g.beta = 0.0f;
        Operands ops(g, 41);
        expect_good(run_and_check(entry(name), g), what(entry(name), g, "tn") + " beta 0", g.a_type);
      }
    }
  }
}

TEST(Sm80Sweep, BatchedWithABroadcastOperand) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : {"tn", "nt"}) {
      GemmArguments g = problem(70, 90, 110, layout, MatrixOrder::col_major, dt.ab, dt.cd, 3);
      Operands ops(g, 21);
      expect_good(run_and_check(entry(dt.big), g), what(entry(dt.big), g, layout), g.a_type);
      g.batch_stride_b = 0;  // every batch multiplies by the same B
      expect_good(run_and_check(entry(dt.small), g), what(entry(dt.small), g, layout) + " B broadcast", g.a_type);
    }
  }
}

TEST(Sm80Sweep, SerialSplitKIsCorrectAndDeterministic) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (int splits : {2, 3, 7}) {
      GemmArguments g = problem(150, 70, 1000, "tn", MatrixOrder::col_major, dt.ab, dt.cd, 2);
      Operands ops(g, 31);
      Sm80RunOptions o;
      o.splits = splits;
      expect_good(run_and_check(entry(dt.small), g, o), what(entry(dt.small), g, "tn", o), g.a_type);
      std::size_t const bytes = ops.nd * size_of(g.c_type);
      auto const first = download(g.d, bytes);
      ASSERT_TRUE(reference::fill_constant_device(g.d, g.c_type, ops.nd, NAN).ok());
      ASSERT_TRUE(sm80_gemm_run(entry(dt.small), g, o, nullptr).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_TRUE(download(g.d, bytes) == first) << what(entry(dt.small), g, "tn", o) << ": two runs differ";
    }
  }
}

TEST(Sm80Small, SplitKAndUnalignedOperands) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(150, 70, 1000, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 33);
  Sm80RunOptions o;
  o.splits = 3;
  expect_good(run_and_check(entry("sm80_bf16_64x64x64"), g, o), "split-K 3", g.a_type);
  GemmArguments u = problem(45, 77, 91, "nt", MatrixOrder::row_major, DType::tf32, DType::f32);
  u.lda += 3, u.ldb += 1, u.ldc += 5, u.ldd = u.ldc;
  Operands uops(u, 43, /*offset=*/1);
  expect_good(run_and_check(entry("sm80_tf32_128x128x32"), u), "tf32 unaligned, staged", u.a_type);
}

TEST(Sm80Small, MoreSlicesThanKTiles) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(33, 17, 40, "nt", MatrixOrder::row_major, DType::bf16, DType::f32);
  Operands ops(g, 3);
  Sm80RunOptions o;
  o.splits = 5;  // 2 k-tiles of 32: three slices are empty and still take part in the fix-up
  expect_good(run_and_check(entry("sm80_bf16_128x128x32"), g, o), "empty slices", g.a_type);
}

TEST(Sm80Sweep, UnalignedPointersAndLeadingDimensions) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : kLayouts) {
      GemmArguments g = problem(45, 77, 91, layout, MatrixOrder::col_major, dt.ab, dt.cd);
      g.lda += 3, g.ldb += 1, g.ldc += 5, g.ldd = g.ldc;  // odd leading dimensions
      Operands ops(g, 41, /*offset=*/1);                  // and pointers one element off
      expect_good(run_and_check(entry(dt.big), g), what(entry(dt.big), g, layout) + " unaligned", g.a_type);
    }
  }
}

TEST(Sm80Sweep, ForcedStagingEqualsInPlaceBitForBit) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    GemmArguments g = problem(200, 136, 264, "tn", MatrixOrder::col_major, dt.ab, dt.cd);
    Operands ops(g, 51);
    std::size_t const bytes = ops.nd * size_of(g.c_type);
    // Judged first: two runs that both left the NaN poison in place would also compare equal.
    expect_good(run_and_check(entry(dt.big), g), what(entry(dt.big), g, "tn") + " in place", g.a_type);
    auto const in_place = download(g.d, bytes);
    ASSERT_TRUE(reference::fill_constant_device(g.d, g.c_type, ops.nd, NAN).ok());
    Sm80RunOptions o;
    o.force_staging = true;
    ASSERT_TRUE(sm80_gemm_run(entry(dt.big), g, o, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(download(g.d, bytes) == in_place) << entry(dt.big).name << ": staged and in-place results differ";
  }
}

TEST(Sm80Sweep, NanAndInfPropagateAsInCublas) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    GemmArguments g = problem(50, 40, 70, "tn", MatrixOrder::col_major, dt.ab, dt.cd);
    g.beta = 0.0f;
    Operands ops(g, 61);
    expect_nonfinite_like_cublas(entry(dt.big), g, ops.nd);
  }
}

// ---- the large odd shapes of the benchmarks ---------------------------------------------------------

TEST(Sm80Large, OddShapesAgainstCublas) {
  TESSEL_REQUIRE_GPU();
  struct Case {
    std::int64_t m, n, k;
    char const* layout;
    DType ab, cd;
    char const* entry;
  };
  constexpr Case cases[] = {
      {4095, 4097, 4099, "tn", DType::bf16, DType::bf16, "sm80_bf16_128x256x64"},
      {4095, 4097, 4099, "nt", DType::f16, DType::f16, "sm80_fp16_128x128x32"},
      {4095, 4097, 4099, "tn", DType::tf32, DType::f32, "sm80_tf32_128x128x32"},
      {8191, 8193, 8191, "tn", DType::bf16, DType::bf16, "sm80_bf16_128x256x64"},
  };
  for (Case const& c : cases) {
    GemmArguments g = problem(c.m, c.n, c.k, c.layout, MatrixOrder::col_major, c.ab, c.cd);
    g.alpha = 1.0f, g.beta = 0.0f;
    Operands ops(g, 71);
    expect_good(run_and_check(entry(c.entry), g), what(entry(c.entry), g, c.layout), g.a_type);
  }
}

TEST(Sm80Large, SplitKOnALongK) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(1024, 1024, 65536, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 81);
  Sm80RunOptions o;  // the heuristic splits: 64 tiles of 128x128 on 132 SMs
  expect_good(run_and_check(entry("sm80_bf16_128x128x32"), g, o), "1024x1024x65536 heuristic split-K", g.a_type);
}
