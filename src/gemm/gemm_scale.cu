// src/gemm/gemm_scale.cu -- D = act(beta * C + bias), the whole GEMM when K = 0 or alpha = 0.
//
// cuBLAS semantics: A and B are not read; with beta == 0, C is not read either and D = act(bias)
// (0 without a fused epilogue; so NaN in C does not reach D).
#include "simt_instances.hpp"

#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/gemm/kernel/element_io.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

namespace {

template <class T>
__global__ void gemm_scale_kernel(std::int64_t batch, std::int64_t rows, std::int64_t cols, float beta,
                                  T const* c, std::int64_t ldc, std::int64_t stride_c, T* d, std::int64_t ldd,
                                  std::int64_t stride_d, epilogue::EpilogueFusion fusion) {
  std::int64_t const total = batch * rows * cols;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const b = i / (rows * cols), r = (i / cols) % rows, col = i % cols;
    float v = beta == 0.0f ? 0.0f : beta * to_float(c[b * stride_c + r * ldc + col]);
    if (fusion.active()) v = epilogue::fusion_apply<false>(fusion, v, r, col);  // (r, col): the canonical D's
    d[b * stride_d + r * ldd + col] = from_float<T>(v);
  }
}

template <class T>
cudaError_t scale(GemmArguments const& g, cudaStream_t stream) {
  StoredExtent const e = stored_extent(g.m, g.n, g.c_order);
  std::int64_t const total = g.batch_count * e.rows * e.cols;
  int const threads = 256;
  std::int64_t const blocks = std::min<std::int64_t>((total + threads - 1) / threads, 65535LL * 16);
  gemm_scale_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      g.batch_count, e.rows, e.cols, g.beta, static_cast<T const*>(g.c), g.ldc, g.batch_stride_c,
      static_cast<T*>(g.d), g.ldd, g.batch_stride_d, epilogue::epilogue_fusion_of(g));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gemm_scale(GemmArguments const& g, cudaStream_t stream) {
  switch (g.c_type) {
    case DType::f16: return scale<__half>(g, stream);
    case DType::bf16: return scale<__nv_bfloat16>(g, stream);
    default: return scale<float>(g, stream);
  }
}

}  // namespace tessel::kernel::detail
