// tessel::gemm, the host API, against the fp64 reference and cuBLAS on the same inputs.
//
// Every run: random inputs (never zeros), D poisoned with NaN first, judged by
// tessel/reference (componentwise error vs fp64, NaN never passes where R is finite, first bad
// coordinate reported). Shapes that are not tile multiples (1x1x1, 17x33x65, K below a tile,
// 4095x4097x4099), all four layouts with C/D in either order, every dtype pair, batches with
// broadcast operands, alpha/beta, K = 0, size 0, NaN/Inf propagation, a matrix of more than
// 2^31 elements. The shape, dtype, batch and NaN tests run the heuristic's choice and then every
// SIMT entry by name (the heuristic gives the 128x128 SIMT kernels only problems that fill the
// GPU). The argument-error tests need no GPU and run everywhere.
#include "gpu/gemm_test_support.hpp"
#include "gpu/gpu_test.hpp"

#include <tessel/gemm.hpp>
#include <tessel/gemm/device/sm90_gemm_kernels.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/gemm_host.hpp>

#include <cublas_v2.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace tessel;

namespace {

struct Verdict {
  reference::GemmCheck ours, cublas;
  bool have_cublas = false;
};

cudaDataType cuda_type(DType t) { return t == DType::f16 ? CUDA_R_16F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

// cuBLAS on the same problem into its own NaN-poisoned output (column-major D only).
bool run_cublas(GemmArguments const& g, void* d) {
  if (g.c_order != MatrixOrder::col_major || g.ldc != g.ldd || g.batch_stride_c != g.batch_stride_d) return false;
  if (is_fp8(g.a_type)) return false;  // cublasGemmEx has no fp8 (tests/gpu/fp8_gemm_test.cpp uses cuBLASLt)
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    cublasCreate(&x);
    return x;
  }();
  if (!h) return false;
  std::size_t const nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order);
  if (cudaMemcpy(d, g.c, nd * size_of(g.c_type), cudaMemcpyDeviceToDevice) != cudaSuccess) return false;
  auto const ta = g.a_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto const tb = g.b_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float const alpha = g.alpha, beta = g.beta;
  return cublasGemmStridedBatchedEx(h, ta, tb, int(g.m), int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type),
                                    int(g.lda), g.batch_stride_a, g.b, cuda_type(g.b_type), int(g.ldb), g.batch_stride_b,
                                    &beta, d, cuda_type(g.c_type), int(g.ldd), g.batch_stride_d, int(g.batch_count),
                                    compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

// Run tessel::gemm on g (operands already set) and judge it (and cuBLAS, when it can run it).
Verdict run_and_check(GemmArguments const& g, bool with_cublas = true) {
  Verdict v;
  Status s = gemm(g, nullptr);
  EXPECT_TRUE(s.ok()) << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::size_t const total = std::size_t(g.batch_count * g.m * g.n);
  DeviceMem r(total * 8), sc(total * 8);
  EXPECT_TRUE(reference::gemm_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p)).ok());
  double const tol = reference::gemm_tolerance(g.a_type, g.c_type, g.k);
  Status cs = reference::check_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p), tol, &v.ours);
  EXPECT_TRUE(cs.ok()) << cs.reason;
  if (with_cublas) {
    std::size_t const nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order);
    DeviceMem dc(nd * size_of(g.c_type));
    if (run_cublas(g, dc.p)) {
      GemmArguments y = g;
      y.d = dc.p;
      v.have_cublas = reference::check_device(y, static_cast<double*>(r.p), static_cast<double*>(sc.p), tol, &v.cublas).ok();
    }
  }
  return v;
}

// Our error may not exceed twice cuBLAS's on the same inputs (plus a few units of fp32 roundoff).
void expect_good(Verdict const& v, std::string const& what) {
  EXPECT_TRUE(v.ours.passed()) << what << ": " << v.ours.describe();
  if (v.have_cublas && v.cublas.passed()) {
    EXPECT_LE(v.ours.max_rel_err, 2.0 * v.cublas.max_rel_err + 4 * 0x1p-24)
        << what << ": tessel " << v.ours.max_rel_err << " vs cuBLAS " << v.cublas.max_rel_err;
  }
}

