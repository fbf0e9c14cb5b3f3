// tests/gpu/sm80_gemm_check.hpp -- running an sm_80 registry entry and judging it: the fp64 GPU
// reference and cuBLAS on the same inputs (our componentwise error may not exceed twice cuBLAS's,
// plus a few fp32 units), random operands with a poisoned D, and the NaN/Inf pattern check.
// Shared by the sm80 GEMM tests (sm80_gemm_test.cu, sm80_skinny_gemm_test.cu).
#pragma once

#include "gpu/gemm_test_support.hpp"

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/numeric.hpp>

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tessel::sm80_check {

inline GemmKernelInfo const& entry(char const* name) {
  for (GemmKernelInfo const& k : sm80_gemm_kernels())
    if (std::string(k.name) == name) return k;
  ADD_FAILURE() << "no sm80 entry " << name;
  return sm80_gemm_kernels()[0];
}

inline GemmArguments problem(std::int64_t m, std::int64_t n, std::int64_t k, char const* layout, MatrixOrder co, DType ab,
                      DType cd, std::int64_t batch = 1) {
  MatrixOrder const ao = layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  GemmArguments g = make_packed_gemm(m, n, k, batch, ab, cd, ao, bo, co);
  g.alpha = 1.25f, g.beta = -0.5f;
  return g;
}

// A, B, C filled uniform(-1,1), D poisoned, each with `offset` extra elements in front (an
// unaligned pointer when offset is odd).
struct Operands {
  std::unique_ptr<DeviceMem> a, b, c, d;
  std::size_t nd = 0;
  Operands(GemmArguments& g, std::uint64_t seed, int offset = 0) {
    std::size_t const na = elems(g.batch_count, g.batch_stride_a, g.m, g.k, g.lda, g.a_order) + offset;
    std::size_t const nb = elems(g.batch_count, g.batch_stride_b, g.k, g.n, g.ldb, g.b_order) + offset;
    std::size_t const nc = elems(g.batch_count, g.batch_stride_c, g.m, g.n, g.ldc, g.c_order) + offset;
    nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order) + offset;
    a = std::make_unique<DeviceMem>(na * size_of(g.a_type));
    b = std::make_unique<DeviceMem>(nb * size_of(g.b_type));
    c = std::make_unique<DeviceMem>(nc * size_of(g.c_type));
    d = std::make_unique<DeviceMem>(nd * size_of(g.c_type));
    EXPECT_TRUE(a->p && b->p && c->p && d->p) << "cudaMalloc failed";
    EXPECT_TRUE(reference::fill_uniform_device(a->p, g.a_type, na, seed * 3 + 1).ok());
    EXPECT_TRUE(reference::fill_uniform_device(b->p, g.b_type, nb, seed * 3 + 2).ok());
    EXPECT_TRUE(reference::fill_uniform_device(c->p, g.c_type, nc, seed * 3 + 3).ok());
    EXPECT_TRUE(reference::fill_constant_device(d->p, g.c_type, nd, NAN).ok());
    g.a = static_cast<char*>(a->p) + offset * size_of(g.a_type);
    g.b = static_cast<char*>(b->p) + offset * size_of(g.b_type);
    g.c = static_cast<char*>(c->p) + offset * size_of(g.c_type);
    g.d = static_cast<char*>(d->p) + offset * size_of(g.c_type);
  }
};

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
};

