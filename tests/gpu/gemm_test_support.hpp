// tests/gpu/gemm_test_support.hpp -- device buffers, operand extents and test operands shared by
// the GEMM tests.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/reference/gemm_device.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace tessel {

// A cudaMalloc'd buffer, freed on scope exit; p stays null when the allocation fails.
struct DeviceMem {
  void* p = nullptr;
  explicit DeviceMem(std::size_t bytes) {
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
  }
  ~DeviceMem() {
    if (p) cudaFree(p);
  }
  DeviceMem(DeviceMem const&) = delete;
  DeviceMem& operator=(DeviceMem const&) = delete;
};

// Elements spanned by `batch` matrices of rows x cols stored in order `o` with leading dimension
// `ld` and batch stride `stride` (at least 1, so empty problems still get a valid pointer).
inline std::size_t elems(std::int64_t batch, std::int64_t stride, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         MatrixOrder o) {
  StoredExtent e = stored_extent(rows, cols, o);
  if (batch == 0 || e.rows == 0 || e.cols == 0) return 1;
  return std::size_t((batch - 1) * stride + (e.rows - 1) * ld + e.cols);
}

// A, B, C for `g` (its sizes, orders, lds, strides) filled uniform in [lo, hi) (A and B; C in
// [-1, 1)), D poisoned with NaN; each buffer has `offset` extra elements in front (an unaligned
// pointer when offset is odd). The pointers are written into g.
struct Operands {
  std::unique_ptr<DeviceMem> a, b, c, d;
  std::size_t na = 0, nb = 0, nc = 0, nd = 0;
  explicit Operands(GemmArguments& g, std::uint64_t seed = 7, int offset = 0, float lo = -1.0f, float hi = 1.0f) {
    na = elems(g.batch_count, g.batch_stride_a, g.m, g.k, g.lda, g.a_order) + offset;
    nb = elems(g.batch_count, g.batch_stride_b, g.k, g.n, g.ldb, g.b_order) + offset;
    nc = elems(g.batch_count, g.batch_stride_c, g.m, g.n, g.ldc, g.c_order) + offset;
    nd = elems(g.batch_count, g.batch_stride_d, g.m, g.n, g.ldd, g.c_order) + offset;
    a = std::make_unique<DeviceMem>(na * size_of(g.a_type));
    b = std::make_unique<DeviceMem>(nb * size_of(g.b_type));
    c = std::make_unique<DeviceMem>(nc * size_of(g.c_type));
    d = std::make_unique<DeviceMem>(nd * size_of(g.c_type));
    EXPECT_TRUE(a->p && b->p && c->p && d->p) << "cudaMalloc failed";
    EXPECT_TRUE(reference::fill_uniform_device(a->p, g.a_type, na, seed * 3 + 1, lo, hi).ok());
    EXPECT_TRUE(reference::fill_uniform_device(b->p, g.b_type, nb, seed * 3 + 2, lo, hi).ok());
    EXPECT_TRUE(reference::fill_uniform_device(c->p, g.c_type, nc, seed * 3 + 3).ok());
    EXPECT_TRUE(reference::fill_constant_device(d->p, g.c_type, nd, NAN).ok());
    g.a = static_cast<char*>(a->p) + offset * size_of(g.a_type);
    g.b = static_cast<char*>(b->p) + offset * size_of(g.b_type);
    g.c = static_cast<char*>(c->p) + offset * size_of(g.c_type);
    g.d = static_cast<char*>(d->p) + offset * size_of(g.c_type);
  }
};

}  // namespace tessel
