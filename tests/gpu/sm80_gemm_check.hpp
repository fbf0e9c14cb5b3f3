// tests/gpu/sm80_gemm_check.hpp -- running an sm_80 registry entry and judging it
// (gemm_verdict.hpp: the fp64 GPU reference and cuBLAS on the same inputs, our componentwise error
// at most twice cuBLAS's plus a few fp32 units), and the NaN/Inf pattern check.
// Shared by the sm80 GEMM tests (sm80_gemm_test.cpp, sm80_skinny_gemm_test.cpp).
#pragma once

#include "gpu/gemm_verdict.hpp"

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

// Run entry `k` on g with `o`, judge it and cuBLAS against the fp64 reference.
inline Verdict run_and_check(GemmKernelInfo const& k, GemmArguments const& g, Sm80RunOptions o = {}, bool with_cublas = true) {
  Status s = sm80_gemm_run(k, g, o, nullptr);
  EXPECT_TRUE(s.ok()) << k.name << ": " << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << k.name << ": " << cudaGetErrorString(cudaGetLastError());
  return judge(g, with_cublas);
}

inline std::string what(GemmKernelInfo const& k, GemmArguments const& g, char const* layout, Sm80RunOptions o = {}) {
  return std::string(k.name) + " " + describe_problem(g, layout) +
         (o.splits > 1 ? " splits " + std::to_string(o.splits) : "") + (o.force_staging ? " staged" : "");
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