// Run entry `k` on g with `o`, judge it and cuBLAS against the fp64 reference.
inline Verdict run_and_check(GemmKernelInfo const& k, GemmArguments const& g, Sm80RunOptions o = {}, bool with_cublas = true) {
  Verdict v;
  Status s = sm80_gemm_run(k, g, o, nullptr);
  EXPECT_TRUE(s.ok()) << k.name << ": " << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << k.name << ": " << cudaGetErrorString(cudaGetLastError());
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

inline std::string what(GemmKernelInfo const& k, GemmArguments const& g, char const* layout, Sm80RunOptions o = {}) {
  return std::string(k.name) + " " + std::to_string(g.batch_count) + "x" + std::to_string(g.m) + "x" +
         std::to_string(g.n) + "x" + std::to_string(g.k) + " " + layout + " D " +
         (g.c_order == MatrixOrder::row_major ? "row" : "col") + " -> " + to_string(g.c_type) +
         (o.splits > 1 ? " splits " + std::to_string(o.splits) : "") + (o.force_staging ? " staged" : "");
}

// Passes the fp64 judge, and the error is at most twice cuBLAS's (plus a few fp32 units). For tf32,
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
  EXPECT_LE(v.ours.norm_rel_err, 2.0 * norm_base + 4 * 0x1p-24)
      << w << ": norm rel err tessel " << v.ours.norm_rel_err << " vs cuBLAS " << v.cublas.norm_rel_err;
}

inline std::vector<unsigned char> download(void const* p, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  EXPECT_EQ(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// g: a "tn" problem (A row-major, B column-major) with beta = 0, M > 3, N > 7, K > 9, its
// operands filled (Operands) and nd elements of D. Puts NaN at A(3, 5) (row 3 of D becomes NaN)
// and +inf at B(9, 7) (column 7 becomes +-inf), runs entry k and expects the fp64 judge to pass
// and D to be non-finite exactly where cuBLAS's is, with the same values.
inline void expect_nonfinite_like_cublas(GemmKernelInfo const& k, GemmArguments const& g, std::size_t nd) {
  // A(3, 5) = NaN (row 3 of D becomes NaN), B(9, 7) = +inf (column 7 becomes +-inf).
  auto put = [&](void const* base, std::int64_t index, float value) {
    std::size_t const sz = size_of(g.a_type);
    unsigned char bytes[4];
    if (g.a_type == DType::bf16) {
      std::uint16_t v = reference::float_to_bf16(value);
      std::memcpy(bytes, &v, 2);
    } else if (g.a_type == DType::f16) {
      std::uint16_t v = reference::float_to_f16(value);
      std::memcpy(bytes, &v, 2);
    } else {
      std::memcpy(bytes, &value, 4);
    }
    ASSERT_EQ(cudaMemcpy(static_cast<char*>(const_cast<void*>(base)) + index * sz, bytes, sz, cudaMemcpyHostToDevice),
              cudaSuccess);
  };
  put(g.a, 3 * g.lda + 5, NAN);        // A row-major (M,K)
  put(g.b, 7 * g.ldb + 9, INFINITY);   // B column-major (K,N)
  Verdict v = run_and_check(k, g);
  EXPECT_TRUE(v.ours.passed()) << k.name << ": " << v.ours.describe();
  EXPECT_TRUE(v.have_cublas && v.cublas.passed()) << "cuBLAS: " << v.cublas.describe();
  // The same non-finite pattern as cuBLAS, element by element.
  std::size_t const bytes = nd * size_of(g.c_type);
  DeviceMem dc(bytes);
  ASSERT_TRUE(run_cublas(g, dc.p));
  auto const ours = download(g.d, bytes), theirs = download(dc.p, bytes);
  auto value = [&](std::vector<unsigned char> const& h, std::size_t i) {
    if (g.c_type == DType::f32) {
      float f;
      std::memcpy(&f, &h[4 * i], 4);
      return f;
    }
    std::uint16_t u;
    std::memcpy(&u, &h[2 * i], 2);
    return g.c_type == DType::bf16 ? reference::bf16_to_float(u) : reference::f16_to_float(u);
  };
  int nonfinite = 0;
  for (std::size_t i = 0; i < nd; ++i) {
    float const x = value(ours, i), y = value(theirs, i);
    if (std::isfinite(y)) continue;
    ++nonfinite;
    EXPECT_TRUE(std::isnan(x) == std::isnan(y) && (std::isnan(y) || x == y)) << k.name << " element " << i << ": " << x
                                                                              << " where cuBLAS has " << y;
  }
  EXPECT_EQ(nonfinite, int(g.m + g.n - 1)) << "row 3 NaN, column 7 infinite";
}

}  // namespace tessel::sm80_check
