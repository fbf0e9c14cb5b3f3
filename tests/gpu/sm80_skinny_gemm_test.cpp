// The sm_80 skinny GEMMs (sm80_bf16_skinny, sm80_fp16_skinny; docs/skinny_gemm.md) on the GPU, run
// by name (sm80_gemm_run), judged by the fp64 GPU reference and against cuBLAS on the same inputs
// (tests/gpu/sm80_gemm_check.hpp: our error at most twice cuBLAS's, plus a few fp32 units).
//
// Random inputs, D poisoned with NaN, the small side M = 1, 7, 16, 17, 33, 64 (each tile 16/32/64
// and its ragged edge) against ragged N and K (not multiples of 8, K below one k-tile), all four
// layouts with D in either order (a column-major D puts the small side on the other operand: the
// swapped path), N smaller than M (the small side flips), batch 3 with beta != 0 and a broadcast
// operand, forced split-K slice counts (more slices than k-tiles too) and their determinism,
// unaligned operands (the staging path), beta = 0 not reading C, NaN/Inf as in cuBLAS, the issue's
// shapes (M = 1, 16, 64 x N = K = 8192) with the heuristic's split, and the heuristic's choice.
// "Small" tests are the compute-sanitizer sweep (scripts/gpu-check.sh's default filter).
#include "gpu/gpu_test.hpp"
#include "gpu/sm80_gemm_check.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/reference/gemm_device.hpp>

#include <cstdint>
#include <string>

using namespace tessel;
using namespace tessel::sm80_check;

namespace {

struct DtypeCase {
  DType ab, cd;
  char const* entry;
};
constexpr DtypeCase kDtypes[] = {
    {DType::bf16, DType::bf16, "sm80_bf16_skinny"},
    {DType::bf16, DType::f32, "sm80_bf16_skinny"},
    {DType::f16, DType::f16, "sm80_fp16_skinny"},
    {DType::f16, DType::f32, "sm80_fp16_skinny"},
};
constexpr char const* kLayouts[] = {"tn", "nn", "nt", "tt"};
constexpr MatrixOrder kOrders[] = {MatrixOrder::row_major, MatrixOrder::col_major};

Sm80RunOptions with_splits(int splits) {
  Sm80RunOptions o;
  o.splits = splits;
  return o;
}

// Runs `name` on g with o twice and expects the same bits both times.
void expect_deterministic(char const* name, GemmArguments const& g, std::size_t nd, Sm80RunOptions o,
                          std::string const& w) {
  std::size_t const bytes = nd * size_of(g.c_type);
  auto const first = download(g.d, bytes);
  ASSERT_TRUE(reference::fill_constant_device(g.d, g.c_type, nd, NAN).ok());
  ASSERT_TRUE(sm80_gemm_run(entry(name), g, o, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(download(g.d, bytes) == first) << w << ": two runs differ";
}

}  // namespace

// ---- small problems: the compute-sanitizer sweep --------------------------------------------------------

TEST(Sm80SkinnySmall, BothEntriesBothSidesWithAndWithoutSplitK) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (MatrixOrder co : kOrders) {
      for (int splits : {0, 1, 3}) {
        GemmArguments g = problem(17, 300, 200, "tn", co, dt.ab, dt.cd);
        Operands ops(g, 7);
        Sm80RunOptions const o = with_splits(splits);
        expect_good(run_and_check(entry(dt.entry), g, o), what(entry(dt.entry), g, "tn", o), g.a_type);
      }
    }
  }
}

TEST(Sm80SkinnySmall, UnalignedOperandsAreStaged) {
  TESSEL_REQUIRE_GPU();
  for (char const* layout : kLayouts) {
    for (MatrixOrder co : kOrders) {
      GemmArguments g = problem(33, 77, 91, layout, co, DType::bf16, DType::bf16);
      g.lda += 3, g.ldb += 1, g.ldc += 5, g.ldd = g.ldc;  // odd leading dimensions
      Operands ops(g, 41, /*offset=*/1);                  // and pointers one element off
      expect_good(run_and_check(entry("sm80_bf16_skinny"), g, with_splits(2)),
                  what(entry("sm80_bf16_skinny"), g, layout) + " unaligned", g.a_type);
    }
  }
}

