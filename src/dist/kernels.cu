// src/dist/kernels.cu -- the two small kernels of tessel::dist (dist_state.hpp), both memory-bound:
//   sum_partials  the reduce-scatter's sum of the partial sums received from the other ranks,
//                 before the own block's GEMM adds it as C: one thread per element, fp32 sums,
//                 one rounding;
//   copy_rows     the all-gather's own shard into its staging slots: 16 bytes per thread.
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

// Grid: x over the 16-byte units of a row, y over rows (each y-block walks rows by the grid's height).
__global__ void copy_rows_kernel(char const* src, std::int64_t src_pitch, char* dst, std::int64_t dst_pitch,
                                 std::int64_t rows, std::int64_t units) {
  std::int64_t const j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= units) return;
  for (std::int64_t i = blockIdx.y; i < rows; i += gridDim.y)
    reinterpret_cast<uint4*>(dst + i * dst_pitch)[j] = reinterpret_cast<uint4 const*>(src + i * src_pitch)[j];
}

}  // namespace

cudaError_t copy_rows(void const* src, std::int64_t src_pitch, void* dst, std::int64_t dst_pitch, std::int64_t rows,
                      std::int64_t row_bytes, cudaStream_t stream) {
  if (rows <= 0 || row_bytes <= 0) return cudaSuccess;
  auto const aligned = [](std::int64_t v) { return v % 16 == 0; };
  if (!aligned(reinterpret_cast<std::intptr_t>(src)) || !aligned(reinterpret_cast<std::intptr_t>(dst)) ||
      !aligned(src_pitch) || !aligned(dst_pitch) || !aligned(row_bytes))
    return cudaMemcpy2DAsync(dst, std::size_t(dst_pitch), src, std::size_t(src_pitch), std::size_t(row_bytes),
                             std::size_t(rows), cudaMemcpyDeviceToDevice, stream);
  constexpr int kThreads = 256;
  std::int64_t const units = row_bytes / 16;
  dim3 const grid(unsigned((units + kThreads - 1) / kThreads), unsigned(rows < 8192 ? rows : 8192));
  copy_rows_kernel<<<grid, kThreads, 0, stream>>>(static_cast<char const*>(src), src_pitch, static_cast<char*>(dst),
                                                  dst_pitch, rows, units);
  return cudaGetLastError();
}

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
