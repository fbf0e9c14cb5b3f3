// src/gemm/splitk_reduce.cu -- the fix-up of a parallel split-K GEMM: D = alpha * sum of the fp32
// partial products of the K slices + beta * C, in slice order (deterministic).
//
// The slices are fp32 (rows x cols) matrices, packed: slice s of batch b at
// partials + ((s * batch + b) * rows) * cols. D and C are row-major (rows x cols) with their own
// leading dimensions and batch strides (the canonical D of the tensor-core adapters), or with
// `transposed` column-major (a skinny kernel ran the swapped problem): then consecutive threads
// take consecutive rows, so D's stores stay contiguous.
#include "sm90_instances.hpp"

#include <tessel/gemm/kernel/element_io.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

namespace {

template <class T>
__global__ void splitk_reduce_kernel(SplitKReduceParams const p) {
  std::int64_t const plane = p.rows * p.cols, total = p.batch * plane;
  T const* c = static_cast<T const*>(p.c);
  T* d = static_cast<T*>(p.d);
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const b = i / plane, in = i % plane;
    std::int64_t const r = p.transposed ? in % p.rows : in / p.cols, col = p.transposed ? in / p.rows : in % p.cols;
    float sum = 0.0f;
    for (int s = 0; s < p.splits; ++s) sum += p.partials[(std::int64_t(s) * p.batch + b) * plane + r * p.cols + col];
    float v = p.alpha * sum;
    std::int64_t const c_at = p.transposed ? col * p.ldc + r : r * p.ldc + col;
    std::int64_t const d_at = p.transposed ? col * p.ldd + r : r * p.ldd + col;
    if (p.beta != 0.0f) v += p.beta * to_float(c[b * p.batch_stride_c + c_at]);
    d[b * p.batch_stride_d + d_at] = from_float<T>(v);
  }
}

template <class T>
cudaError_t reduce(SplitKReduceParams const& p, cudaStream_t stream) {
  std::int64_t const total = p.batch * p.rows * p.cols;
  int const threads = 256;
  std::int64_t const blocks = std::min<std::int64_t>((total + threads - 1) / threads, 132LL * 16);
  splitk_reduce_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_splitk_reduce(SplitKReduceParams const& p, DType out, cudaStream_t stream) {
  switch (out) {
    case DType::f16: return reduce<__half>(p, stream);
    case DType::bf16: return reduce<__nv_bfloat16>(p, stream);
    default: return reduce<float>(p, stream);
  }
}

}  // namespace tessel::kernel::detail