TEST(Sm80SkinnySmall, BetaZeroDoesNotReadC) {
  TESSEL_REQUIRE_GPU();
  for (MatrixOrder co : kOrders) {
    GemmArguments g = problem(16, 200, 300, "tn", co, DType::f16, DType::f16);
    Operands ops(g, 5);
    std::size_t const nc = elems(1, 0, g.m, g.n, g.ldc, g.c_order);
    ASSERT_TRUE(reference::fill_constant_device(const_cast<void*>(g.c), g.c_type, nc, NAN).ok());
    g.beta = 0.0f;
    Verdict v = run_and_check(entry("sm80_fp16_skinny"), g, with_splits(3));
    EXPECT_TRUE(v.ours.passed()) << "NaN in C leaked through beta = 0: " << v.ours.describe();
  }
}

// ---- the ragged sweep -------------------------------------------------------------------------------------

TEST(Sm80SkinnySweep, RaggedShapesEveryLayoutAndOrder) {
  TESSEL_REQUIRE_GPU();
  struct NK {
    std::int64_t n, k;
  };
  // K below one k-tile and not a multiple of 8; K long and odd (split-K); whole tiles; N below M.
  constexpr NK nks[] = {{77, 13}, {259, 1001}, {128, 64}, {5, 300}};
  for (DtypeCase const& dt : kDtypes) {
    for (std::int64_t m : {1, 7, 16, 17, 33, 64}) {
      for (NK const& s : nks) {
        for (char const* layout : kLayouts) {
          for (MatrixOrder co : kOrders) {
            GemmArguments g = problem(m, s.n, s.k, layout, co, dt.ab, dt.cd);
            Operands ops(g, std::uint64_t(m * 7 + s.k));
            expect_good(run_and_check(entry(dt.entry), g), what(entry(dt.entry), g, layout), g.a_type);
          }
        }
      }
    }
  }
}

TEST(Sm80SkinnySweep, BatchedWithBetaAndABroadcastOperand) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (char const* layout : {"tn", "nt"}) {
      for (MatrixOrder co : kOrders) {
        GemmArguments g = problem(33, 190, 530, layout, co, dt.ab, dt.cd, 3);  // beta = -0.5: C is read
        Operands ops(g, 21);
        expect_good(run_and_check(entry(dt.entry), g, with_splits(3)), what(entry(dt.entry), g, layout), g.a_type);
        g.batch_stride_b = 0;  // every batch multiplies by the same B
        expect_good(run_and_check(entry(dt.entry), g), what(entry(dt.entry), g, layout) + " B broadcast", g.a_type);
      }
    }
  }
}

TEST(Sm80SkinnySweep, SplitKIsCorrectAndDeterministic) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    for (MatrixOrder co : kOrders) {
      // 3001 = 46 k-tiles of 64 and a partial one; 64 and 100 slices leave some empty.
      for (int splits : {1, 2, 3, 7, 47, 64, 100}) {
        GemmArguments g = problem(33, 300, 3001, "tn", co, dt.ab, dt.cd, 2);
        Operands ops(g, 31);
        Sm80RunOptions const o = with_splits(splits);
        std::string const w = what(entry(dt.entry), g, "tn", o);
        expect_good(run_and_check(entry(dt.entry), g, o), w, g.a_type);
        expect_deterministic(dt.entry, g, ops.nd, o, w);
      }
    }
  }
}

TEST(Sm80SkinnySweep, NanAndInfPropagateAsInCublas) {
  TESSEL_REQUIRE_GPU();
  for (DtypeCase const& dt : kDtypes) {
    GemmArguments g = problem(16, 300, 70, "tn", MatrixOrder::col_major, dt.ab, dt.cd);
    g.beta = 0.0f;
    Operands ops(g, 61);
    expect_nonfinite_like_cublas(entry(dt.entry), g, ops.nd);
  }
}

// ---- the issue's shapes and the heuristic -----------------------------------------------------------------

