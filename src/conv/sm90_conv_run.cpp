// src/conv/sm90_conv_run.cpp -- which sm_90a convolution kernel runs a problem (sm90_conv_launch.hpp).
#include "sm90_conv_launch.hpp"

#include <cstdint>

namespace tessel {

namespace {

bool aligned16(void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// The tile width: the widest that the filters fill (a box may not exceed the tensor) and whose grid
// still gives every SM of an H100/H200-sized GPU (132) two tiles; a wider tile gathers each
// activation tile once for more filters.
int tile_n(kernel::Sm80ConvParams const& p) {
  constexpr long long kTwoWaves = 2 * 132;
  long long const m_tiles = (static_cast<long long>(p.n) * p.z * p.p * p.q + 127) / 128;
  if (p.k >= 256 && m_tiles * ((p.k + 255) / 256) >= kTwoWaves) return 256;
  return p.k >= 128 ? 128 : 64;
}

}  // namespace

bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op != conv::Operator::kFprop || p.groups != 1) return false;
  if (dtype != DType::bf16 && dtype != DType::f16) return false;
  if (p.c < 64 || p.k < 64 || p.c % 8 != 0 || p.k % 8 != 0) return false;
  constexpr int kPacked = 1 << 14;  // a row's input h and w share a register as 16-bit halves
  if (p.h >= kPacked || p.w >= kPacked || p.pad_h >= kPacked || p.pad_w >= kPacked) return false;
  if (!aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.out) || (p.residual != nullptr && !aligned16(p.residual)))
    return false;
  for (int i = 0; i < 4; ++i)
    if (p.x_stride[i] % 8 != 0 || p.y_stride[i] % 8 != 0) return false;
  return p.w_stride_k % 8 == 0;
}

char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype) {
  if (!sm90_conv_takes(p, dtype)) return "none";
  static char const* const names[2][3] = {
      {"sm90_conv_fprop_bf16_128x256x64", "sm90_conv_fprop_bf16_128x128x64", "sm90_conv_fprop_bf16_128x64x64"},
      {"sm90_conv_fprop_fp16_128x256x64", "sm90_conv_fprop_fp16_128x128x64", "sm90_conv_fprop_fp16_128x64x64"}};
  int const n = tile_n(p);
  return names[dtype == DType::bf16 ? 0 : 1][n == 256 ? 0 : n == 128 ? 1 : 2];
}

Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, cudaStream_t stream) {
  namespace d = kernel::detail;
  if (!sm90_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 conv: the problem breaks a rule of sm90_conv_takes");
  using Launch = Status (*)(kernel::Sm80ConvParams const&, cudaStream_t);
  static Launch const launches[2][3] = {
      {d::sm90_conv_fprop_launch_bf16_n256, d::sm90_conv_fprop_launch_bf16_n128, d::sm90_conv_fprop_launch_bf16_n64},
      {d::sm90_conv_fprop_launch_f16_n256, d::sm90_conv_fprop_launch_f16_n128, d::sm90_conv_fprop_launch_f16_n64}};
  int const n = tile_n(p);
  return launches[dtype == DType::bf16 ? 0 : 1][n == 256 ? 0 : n == 128 ? 1 : 2](p, stream);
}

}  // namespace tessel
