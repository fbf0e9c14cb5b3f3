// tests/gpu/gemm_verdict.hpp -- judging a tensor-core GEMM on the GPU: random operands with a
// poisoned D (Operands, gemm_test_support.hpp), cuBLAS on the same inputs, the fp64 reference, and the rule "our error is at most
// twice cuBLAS's (plus a few fp32 units)". Shared by the sm80 and sm90 kernel tests.
#pragma once

#include "gpu/gemm_test_support.hpp"

#include <gtest/gtest.h>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/core/status.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/numeric.hpp>

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tessel {

// The options every problem() of this test binary runs with: the library's defaults, or those a
// test binary's main sets from its command line (sm90_gemm_test.cpp: the ctest subsets that run
// the skinny and every-entry tests again with a path the heuristic does not take on them).
inline GemmOptions& test_options() {
  static GemmOptions options;
  return options;
}

inline GemmArguments problem(std::int64_t m, std::int64_t n, std::int64_t k, char const* layout, MatrixOrder co, DType ab,
                      DType cd, std::int64_t batch = 1) {
  MatrixOrder const ao = layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  GemmArguments g = make_packed_gemm(m, n, k, batch, ab, cd, ao, bo, co);
  g.alpha = 1.25f, g.beta = -0.5f;
  g.options = test_options();
  return g;
}

inline cudaDataType cuda_type(DType t) { return t == DType::f16 ? CUDA_R_16F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

inline cublasHandle_t cublas() {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    if (cublasCreate(&x) != CUBLAS_STATUS_SUCCESS) return static_cast<cublasHandle_t>(nullptr);
    return x;
  }();
  return h;
}

// cuBLAS on g into d (which holds a copy of C): a row-major D is computed as D^T = op(B)^T op(A)^T.
inline bool run_cublas(GemmArguments const& g, void* d) {
  cublasHandle_t h = cublas();
  if (!h || g.ldc != g.ldd || g.batch_stride_c != g.batch_stride_d) return false;
  if (is_fp8(g.a_type)) return false;  // cublasGemmEx has no fp8 (fp8_gemm_test.cpp uses cuBLASLt)
  std::size_t const nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order);
  if (cudaMemcpy(d, g.c, nd * size_of(g.c_type), cudaMemcpyDeviceToDevice) != cudaSuccess) return false;
  bool const a_row = g.a_order == MatrixOrder::row_major, b_row = g.b_order == MatrixOrder::row_major;
  auto const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float const alpha = g.alpha, beta = g.beta;
  cublasStatus_t s;
  if (g.c_order == MatrixOrder::col_major) {
    s = cublasGemmStridedBatchedEx(h, a_row ? CUBLAS_OP_T : CUBLAS_OP_N, b_row ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.m),
                                   int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type), int(g.lda), g.batch_stride_a,
                                   g.b, cuda_type(g.b_type), int(g.ldb), g.batch_stride_b, &beta, d,
                                   cuda_type(g.c_type), int(g.ldd), g.batch_stride_d, int(g.batch_count), compute,
                                   CUBLAS_GEMM_DEFAULT);
  } else {
    s = cublasGemmStridedBatchedEx(h, b_row ? CUBLAS_OP_N : CUBLAS_OP_T, a_row ? CUBLAS_OP_N : CUBLAS_OP_T, int(g.n),
                                   int(g.m), int(g.k), &alpha, g.b, cuda_type(g.b_type), int(g.ldb), g.batch_stride_b,
                                   g.a, cuda_type(g.a_type), int(g.lda), g.batch_stride_a, &beta, d,
                                   cuda_type(g.c_type), int(g.ldd), g.batch_stride_d, int(g.batch_count), compute,
                                   CUBLAS_GEMM_DEFAULT);
  }
  return s == CUBLAS_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess;
}

struct Verdict {
  reference::GemmCheck ours, cublas;
  bool have_cublas = false;
  std::int64_t k = 0;  // the problem's K
};

// Judge D (already computed into g.d) and cuBLAS on the same inputs against the fp64 reference.
inline Verdict judge(GemmArguments const& g, bool with_cublas = true) {
  Verdict v;
  v.k = g.k;
  std::size_t const total = std::size_t(g.batch_count * g.m * g.n);
  DeviceMem r(total * 8), sc(total * 8);
  EXPECT_TRUE(r.p && sc.p);
  EXPECT_TRUE(reference::gemm_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p)).ok());
  double const tol = reference::gemm_tolerance(g.a_type, g.c_type, g.k);
  Status cs = reference::check_device(g, static_cast<double*>(r.p), static_cast<double*>(sc.p), tol, &v.ours);
  EXPECT_TRUE(cs.ok()) << cs.reason;
  if (with_cublas) {
    std::size_t const nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order);
    DeviceMem dc(nd * size_of(g.c_type));
    if (dc.p && run_cublas(g, dc.p)) {
      GemmArguments y = g;
      y.d = dc.p;
      v.have_cublas = reference::check_device(y, static_cast<double*>(r.p), static_cast<double*>(sc.p), tol, &v.cublas).ok();
    }
  }
  return v;
}

// "<batch>x<m>x<n>x<k> <layout> D <order> -> <dtype>"
inline std::string describe_problem(GemmArguments const& g, char const* layout) {
  return std::to_string(g.batch_count) + "x" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
         std::to_string(g.k) + " " + layout + " D " + (g.c_order == MatrixOrder::row_major ? "row" : "col") + " -> " +
         to_string(g.c_type);
}

// Passes the fp64 judge, and the error is at most twice cuBLAS's (plus a few fp32 units; the norm
// error also gets sqrt(K) fp32 units, the typical rounding of an fp32 sum of K products, which
// cuBLAS can undercut by luck on a handful of outputs: 1x5x300 fp16 -> fp32 measured 5.3e-7
// against cuBLAS's 1.2e-7). For tf32,
// cuBLAS's "fast tf32" mode may run a problem in full fp32 (it is allowed, not required, to round);
// then the yardstick is the error of rounding the inputs to tf32 (2^-10 of the scale, each product
// rounded once in each factor), never less than what cuBLAS achieved.
inline void expect_good(Verdict const& v, std::string const& w, DType ab) {
  EXPECT_TRUE(v.ours.passed()) << w << ": " << v.ours.describe();
  EXPECT_TRUE(v.have_cublas) << w << ": cuBLAS did not run";
  if (!v.have_cublas) return;
  double const floor = ab == DType::tf32 ? 0x1p-10 : 0.0;
  double const max_base = std::max(v.cublas.max_rel_err, floor), norm_base = std::max(v.cublas.norm_rel_err, floor);
  EXPECT_LE(v.ours.max_rel_err, 2.0 * max_base + 4 * 0x1p-24)
      << w << ": max rel err tessel " << v.ours.max_rel_err << " vs cuBLAS " << v.cublas.max_rel_err;
  EXPECT_LE(v.ours.norm_rel_err, 2.0 * norm_base + (4 + std::sqrt(double(v.k))) * 0x1p-24)
      << w << ": norm rel err tessel " << v.ours.norm_rel_err << " vs cuBLAS " << v.cublas.norm_rel_err;
}

inline std::vector<unsigned char> download(void const* p, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  EXPECT_EQ(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

}  // namespace tessel
