// fp8 GEMM (e4m3 / e5m2 inputs, bf16 / fp16 / fp32 out) through tessel::gemm, judged against the
// fp64 reference of the exactly dequantized inputs (tessel/reference), and against cuBLASLt's fp8
// matmul on the same inputs where it runs (tn).
//
// Every run: random inputs uniform in [-2, 2) rounded to fp8 (never zeros in bulk), D poisoned
// with NaN first, componentwise error vs fp64 (NaN never passes where R is finite, first bad
// coordinate reported). Every cuBLASLt fp8 pair (e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3), every
// layout, D in either order, ragged shapes, alpha/beta and the per-tensor scales, 128-bit and
// scalar loads, batches, NaN/Inf inputs, and every code of both formats times every code of the
// other (products of fp8 values are exact in fp32, so D must equal the reference bit for bit).
// Whichever kernel takes fp8 runs: the SIMT fallback everywhere, a tensor-core kernel where one
// is registered.
#include "gpu/gemm_test_support.hpp"
#include "gpu/gpu_test.hpp"

#include <tessel/gemm.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/gemm_host.hpp>

#include <cublasLt.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace tessel;

namespace {

struct Pair {
  DType a, b;
};
constexpr Pair kPairs[] = {{DType::e4m3, DType::e4m3}, {DType::e4m3, DType::e5m2}, {DType::e5m2, DType::e4m3}};
constexpr DType kOutputs[] = {DType::bf16, DType::f16, DType::f32};

GemmArguments problem(std::int64_t m, std::int64_t n, std::int64_t k, char const* layout, MatrixOrder co, Pair ab,
                      DType cd, std::int64_t batch = 1) {
  MatrixOrder const ao = layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  GemmArguments g = make_packed_gemm(m, n, k, batch, ab.a, cd, ao, bo, co);
  g.b_type = ab.b;
  return g;
}

std::string describe(GemmArguments const& g, char const* layout) {
  return std::to_string(g.batch_count) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
         std::to_string(g.k) + " " + to_string(g.a_type) + "x" + to_string(g.b_type) + "->" + to_string(g.c_type) +
         " " + layout + (g.c_order == MatrixOrder::row_major ? " D row-major" : " D col-major");
}

// The fp64 reference of g (its current A, B, C) judged against `d` (g.d when null).
reference::GemmCheck judge(GemmArguments g, void* d = nullptr) {
  if (d) g.d = d;
  std::size_t const total = std::size_t(g.batch_count * g.m * g.n);
  DeviceMem r(total * 8), sc(total * 8);
  EXPECT_TRUE(reference::gemm_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p)).ok());
  reference::GemmCheck c;
  double const tol = reference::gemm_tolerance(g.a_type, g.c_type, g.k);
  Status s = reference::check_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p), tol, &c);
  EXPECT_TRUE(s.ok()) << s.reason;
  return c;
}

reference::GemmCheck run_and_check(GemmArguments const& g) {
  Status s = gemm(g, nullptr);
  EXPECT_TRUE(s.ok()) << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return judge(g);
}

