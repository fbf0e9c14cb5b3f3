// src/conv/conv_epilogue_only.cu -- out = act(beta * residual + bias) without a sum
// (conv_epilogue_only.hpp): one thread per element of out in its packed order, fp32 arithmetic,
// rounded to the output dtype (nearest even).
#include "conv_epilogue_only.hpp"
#include "conv_output_view.hpp"

#include <tessel/conv/conv_activation.hpp>
#include <tessel/gemm/kernel/element_io.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel::detail {

namespace {

template <class T>
__global__ void conv_epilogue_only_kernel(ConvOutputView view, T* out, T const* residual, float beta, float const* bias,
                                          ConvActivation act) {
  std::int64_t const total = view.elements();
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    ConvOutputCoord const c = view.coord(idx);
    std::int64_t const off = view.offset(c);
    float v = 0.0f;
    if (beta != 0.0f) v += beta * kernel::to_float(residual[off]);  // beta = 0 reads no residual
    if (bias != nullptr) v += bias[c.ch];
    out[off] = kernel::from_float<T>(conv_activate(act, v));
  }
}

// Rows of dx ([rows][w][16-byte chunks of a pixel]): blockIdx.x a row, h = its index mod h.
__global__ void conv_zero_off_grid_kernel(uint4* dx, unsigned w, unsigned h, unsigned stride_h, unsigned stride_w,
                                          unsigned chunks_per_pixel) {
  unsigned const row_chunks = w * chunks_per_pixel;
  uint4* const row = dx + std::size_t(blockIdx.x) * row_chunks;
  bool const row_on_grid = (blockIdx.x % h) % stride_h == 0;
  uint4 const zero = make_uint4(0u, 0u, 0u, 0u);
  for (unsigned i = threadIdx.x; i < row_chunks; i += blockDim.x)
    if (!row_on_grid || (i / chunks_per_pixel) % stride_w != 0) row[i] = zero;
}

}  // namespace

bool conv_zero_off_grid_takes(ConvArguments const& a) {
  std::size_t const pixel_bytes = std::size_t(a.c) * size_of(a.dtype);
  ConvOutputExtents const e = conv_output_extents(a);
  bool const packed = a.x.stride_w == a.c && a.x.stride_h == a.w * a.c && a.x.stride_d == a.h * a.x.stride_h &&
                      a.x.stride_n == a.d * a.x.stride_d;
  return packed && pixel_bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(a.out) % 16 == 0 && a.stride_d == 1 &&
         a.h == a.stride_h * e.p && a.w == a.stride_w * e.q && a.w * pixel_bytes / 16 <= 0xffffffffu &&
         a.n * a.d * a.h <= 0x7fffffff;
}

Status conv_zero_off_grid(ConvArguments const& a, cudaStream_t stream) {
  unsigned const chunks = unsigned(std::size_t(a.c) * size_of(a.dtype) / 16);
  unsigned const rows = unsigned(a.n * a.d * a.h);
  conv_zero_off_grid_kernel<<<rows, 256, 0, stream>>>(static_cast<uint4*>(a.out), unsigned(a.w), unsigned(a.h),
                                                      unsigned(a.stride_h), unsigned(a.stride_w), chunks);
  if (cudaError_t const err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("launch of the zeros off a strided dgrad's grid: ") +
                                                     cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  return Status::success();
}

Status conv_epilogue_only(ConvArguments const& a, cudaStream_t stream) {
  ConvOutputView const view = conv_output_view(a);
  constexpr int kThreads = 256;
  unsigned const grid =
      static_cast<unsigned>(std::clamp<std::int64_t>((view.elements() + kThreads - 1) / kThreads, 1, 65535LL * 32));
  float const* bias = a.op == conv::Operator::kWgrad ? nullptr : a.bias;
  if (a.dtype == DType::bf16)
    conv_epilogue_only_kernel<<<grid, kThreads, 0, stream>>>(view, static_cast<__nv_bfloat16*>(a.out),
                                                             static_cast<__nv_bfloat16 const*>(a.residual), a.beta, bias,
                                                             a.activation);
  else
    conv_epilogue_only_kernel<<<grid, kThreads, 0, stream>>>(view, static_cast<__half*>(a.out),
                                                             static_cast<__half const*>(a.residual), a.beta, bias,
                                                             a.activation);
  if (cudaError_t const err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("launch of the convolution epilogue: ") + cudaGetErrorName(err) +
                                                     ": " + cudaGetErrorString(err));
  return Status::success();
}

}  // namespace tessel::detail