GemmArguments problem(std::int64_t m, std::int64_t n, std::int64_t k, char const* layout, MatrixOrder co = MatrixOrder::col_major,
                      DType ab = DType::f32, DType cd = DType::f32, std::int64_t batch = 1) {
  MatrixOrder const ao = layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  return make_packed_gemm(m, n, k, batch, ab, cd, ao, bo, co);
}

// What the shape, dtype, batch and NaN tests run: the heuristic's choice, then every SIMT entry.
std::vector<char const*> kernels_under_test() {
  std::vector<char const*> names{"auto"};
  for (GemmKernelInfo const& k : gemm_kernels())
    if (std::string_view(k.name).starts_with("simt_")) names.push_back(k.name);
  return names;
}

// Names the kernel in g; false when a named kernel does not take g's input dtype (the cp.async
// kernel takes fp32 only). Any other refusal fails the test.
bool use_kernel(GemmArguments& g, char const* name) {
  g.kernel = name;
  if (std::string_view(name) == "auto") return true;
  Status const s = find_gemm_kernel(name)->check(g);
  if (!s.ok() && s.reason.rfind("a_type:", 0) != 0) ADD_FAILURE() << name << " refuses: " << s.reason;
  return s.ok();
}

}  // namespace

// ---- argument errors: no GPU needed ---------------------------------------------------------------

TEST(GemmApi, RefusesBadArgumentsBeforeAnyCudaCall) {
  GemmArguments g = problem(17, 33, 65, "tn");
  float x;
  g.a = g.b = g.c = &x;
  g.d = &x;
  g.lda = 3;
  Status s = gemm(g);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("lda:", 0), 0u) << s.reason;
  EXPECT_EQ(can_implement(g).code, StatusCode::invalid_argument);
  g = problem(17, 33, 65, "tn");
  g.a = g.b = &x;  // d null
  EXPECT_EQ(gemm(g).reason.rfind("d:", 0), 0u);
}

TEST(GemmApi, SizeZeroSucceedsWithoutTouchingAnything) {
  GemmArguments g = problem(0, 33, 65, "tn");  // null pointers everywhere: nothing is read or written
  g.beta = 1.0f;
  EXPECT_TRUE(gemm(g).ok()) << gemm(g).reason;
  g = problem(17, 33, 65, "nn", MatrixOrder::col_major, DType::f32, DType::f32, 0);
  EXPECT_TRUE(gemm(g).ok());
}

TEST(GemmApi, UnknownKernelNameIsRefused) {
  GemmArguments g = problem(4, 4, 4, "tn");
  float x;
  g.a = g.b = g.c = &x;
  g.d = &x;
  g.kernel = "no_such_kernel";
  Status s = can_implement(g);
  if (s.code == StatusCode::no_device) GTEST_SKIP() << s.reason;
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("kernel:", 0), 0u) << s.reason;
}

TEST(GemmApi, WithoutAGpuSaysSo) {
  if (no_device_reason().empty()) GTEST_SKIP() << "a GPU is present";
  GemmArguments g = problem(4, 4, 4, "tn");
  float x;
  g.a = g.b = g.c = &x;
  g.d = &x;
  Status s = gemm(g);
  EXPECT_EQ(s.code, StatusCode::no_device) << s.reason;
  EXPECT_NE(s.reason.find("no CUDA device"), std::string::npos) << s.reason;
}

TEST(GemmApi, RegistryListsKernelsWithTheirCapabilities) {
  ASSERT_FALSE(gemm_kernels().empty());
  for (GemmKernelInfo const& k : gemm_kernels()) {
    EXPECT_EQ(find_gemm_kernel(k.name), &k);
    EXPECT_TRUE(k.summary && k.tile && k.dtypes && k.layouts && k.alignment && k.selection);
  }
  EXPECT_EQ(find_gemm_kernel("nope"), nullptr);
}