// cuBLASLt's fp8 matmul into `d` (holding C on entry): tn, C/D column-major, scales as device
// scalars, the heuristic's first algorithm. Empty when it ran; otherwise the step that refused,
// with cuBLAS's status.
std::string run_cublaslt(GemmArguments const& g, void* d) {
  if (g.a_order != MatrixOrder::row_major || g.b_order != MatrixOrder::col_major || g.c_order != MatrixOrder::col_major ||
      g.batch_count != 1)
    return "not a tn problem with a column-major D and one batch";
  static cublasLtHandle_t lt = [] {
    cublasLtHandle_t h = nullptr;
    return cublasLtCreate(&h) == CUBLAS_STATUS_SUCCESS ? h : nullptr;
  }();
  if (!lt) return "cublasLtCreate failed";
  auto type = [](DType t) {
    return t == DType::e4m3 ? CUDA_R_8F_E4M3 : t == DType::e5m2 ? CUDA_R_8F_E5M2
         : t == DType::bf16 ? CUDA_R_16BF : t == DType::f16 ? CUDA_R_16F : CUDA_R_32F;
  };
  // Each scale on its own 256-byte line: cuBLASLt refuses (CUBLAS_STATUS_NOT_SUPPORTED, at the
  // matmul, after its heuristic has chosen an algorithm) a scale pointer that is only 4-byte
  // aligned, as the second float of one buffer is.
  DeviceMem scales(512), ws(std::size_t(32) << 20);
  void const* sa = scales.p;
  void const* sb = static_cast<char*>(scales.p) + 256;
  if (cudaMemcpy(scales.p, &g.a_scale, sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(static_cast<char*>(scales.p) + 256, &g.b_scale, sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
    return "cudaMemcpy";
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasOperation_t const ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  std::uint64_t const ws_bytes = std::size_t(32) << 20;
  std::string failed;
  auto step = [&](char const* what, cublasStatus_t s) {
    if (failed.empty() && s != CUBLAS_STATUS_SUCCESS) failed = std::string(what) + ": cuBLAS status " + std::to_string(int(s));
  };
  step("cublasLtMatmulDescCreate", cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  if (failed.empty()) {
    step("TRANSA", cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    step("TRANSB", cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    step("A_SCALE_POINTER", cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    step("B_SCALE_POINTER", cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  }
  step("layout A", cublasLtMatrixLayoutCreate(&la, type(g.a_type), g.k, g.m, g.lda));
  step("layout B", cublasLtMatrixLayoutCreate(&lb, type(g.b_type), g.k, g.n, g.ldb));
  step("layout C/D", cublasLtMatrixLayoutCreate(&ld, type(g.c_type), g.m, g.n, g.ldd));
  step("preference", cublasLtMatmulPreferenceCreate(&pref));
  if (failed.empty())
    step("workspace preference",
         cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  if (failed.empty()) step("cublasLtMatmulAlgoGetHeuristic", cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &algo, &found));
  if (failed.empty() && found == 0) failed = "cublasLtMatmulAlgoGetHeuristic: no algorithm";
  float const alpha = g.alpha, beta = g.beta;
  if (failed.empty() && cudaMemcpy(d, g.c, std::size_t(g.ldd * g.n) * size_of(g.c_type), cudaMemcpyDeviceToDevice) != cudaSuccess)
    failed = "cudaMemcpy of C";
  if (failed.empty())
    step("cublasLtMatmul", cublasLtMatmul(lt, op, &alpha, g.a, la, g.b, lb, &beta, d, ld, d, ld, &algo.algo, ws.p, ws_bytes, nullptr));
  if (failed.empty() && cudaDeviceSynchronize() != cudaSuccess) failed = "cudaDeviceSynchronize after cublasLtMatmul";
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {la, lb, ld})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (op) cublasLtMatmulDescDestroy(op);
  return failed;
}

}  // namespace

TEST(Fp8Gemm, RaggedShapesEveryLayoutEveryPair) {
  TESSEL_REQUIRE_GPU();
  struct Shape { std::int64_t m, n, k; };
  int run = 0;
  for (Shape sh : {Shape{1, 1, 1}, Shape{17, 33, 65}, Shape{130, 7, 3}, Shape{5, 260, 9}, Shape{257, 129, 300}})
    for (char const* layout : {"tn", "nn", "nt", "tt"})
      for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major})
        for (Pair ab : kPairs) {
          GemmArguments g = problem(sh.m, sh.n, sh.k, layout, co, ab, kOutputs[run++ % 3]);
          g.alpha = 1.25f, g.beta = -0.5f;
          Operands ops(g, std::uint64_t(sh.m + sh.k), 0, -2.0f, 2.0f);
          reference::GemmCheck const c = run_and_check(g);
          EXPECT_TRUE(c.passed()) << describe(g, layout) << ": " << c.describe();
        }
}

TEST(Fp8Gemm, VectorAndScalarLoads) {
  TESSEL_REQUIRE_GPU();
  for (char const* layout : {"tn", "nn", "nt", "tt"}) {
    // Multiples of 4 (4-byte loads of 4 fp8), K not a multiple of the k-tile, padded leading dimensions.
    GemmArguments g = problem(300, 260, 61, layout, MatrixOrder::col_major, kPairs[1], DType::bf16);
    g.lda += 4, g.ldb += 8, g.ldc += 4, g.ldd += 12;
    g.batch_stride_a = g.batch_stride_b = g.batch_stride_c = g.batch_stride_d = 0;
    g.alpha = 0.5f, g.beta = 2.0f;
    Operands ops(g, 3, 0, -2.0f, 2.0f);
    EXPECT_TRUE(run_and_check(g).passed()) << describe(g, layout) << " aligned";
    // Pointers one byte off: every load takes the scalar path.
    GemmArguments h = problem(300, 260, 61, layout, MatrixOrder::row_major, kPairs[2], DType::f32);
    Operands ops2(h, 4, /*offset=*/1, -2.0f, 2.0f);
    reference::GemmCheck const c = run_and_check(h);
    EXPECT_TRUE(c.passed()) << describe(h, layout) << " misaligned: " << c.describe();
  }
}

TEST(Fp8Gemm, BatchedWithBroadcastA) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(100, 70, 50, "nn", MatrixOrder::col_major, kPairs[0], DType::f16, 3);
  g.alpha = 1.5f, g.beta = 0.5f;
  Operands ops(g, 5, 0, -2.0f, 2.0f);
  EXPECT_TRUE(run_and_check(g).passed());
  g.batch_stride_a = 0;  // every batch multiplies the same A
  EXPECT_TRUE(run_and_check(g).passed());
}

TEST(Fp8Gemm, LargeRaggedAndUnaligned) {
  TESSEL_REQUIRE_GPU();
  for (DType cd : {DType::bf16, DType::f32}) {
    GemmArguments g = problem(4095, 4097, 4099, "tn", MatrixOrder::col_major, kPairs[0], cd);
    Operands ops(g, 15, 0, -2.0f, 2.0f);
    reference::GemmCheck const c = run_and_check(g);
    EXPECT_TRUE(c.passed()) << describe(g, "tn") << ": " << c.describe();
  }
}

// Every code of one format times every code of the other: D(i, j) = a_i * b_j is exact in fp32
// (and inf * 0 = NaN, NaN * x = NaN), so the result must equal the fp64 reference exactly. This
// checks the kernel's decode of all 256 codes of both formats against the reference's.
TEST(Fp8Gemm, EveryCodePairIsExact) {
  TESSEL_REQUIRE_GPU();
  std::vector<std::uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[i] = std::uint8_t(i);
  for (Pair ab : {kPairs[1], kPairs[2]})
    for (char const* layout : {"tn", "nn", "nt", "tt"}) {
      GemmArguments g = problem(256, 256, 1, layout, MatrixOrder::col_major, ab, DType::f32);
      Operands ops(g, 1);
      ASSERT_EQ(ops.na, 256u);
      ASSERT_EQ(ops.nb, 256u);
      TESSEL_CUDA_OK(cudaMemcpy(ops.a->p, codes.data(), 256, cudaMemcpyHostToDevice));
      TESSEL_CUDA_OK(cudaMemcpy(ops.b->p, codes.data(), 256, cudaMemcpyHostToDevice));
      reference::GemmCheck const c = run_and_check(g);
      EXPECT_TRUE(c.passed()) << describe(g, layout) << ": " << c.describe();
      EXPECT_EQ(c.max_rel_err, 0.0) << describe(g, layout);
    }
}

TEST(Fp8Gemm, NanAndInfPropagate) {
  TESSEL_REQUIRE_GPU();
  for (char const* layout : {"tn", "nt"}) {
    GemmArguments g = problem(150, 140, 70, layout, MatrixOrder::col_major, kPairs[1], DType::f32);  // e4m3 x e5m2
    g.beta = 1.0f;
    Operands ops(g, 13, 0, -2.0f, 2.0f);
    auto put = [](void const* base, std::size_t bytes, std::int64_t off, void const* v) {
      ASSERT_EQ(cudaMemcpy(static_cast<char*>(const_cast<void*>(base)) + off * bytes, v, bytes, cudaMemcpyHostToDevice),
                cudaSuccess);
    };
    std::uint8_t const e4m3_nan = 0x7f, e5m2_inf = 0x7c, e5m2_ninf = 0xfc;
    float const ninf = -INFINITY;
    put(g.a, 1, reference::element_offset(g.a_order, 3, 5, g.lda), &e4m3_nan);     // row 3 of D: NaN
    put(g.b, 1, reference::element_offset(g.b_order, 7, 130, g.ldb), &e5m2_inf);   // column 130: +-inf
    put(g.b, 1, reference::element_offset(g.b_order, 9, 131, g.ldb), &e5m2_ninf);  // column 131: -+inf
    put(g.c, 4, reference::element_offset(g.c_order, 149, 2, g.ldc), &ninf);       // D(149, 2) = -inf
    reference::GemmCheck const c = run_and_check(g);
    EXPECT_TRUE(c.passed()) << layout << ": " << c.describe();
  }
}

// Scales, alpha and beta, every output and pair; and no worse than cuBLASLt on the same inputs
// (twice its error plus a few fp32 units), where cuBLASLt runs fp8 (sm_89+; tn, K a multiple of 16).
TEST(Fp8Gemm, ScalesEveryOutputAndCublasLt) {
  TESSEL_REQUIRE_GPU();
  int dev = 0, major = 0, minor = 0;
  TESSEL_CUDA_OK(cudaGetDevice(&dev));
  TESSEL_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  TESSEL_CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  bool const lt_fp8 = major * 10 + minor >= 89;
  std::string refusals;
  for (DType cd : kOutputs)
    for (Pair ab : kPairs) {
      GemmArguments g = problem(512, 384, 1024, "tn", MatrixOrder::col_major, ab, cd);
      g.alpha = 0.5f, g.beta = 0.25f, g.a_scale = 2.0f, g.b_scale = 0.375f;
      Operands ops(g, 17, 0, -2.0f, 2.0f);
      reference::GemmCheck const ours = run_and_check(g);
      EXPECT_TRUE(ours.passed()) << describe(g, "tn") << " scaled: " << ours.describe();
      GemmArguments unscaled = g;  // the scales matter: the same D judged as if they were 1 fails
      unscaled.a_scale = unscaled.b_scale = 1.0f;
      EXPECT_FALSE(judge(unscaled).passed()) << describe(g, "tn") << ": the scales were ignored";
      if (!lt_fp8) continue;
      DeviceMem d(ops.nd * size_of(g.c_type));
      if (std::string const why = run_cublaslt(g, d.p); !why.empty()) {
        // Not tessel's failure: the reference check above still judged it. Reported by the skip below.
        refusals += "\n  " + describe(g, "tn") + ": " + why;
        continue;
      }
      reference::GemmCheck const lt = judge(g, d.p);
      EXPECT_TRUE(lt.passed()) << describe(g, "tn") << " cuBLASLt: " << lt.describe();
      EXPECT_LE(ours.max_rel_err, 2.0 * lt.max_rel_err + 4 * 0x1p-24)
          << describe(g, "tn") << ": tessel " << ours.max_rel_err << " vs cuBLASLt " << lt.max_rel_err;
    }
  if (!lt_fp8) GTEST_SKIP() << "checked against the reference only: cuBLASLt runs fp8 on sm_89 and newer";
  if (!refusals.empty()) GTEST_SKIP() << "checked against the fp64 reference; cuBLASLt refused" << refusals;
}

TEST(Fp8Gemm, KernelsThatTakeFp8RunItAndTheOthersRefuse) {
  TESSEL_REQUIRE_GPU();
  // K = 160: 16-byte aligned fp8 rows, as TMA-fed kernels need; M and N ragged.
  GemmArguments probe = problem(333, 222, 160, "tn", MatrixOrder::col_major, kPairs[0], DType::bf16);
  int takers = 0;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    Status const s = k.check(probe);
    if (!s.ok()) {
      EXPECT_EQ(s.code, StatusCode::not_supported) << k.name;
      EXPECT_NE(s.reason.find(": "), std::string::npos) << k.name << ": the reason names no argument: " << s.reason;
      continue;
    }
    if (!gemm_kernel_runs_here(k, probe).ok()) continue;  // e.g. an sm_90a kernel on another GPU
    ++takers;
    for (char const* layout : {"nn", "tn", "nt", "tt"}) {
      GemmArguments g = problem(333, 222, 160, layout, MatrixOrder::col_major, kPairs[1], DType::bf16);
      g.kernel = k.name;
      g.beta = 1.0f;
      if (!k.check(g).ok()) continue;  // e.g. a wgmma kernel that reads K-major fp8 only (tn here)
      Operands ops(g, 14, 0, -2.0f, 2.0f);
      reference::GemmCheck const c = run_and_check(g);
      EXPECT_TRUE(c.passed()) << k.name << " " << describe(g, layout) << ": " << c.describe();
    }
  }
  EXPECT_GE(takers, 2) << "the SIMT kernels (simt_128x128x8_128t, simt_64x64x8) take fp8 on every GPU";
  Status why;
  GemmKernelInfo const* k = select_gemm_kernel(probe, &why);
  ASSERT_NE(k, nullptr) << why.reason;
  EXPECT_TRUE(k->check(probe).ok()) << k->name;
}
