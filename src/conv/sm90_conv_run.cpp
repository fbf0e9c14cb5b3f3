// src/conv/sm90_conv_run.cpp -- which sm_90a convolution kernel runs a problem (sm90_conv_launch.hpp).
#include "sm90_conv_launch.hpp"

#include <cstdint>

namespace tessel {

namespace {

bool aligned16(void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// The 64-wide tile for fewer than 128 filters (a 128-wide box may not exceed the tensor).
bool wide(kernel::Sm80ConvParams const& p) { return p.k >= 128; }

}  // namespace

bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op != conv::Operator::kFprop || p.groups != 1) return false;
  if (dtype != DType::bf16 && dtype != DType::f16) return false;
  if (p.c < 64 || p.k < 64 || p.c % 8 != 0 || p.k % 8 != 0) return false;
  if (!aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.out) || (p.residual != nullptr && !aligned16(p.residual)))
    return false;
  for (int i = 0; i < 4; ++i)
    if (p.x_stride[i] % 8 != 0 || p.y_stride[i] % 8 != 0) return false;
  return p.w_stride_k % 8 == 0;
}

char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype) {
  if (!sm90_conv_takes(p, dtype)) return "none";
  if (dtype == DType::bf16) return wide(p) ? "sm90_conv_fprop_bf16_128x128x64" : "sm90_conv_fprop_bf16_128x64x64";
  return wide(p) ? "sm90_conv_fprop_fp16_128x128x64" : "sm90_conv_fprop_fp16_128x64x64";
}

Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, cudaStream_t stream) {
  namespace d = kernel::detail;
  if (!sm90_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 conv: the problem breaks a rule of sm90_conv_takes");
  if (dtype == DType::bf16) return wide(p) ? d::sm90_conv_fprop_launch_bf16_n128(p, stream) : d::sm90_conv_fprop_launch_bf16_n64(p, stream);
  return wide(p) ? d::sm90_conv_fprop_launch_f16_n128(p, stream) : d::sm90_conv_fprop_launch_f16_n64(p, stream);
}

}  // namespace tessel