// ---- on the GPU ---------------------------------------------------------------------------------

TEST(GemmApi, ImageForThisGpu) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(64, 64, 64, "tn");
  for (GemmKernelInfo const& k : gemm_kernels()) {
    Status s = gemm_kernel_runs_here(k, g);
    EXPECT_TRUE(s.ok()) << k.name << ": " << s.reason;
    cudaFuncAttributes attr{};
    ASSERT_EQ(k.attributes(g, &attr), cudaSuccess);
    EXPECT_GE(attr.binaryVersion, k.min_cc) << k.name;
    EXPECT_LE(attr.localSizeBytes, 256u) << k.name << " spills more than 256 bytes per thread";
  }
}

// A caller-owned workspace (GemmArguments::workspace, sized by gemm_workspace_size): problems
// that stage operands (odd leading dimensions) or split K (a small M N with a long K) take it, give D bit for bit as with the library's pool, and
// are refused with a reason naming workspace_bytes when it is one byte short.
TEST(GemmApi, CallerOwnedWorkspace) {
  TESSEL_REQUIRE_GPU();
  struct Case { std::int64_t m, n, k, ld_pad; DType ab, cd; };
  int needing = 0;
  for (Case c : {Case{1000, 1200, 520, 3, DType::bf16, DType::bf16}, Case{128, 128, 16384, 0, DType::bf16, DType::f32},
                 Case{96, 4096, 8192, 0, DType::f16, DType::f16}, Case{2000, 300, 1000, 1, DType::tf32, DType::f32},
                 Case{257, 129, 4100, 5, DType::f32, DType::f32}}) {
    GemmArguments g = problem(c.m, c.n, c.k, "tn", MatrixOrder::col_major, c.ab, c.cd);
    if (c.ld_pad > 0) {
      g.lda += c.ld_pad, g.batch_stride_a = g.lda * g.m;
      g.ldb += c.ld_pad, g.batch_stride_b = g.ldb * g.n;
    }
    g.alpha = 1.25f, g.beta = -0.5f;
    Operands ops(g, std::uint64_t(c.m + c.k));
    std::string const what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
                             to_string(c.ab) + (c.ld_pad ? " odd ld" : "");
    std::size_t bytes = 1;
    Status s = gemm_workspace_size(g, &bytes);
    ASSERT_TRUE(s.ok()) << what << ": " << s.reason;
    // The pool's run first; D is poisoned again before the caller's.
    ASSERT_TRUE(gemm(g).ok()) << what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned char> pooled(ops.nd * size_of(g.c_type)), owned(pooled.size());
    ASSERT_EQ(cudaMemcpy(pooled.data(), g.d, pooled.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_TRUE(reference::fill_constant_device(g.d, g.c_type, ops.nd, NAN).ok());
    if (bytes == 0) continue;
    ++needing;
    DeviceMem ws(bytes);
    GemmArguments short_one = g;
    short_one.workspace = ws.p, short_one.workspace_bytes = bytes - 1;
    Status const refused = gemm(short_one);
    EXPECT_EQ(refused.code, StatusCode::invalid_argument) << what;
    EXPECT_EQ(refused.reason.rfind("workspace_bytes:", 0), 0u) << what << ": " << refused.reason;
    g.workspace = ws.p, g.workspace_bytes = bytes;
    ASSERT_TRUE(gemm(g).ok()) << what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(owned.data(), g.d, owned.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(pooled, owned) << what << ": D differs between the pool's workspace and the caller's";
    expect_good(run_and_check(g), what + " (caller's workspace)");
  }
  EXPECT_GE(needing, 2) << "the cases should include problems that stage operands or split K";
  GemmArguments g = problem(64, 64, 64, "tn");
  float x;
  g.a = g.b = g.c = g.d = &x;
  g.workspace = reinterpret_cast<void*>(std::uintptr_t(0x10004));  // not 256-byte aligned (never dereferenced)
  g.workspace_bytes = 1024;
  std::size_t bytes = 0;
  EXPECT_EQ(gemm_workspace_size(g, &bytes).code, StatusCode::invalid_argument);
  EXPECT_EQ(gemm(g).reason.rfind("workspace:", 0), 0u) << gemm(g).reason;
}

TEST(GemmApi, RaggedShapesAllLayoutsBothOutputOrders) {
  TESSEL_REQUIRE_GPU();
  struct Shape { std::int64_t m, n, k; };
  for (char const* kernel : kernels_under_test())
    for (Shape sh : {Shape{1, 1, 1}, Shape{17, 33, 65}, Shape{130, 7, 3}, Shape{5, 260, 9}, Shape{4095, 4097, 4099}})
      for (char const* layout : {"tn", "nn", "nt", "tt"})
        for (MatrixOrder co : {MatrixOrder::col_major, MatrixOrder::row_major}) {
          GemmArguments g = problem(sh.m, sh.n, sh.k, layout, co);
          g.alpha = 1.25f, g.beta = -0.5f;
          if (!use_kernel(g, kernel)) continue;
          Operands ops(g, sh.m + sh.k);
          expect_good(run_and_check(g), std::string(kernel) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) +
                                            "x" + std::to_string(sh.k) + " " + layout +
                                            (co == MatrixOrder::row_major ? " D row-major" : " D col-major"));
        }
}

TEST(GemmApi, AlignedShapesTakeTheVectorPath) {
  TESSEL_REQUIRE_GPU();
  // Multiples of 4 everywhere (128-bit loads), K not a multiple of the k-tile, padded leading dimensions.
  for (char const* kernel : kernels_under_test())
    for (char const* layout : {"tn", "nn", "nt", "tt"}) {
      GemmArguments g = problem(300, 260, 61, layout);
      g.lda += 4, g.ldb += 8, g.ldc += 4, g.ldd += 12;
      g.batch_stride_a = g.batch_stride_b = g.batch_stride_c = g.batch_stride_d = 0;
      g.alpha = 0.75f, g.beta = 2.0f;
      if (!use_kernel(g, kernel)) continue;
      Operands ops(g, 3);
      expect_good(run_and_check(g, false), std::string(kernel) + " aligned, padded ld " + layout);
    }
}

TEST(GemmApi, EveryDtypePair) {
  TESSEL_REQUIRE_GPU();
  struct Pair { DType ab, cd; };
  for (Pair p : {Pair{DType::f32, DType::f32}, Pair{DType::tf32, DType::f32}, Pair{DType::f16, DType::f16},
                 Pair{DType::f16, DType::f32}, Pair{DType::bf16, DType::bf16}, Pair{DType::bf16, DType::f32}})
    for (char const* kernel : kernels_under_test())
      for (char const* layout : {"tn", "nt"}) {
        GemmArguments g = problem(257, 129, 300, layout, MatrixOrder::col_major, p.ab, p.cd);
        g.alpha = 0.5f, g.beta = 0.25f;
        if (!use_kernel(g, kernel)) continue;
        Operands ops(g, 11);
        expect_good(run_and_check(g), std::string(kernel) + " " + to_string(p.ab) + "->" + to_string(p.cd) + " " + layout);
        // Misaligned pointers (one element off): the scalar path, same answers.
        GemmArguments h = problem(100, 67, 45, layout, MatrixOrder::row_major, p.ab, p.cd);
        h.kernel = g.kernel;
        Operands ops2(h, 12);
        h.a = static_cast<char const*>(h.a) + size_of(h.a_type);  // shift by one element, stay inside (sizes padded below)
        h.m -= 1;
        expect_good(run_and_check(h, false), std::string(kernel) + " misaligned " + to_string(p.ab) + " " + layout);
      }
}

TEST(GemmApi, BatchedWithBroadcastOperands) {
  TESSEL_REQUIRE_GPU();
  for (char const* kernel : kernels_under_test()) {
    for (char const* layout : {"tn", "nn", "nt", "tt"}) {
      GemmArguments g = problem(100, 70, 50, layout, MatrixOrder::col_major, DType::f32, DType::f32, 3);
      g.alpha = 1.5f, g.beta = 0.5f;
      if (!use_kernel(g, kernel)) continue;
      Operands ops(g, 5);
      expect_good(run_and_check(g), std::string(kernel) + " batched " + layout);
      g.batch_stride_a = 0;  // every batch multiplies the same A
      expect_good(run_and_check(g), std::string(kernel) + " batched, broadcast A " + layout);
    }
    GemmArguments g = problem(33, 17, 9, "tn", MatrixOrder::row_major, DType::bf16, DType::bf16, 70000);  // > 65535 batches
    if (!use_kernel(g, kernel)) continue;
    Operands ops(g, 6);
    expect_good(run_and_check(g, false), std::string(kernel) + " 70000 batches");
  }
}

TEST(GemmApi, BetaZeroDoesNotReadC) {
  TESSEL_REQUIRE_GPU();
  for (char const* kernel : kernels_under_test()) {
    GemmArguments g = problem(65, 33, 17, "tn");
    if (!use_kernel(g, kernel)) continue;
    Operands ops(g, 8);
    ASSERT_TRUE(reference::fill_constant_device(ops.c->p, g.c_type, ops.nc, NAN).ok());
    g.beta = 0.0f;
    Verdict v = run_and_check(g);
    EXPECT_TRUE(v.ours.passed()) << kernel << ": " << v.ours.describe();  // NaN in C must not reach D
    g.c = nullptr;
    EXPECT_TRUE(gemm(g).ok()) << kernel;
  }
}

TEST(GemmApi, KZeroAndAlphaZeroGiveBetaTimesC) {
  TESSEL_REQUIRE_GPU();
  for (DType cd : {DType::f32, DType::bf16}) {
    GemmArguments g = problem(37, 29, 0, "tn", MatrixOrder::col_major, cd == DType::f32 ? DType::f32 : DType::bf16, cd);
    g.beta = -2.0f;
    Operands ops(g, 9);
    g.a = g.b = nullptr;  // not read
    EXPECT_TRUE(run_and_check(g, false).ours.passed());
    g.beta = 0.0f;  // D = 0
    EXPECT_TRUE(run_and_check(g, false).ours.passed());
  }
  GemmArguments g = problem(37, 29, 11, "nt");
  g.alpha = 0.0f, g.beta = 3.0f;
  Operands ops(g, 10);
  g.a = g.b = nullptr;
  EXPECT_TRUE(run_and_check(g, false).ours.passed());
}

TEST(GemmApi, NanAndInfPropagate) {
  TESSEL_REQUIRE_GPU();
  // 150x140x70: rows of odd length, scalar loads; 260x136x72: every leading dimension a multiple
  // of 4, so the 128x128 kernels' interior CTA (rows and columns 0-127) takes unpredicated 128-bit loads.
  struct Shape { std::int64_t m, n, k; };
  for (char const* kernel : kernels_under_test())
    for (Shape sh : {Shape{150, 140, 70}, Shape{260, 136, 72}})
      for (char const* layout : {"tn", "nn", "nt", "tt"}) {
        GemmArguments g = problem(sh.m, sh.n, sh.k, layout);
        g.beta = 1.0f;
        if (!use_kernel(g, kernel)) continue;
        Operands ops(g, 13);
        float const nan = NAN, inf = INFINITY, ninf = -INFINITY;
        auto put = [](void const* base, std::int64_t off, float v) {
          ASSERT_EQ(cudaMemcpy(static_cast<float*>(const_cast<void*>(base)) + off, &v, 4, cudaMemcpyHostToDevice), cudaSuccess);
        };
        put(g.a, reference::element_offset(g.a_order, 3, 5, g.lda), nan);      // row 3 of D: NaN
        put(g.b, reference::element_offset(g.b_order, 7, 130, g.ldb), inf);    // column 130 (in the last tile): +-inf
        put(g.c, reference::element_offset(g.c_order, 149, 2, g.ldc), ninf);   // D(149, 2) = -inf
        Verdict v = run_and_check(g, false);
        EXPECT_TRUE(v.ours.passed()) << kernel << " " << sh.m << "x" << sh.n << "x" << sh.k << " " << layout << ": "
                                     << v.ours.describe();
      }
}

TEST(GemmApi, EveryKernelByNameAndTheHeuristic) {
  TESSEL_REQUIRE_GPU();
  // Each kernel runs in the first input type it takes (fp32 for SIMT, bf16/fp16/tf32 for sm80,
  // e4m3 for an fp8-only kernel).
  auto input_type_of = [](GemmKernelInfo const& k) {
    for (DType t : {DType::f32, DType::bf16, DType::f16, DType::tf32, DType::e4m3}) {
      GemmArguments g = problem(64, 64, 64, "tn", MatrixOrder::col_major, t, DType::f32);
      g.kernel = k.name;
      if (k.check(g).ok()) return t;
    }
    ADD_FAILURE() << k.name << " takes none of the input types";
    return DType::f32;
  };
  for (GemmKernelInfo const& k : gemm_kernels()) {
    if (sm90_is_block_scaled(k)) continue;  // block-scaled calls only: tests/gpu/fp8_blockscaled_test.cpp
    DType const ab = input_type_of(k);
    for (char const* layout : {"nn", "tn", "nt", "tt"}) {
      GemmArguments g = problem(333, 222, 111, layout, MatrixOrder::col_major, ab, DType::f32);
      g.kernel = k.name;
      g.beta = 1.0f;
      Operands ops(g, 14);
      expect_good(run_and_check(g), std::string(k.name) + " " + layout);
      GemmArguments h = problem(4095, 4097, 4099, layout, MatrixOrder::row_major, ab, DType::f32);  // ragged, unaligned rows
      h.kernel = k.name;
      Operands ops2(h, 15);
      expect_good(run_and_check(h, false), std::string(k.name) + " 4095x4097x4099 " + layout);
    }
  }
  // fp32: 64x64 tiles while 128x128 tiles (times batches) would leave SMs idle, else simt_128x128x8_128t.
  GemmArguments small = problem(256, 256, 64, "tn");  // 4 tiles of 128x128
  EXPECT_STREQ(select_gemm_kernel(small)->name, "simt_64x64x8");
  GemmArguments batched = problem(256, 256, 64, "nt", MatrixOrder::col_major, DType::f32, DType::f32, 512);  // 2048 tiles
  EXPECT_STREQ(select_gemm_kernel(batched)->name, "simt_128x128x8_128t");
  GemmArguments big = problem(4096, 4096, 64, "tn");  // 1024 tiles
  EXPECT_STREQ(select_gemm_kernel(big)->name, "simt_128x128x8_128t");
  big.a_type = big.b_type = DType::bf16;
  big.c_type = DType::bf16;
  // Tensor-core dtypes go to the sm90 kernels on an sm_90 GPU, to the sm80 kernels on other sm_80+ GPUs.
  int dev = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  char const* const family = major * 10 + minor == 90 ? "sm90_bf16_" : "sm80_bf16_";
  EXPECT_EQ(std::string(select_gemm_kernel(big)->name).rfind(family, 0), 0u) << select_gemm_kernel(big)->name;
  big.kernel = "simt_cp_async_128x128x8";  // fp32 only
  Status why;
  EXPECT_EQ(select_gemm_kernel(big, &why), nullptr);
  EXPECT_EQ(why.code, StatusCode::not_supported);
  EXPECT_EQ(why.reason.rfind("a_type:", 0), 0u) << why.reason;
}

// select_gemm_kernel remembers each thread's last choices (gemm.cpp, RememberedChoices). A choice
// read back must be the one a thread that never saw the problem makes, and a problem that differs
// in one thing the heuristic reads (an operand's alignment, an option, the shape) is chosen afresh.
TEST(GemmApi, RememberedChoicesAreTheHeuristics) {
  TESSEL_REQUIRE_GPU();
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  struct Shape {
    std::int64_t m, n, k;
  };
  std::vector<GemmArguments> problems;  // made-up addresses: choosing a kernel reads none
  for (Shape const s : {Shape{1024, 1024, 1024}, Shape{16, 4096, 4096}, Shape{4095, 4097, 4099}, Shape{8192, 8192, 256},
                        Shape{64, 64, 64}})
    for (DType const t : {DType::bf16, DType::f16, DType::f32, DType::e4m3})
      for (char const* layout : {"tn", "nn"}) {
        GemmArguments g = problem(s.m, s.n, s.k, layout, MatrixOrder::row_major, t, t == DType::e4m3 ? DType::bf16 : t);
        g.a = reinterpret_cast<void const*>(std::uintptr_t(0x7f0000000000));
        g.b = reinterpret_cast<void const*>(std::uintptr_t(0x7f0100000000));
        g.d = reinterpret_cast<void*>(std::uintptr_t(0x7f0200000000));
        problems.push_back(g);
        GemmArguments odd = g;  // A 2-byte aligned: no TMA read in place
        odd.a = static_cast<char const*>(odd.a) + 2;
        problems.push_back(odd);
        GemmArguments sliced = g;
        sliced.options.splits = 3;
        problems.push_back(sliced);
      }
  auto name_of = [](GemmKernelInfo const* k) { return std::string(k != nullptr ? k->name : "(none)"); };
  std::vector<std::string> fresh;
  for (GemmArguments const& g : problems) {  // each in a thread of its own: nothing remembered
    std::thread([&] {
      ASSERT_EQ(cudaSetDevice(dev), cudaSuccess);
      fresh.push_back(name_of(select_gemm_kernel(g)));
    }).join();
  }
  ASSERT_EQ(fresh.size(), problems.size());
  for (std::size_t i = 0; i < problems.size(); ++i) {
    for (std::size_t j : {i, i, i > 0 ? i - 1 : i}) {  // the second and third reads are remembered ones
      SCOPED_TRACE("problem " + std::to_string(j));
      EXPECT_EQ(name_of(select_gemm_kernel(problems[j])), fresh[j]);
    }
  }
}

TEST(GemmApi, MatrixOfMoreThan2To31Elements) {
  TESSEL_REQUIRE_GPU();
  // A is 1048581 x 2051 bf16, row-major: 2,150,639,631 elements (4.3 GB); offsets pass 2^31.
  GemmArguments g = problem(1048581, 16, 2051, "tn", MatrixOrder::row_major, DType::bf16, DType::f32);
  ASSERT_GT(double(g.m) * double(g.k), 2147483648.0);
  std::size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  if (free_b < (std::size_t(6) << 30)) GTEST_SKIP() << "needs 6 GB of free GPU memory";
  Operands ops(g, 15);
  for (char const* kernel : kernels_under_test()) {  // bf16: the SIMT kernels only by name
    if (!use_kernel(g, kernel)) continue;
    ASSERT_TRUE(reference::fill_constant_device(ops.d->p, g.c_type, ops.nd, NAN).ok());  // poisoned again
    Verdict v = run_and_check(g, false);
    EXPECT_TRUE(v.ours.passed()) << kernel << ": " << v.ours.describe();
  }
}

TEST(GemmApi, CudaErrorsAreReturnedNotSwallowed) {
  TESSEL_REQUIRE_GPU();
  GemmArguments g = problem(64, 64, 64, "tn");
  Operands ops(g, 16);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  void* p = nullptr;
  ASSERT_NE(cudaMalloc(&p, std::size_t(1) << 62), cudaSuccess);  // leaves a (non-sticky) error pending
  Status s = gemm(g);  // the launch succeeds, but the pending error is reported, not dropped
  EXPECT_EQ(s.code, StatusCode::cuda_error) << s.reason;
  EXPECT_NE(s.reason.find("cudaErrorMemoryAllocation"), std::string::npos) << s.reason;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}
