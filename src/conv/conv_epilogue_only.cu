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

}  // namespace

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