TEST(Sm80SkinnyLarge, IssueShapesAgainstCublas) {
  TESSEL_REQUIRE_GPU();
  struct Case {
    std::int64_t m, n, k;
    char const* layout;
    MatrixOrder co;
    DType ab, cd;
    char const* entry;
  };
  constexpr Case cases[] = {
      {16, 8192, 8192, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16, "sm80_bf16_skinny"},
      {16, 8192, 8192, "tn", MatrixOrder::col_major, DType::f16, DType::f16, "sm80_fp16_skinny"},
      {1, 8192, 8192, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16, "sm80_bf16_skinny"},
      {64, 8192, 8192, "tn", MatrixOrder::col_major, DType::bf16, DType::f32, "sm80_bf16_skinny"},
      {8192, 16, 8192, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16, "sm80_bf16_skinny"},
      {16, 8191, 8189, "nt", MatrixOrder::row_major, DType::f16, DType::f16, "sm80_fp16_skinny"},
      {128, 8192, 8192, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16, "sm80_bf16_skinny"},
  };
  for (Case const& c : cases) {
    GemmArguments g = problem(c.m, c.n, c.k, c.layout, c.co, c.ab, c.cd);
    g.alpha = 1.0f, g.beta = 0.0f;
    Operands ops(g, 71);
    expect_good(run_and_check(entry(c.entry), g), what(entry(c.entry), g, c.layout), g.a_type);
  }
}

TEST(Sm80SkinnyLarge, ThroughTheHostApiWithTheHeuristic) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(16, 8192, 8192, "tn", MatrixOrder::col_major, DType::bf16, DType::bf16);
  Operands ops(g, 73);
  g.kernel = "auto";
  Status why;
  GemmKernelInfo const* k = select_gemm_kernel(g, &why);
  ASSERT_NE(k, nullptr) << why.reason;
  // On an sm_90 GPU a D at most 64 wide (here the canonical N = BLAS M = 16) takes an sm_90a
  // skinny kernel -- 64-row tiles, as 64 tiles of 128 rows would leave half the SMs idle, and at
  // most 16 wide the 16-wide ones -- (measured faster there); elsewhere the sm_80 skinny kernel.
  int dev = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  EXPECT_EQ(std::string(k->name), major * 10 + minor == 90 ? "sm90_bf16_64x16x64" : "sm80_bf16_skinny");
  Status const s = gemm(g, nullptr);
  ASSERT_TRUE(s.ok()) << s.reason;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::size_t const total = std::size_t(g.batch_count * g.m * g.n);
  DeviceMem r(total * 8), sc(total * 8);
  ASSERT_TRUE(r.p && sc.p);
  ASSERT_TRUE(reference::gemm_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p)).ok());
  reference::GemmCheck check;
  Status const cs = reference::check_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p),
                                            reference::gemm_tolerance(g.a_type, g.c_type, g.k), &check);
  EXPECT_TRUE(cs.ok() && check.passed()) << cs.reason << " " << check.describe();
}

// The heuristic (sm80_select_gemm_kernel) needs no GPU: it runs wherever the test binary does.
TEST(Sm80SkinnyHeuristic, PicksSkinnyForMemoryBoundSkinnyProblems) {
  auto const pick = [](std::int64_t m, std::int64_t n, std::int64_t k, DType ab, MatrixOrder co, std::int64_t batch = 1) {
    GemmArguments g = make_packed_gemm(m, n, k, batch, ab, ab == DType::tf32 ? DType::f32 : ab, MatrixOrder::row_major,
                                       MatrixOrder::col_major, co);
    GemmKernelInfo const* e = sm80_select_gemm_kernel(g, 132);
    return std::string(e ? e->name : "none");
  };
  for (MatrixOrder co : kOrders) {
    EXPECT_EQ(pick(16, 8192, 8192, DType::bf16, co), "sm80_bf16_skinny");
    EXPECT_EQ(pick(8192, 16, 8192, DType::bf16, co), "sm80_bf16_skinny");  // the small side on the other operand
    EXPECT_EQ(pick(1, 8192, 8192, DType::f16, co), "sm80_fp16_skinny");
    EXPECT_EQ(pick(64, 8192, 8192, DType::bf16, co), "sm80_bf16_skinny");
    EXPECT_EQ(pick(16, 4096, 1024, DType::bf16, co), "sm80_bf16_skinny");        // B exactly 8 MiB
    EXPECT_EQ(pick(16, 1024, 1024, DType::bf16, co, 4), "sm80_bf16_skinny");    // 4 batches of 2 MiB
    EXPECT_NE(pick(16, 1024, 1024, DType::bf16, co), "sm80_bf16_skinny");       // B 2 MiB: cache-resident, not skinny
    EXPECT_NE(pick(65, 8192, 8192, DType::bf16, co), "sm80_bf16_skinny");
    EXPECT_NE(pick(128, 8192, 8192, DType::bf16, co), "sm80_bf16_skinny");
    EXPECT_NE(pick(16, 8192, 8192, DType::tf32, co), "sm80_bf16_skinny");
  }
}
