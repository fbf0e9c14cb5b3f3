// tests/gpu/gemm_test_support.hpp -- device buffers and operand extents shared by the GEMM tests.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

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

}  // namespace tessel
