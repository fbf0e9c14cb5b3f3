// src/dist/sum_partials.cu -- the reduce-scatter's sum of the partial sums received from the other
// ranks (dist_state.hpp), before the own block's GEMM adds it as C. Memory-bound: one thread per
// element pair, fp32 sums, one rounding.
#include "dist_state.hpp"

#include <tessel/gemm/kernel/element_io.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace tessel::dist::detail {

namespace {

using kernel::from_float;
using kernel::to_float;

// Grid: x over columns, y over rows (each y-block walks rows by the grid's height).
template <class T>
__global__ void sum_partials_kernel(T const* src, std::int64_t slice_stride, int slices, int skip, std::int64_t rows,
                                    std::int64_t cols, std::int64_t ld_src, T* dst, std::int64_t ld_dst) {
  std::int64_t const j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  for (std::int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    float acc = 0.0f;
    for (int s = 0; s < slices; ++s)
      if (s != skip) acc += to_float(src[s * slice_stride + i * ld_src + j]);
    dst[i * ld_dst + j] = from_float<T>(acc);
  }
}

template <class T>
cudaError_t launch(void const* src, std::int64_t slice_stride, int slices, int skip, std::int64_t rows,
                   std::int64_t cols, std::int64_t ld_src, void* dst, std::int64_t ld_dst, cudaStream_t stream) {
  constexpr int kThreads = 256;
  dim3 const grid(unsigned((cols + kThreads - 1) / kThreads), unsigned(rows < 4096 ? rows : 4096));
  sum_partials_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<T const*>(src), slice_stride, slices, skip, rows,
                                                         cols, ld_src, static_cast<T*>(dst), ld_dst);
  return cudaGetLastError();
}

}  // namespace

cudaError_t sum_partials(DType dtype, void const* src, std::int64_t slice_stride, int slices, int skip,
                         std::int64_t rows, std::int64_t cols, std::int64_t ld_src, void* dst, std::int64_t ld_dst,
                         cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  switch (dtype) {
    case DType::bf16: return launch<__nv_bfloat16>(src, slice_stride, slices, skip, rows, cols, ld_src, dst, ld_dst, stream);
    case DType::f16: return launch<__half>(src, slice_stride, slices, skip, rows, cols, ld_src, dst, ld_dst, stream);
    default: return launch<float>(src, slice_stride, slices, skip, rows, cols, ld_src, dst, ld_dst, stream);
  }
}

}  // namespace tessel::dist::detail
