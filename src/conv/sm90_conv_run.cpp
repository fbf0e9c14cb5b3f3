// src/conv/sm90_conv_run.cpp -- which sm_90a convolution kernel runs a problem (sm90_conv_launch.hpp).
#include "sm90_conv_launch.hpp"

#include <tessel/runtime/tma_descriptor.hpp>

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

namespace {

// A stride-1 dgrad problem as the forward convolution that computes it: dx = dy convolved with the
// filters flipped in every spatial dimension and transposed (C and K swap), padding
// (filter - 1) * dilation - pad. The filter pointer and strides stay the filters' own (the dgrad
// kernels read them flipped and transposed); fprop problems come back unchanged.
kernel::Sm80ConvParams as_fprop(kernel::Sm80ConvParams const& p) {
  if (p.op != conv::Operator::kDgrad) return p;
  kernel::Sm80ConvParams q = p;
  q.c = p.k, q.k = p.c;
  q.d = p.z, q.h = p.p, q.w = p.q;  // the input: dy
  q.z = p.d, q.p = p.h, q.q = p.w;  // the output: dx
  q.pad_d = (p.t - 1) * p.dilation_d - p.pad_d;
  q.pad_h = (p.r - 1) * p.dilation_h - p.pad_h;
  q.pad_w = (p.s - 1) * p.dilation_w - p.pad_w;
  for (int i = 0; i < 4; ++i) q.x_stride[i] = p.y_stride[i], q.y_stride[i] = p.x_stride[i];
  q.x = p.y;
  return q;
}

// The rules of the forward kernel, on a problem in forward terms.
bool fprop_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.groups != 1) return false;
  if (dtype != DType::bf16 && dtype != DType::f16) return false;
  if (p.c < 64 || p.k < 64 || p.c % 8 != 0 || p.k % 8 != 0) return false;
  constexpr int kPacked = 1 << 14;  // the gather packs a row's input h and w into 16-bit halves
  if (p.h >= kPacked || p.w >= kPacked || p.pad_h >= kPacked || p.pad_w >= kPacked) return false;
  if (p.pad_d < 0 || p.pad_h < 0 || p.pad_w < 0) return false;
  if (!aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.out) || (p.residual != nullptr && !aligned16(p.residual)))
    return false;
  for (int i = 0; i < 4; ++i)
    if (p.x_stride[i] % 8 != 0 || p.y_stride[i] % 8 != 0) return false;
  return p.w_stride_k % 8 == 0;
}

}  // namespace

bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op == conv::Operator::kDgrad) {
    if (p.stride_d != 1 || p.stride_h != 1 || p.stride_w != 1) return false;
  } else if (p.op != conv::Operator::kFprop) {
    return false;
  }
  return fprop_takes(as_fprop(p), dtype);
}

char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype) {
  if (!sm90_conv_takes(p, dtype)) return "none";
  static char const* const names[2][2][3] = {
      {{"sm90_conv_fprop_bf16_128x256x64", "sm90_conv_fprop_bf16_128x128x64", "sm90_conv_fprop_bf16_128x64x64"},
       {"sm90_conv_fprop_fp16_128x256x64", "sm90_conv_fprop_fp16_128x128x64", "sm90_conv_fprop_fp16_128x64x64"}},
      {{"sm90_conv_dgrad_bf16_128x256x64", "sm90_conv_dgrad_bf16_128x128x64", "sm90_conv_dgrad_bf16_128x64x64"},
       {"sm90_conv_dgrad_fp16_128x256x64", "sm90_conv_dgrad_fp16_128x128x64", "sm90_conv_dgrad_fp16_128x64x64"}}};
  int const n = tile_n(as_fprop(p));
  return names[p.op == conv::Operator::kDgrad ? 1 : 0][dtype == DType::bf16 ? 0 : 1][n == 256 ? 0 : n == 128 ? 1 : 2];
}

Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, cudaStream_t stream) {
  namespace d = kernel::detail;
  if (!sm90_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 conv: the problem breaks a rule of sm90_conv_takes");
  using Launch = Status (*)(kernel::Sm80ConvParams const&, cudaStream_t);
  static Launch const launches[2][2][3] = {
      {{d::sm90_conv_fprop_launch_bf16_n256, d::sm90_conv_fprop_launch_bf16_n128, d::sm90_conv_fprop_launch_bf16_n64},
       {d::sm90_conv_fprop_launch_f16_n256, d::sm90_conv_fprop_launch_f16_n128, d::sm90_conv_fprop_launch_f16_n64}},
      {{d::sm90_conv_dgrad_launch_bf16_n256, d::sm90_conv_dgrad_launch_bf16_n128, d::sm90_conv_dgrad_launch_bf16_n64},
       {d::sm90_conv_dgrad_launch_f16_n256, d::sm90_conv_dgrad_launch_f16_n128, d::sm90_conv_dgrad_launch_f16_n64}}};
  kernel::Sm80ConvParams const q = as_fprop(p);
  int const n = tile_n(q);
  return launches[p.op == conv::Operator::kDgrad ? 1 : 0][dtype == DType::bf16 ? 0 : 1][n == 256 ? 0 : n == 128 ? 1 : 2](q, stream);
}

namespace kernel::detail {

int sm90_conv_im2col_map(Sm80ConvParams const& p, TmaDataType type, int pixels, int channels, TmaDescriptor* out) {
  bool const three_d = p.d > 1 || p.t > 1 || p.z > 1 || p.pad_d > 0;
  int const rank = three_d ? 5 : 4, spatial = rank - 2;
  int const corner_max = three_d ? 15 : 127;  // the driver's range: [-16, 15] at rank 5, [-128, 127] at rank 4
  int const pad[3] = {p.pad_w, p.pad_h, p.pad_d}, filter[3] = {p.s, p.r, p.t};
  int const dilation[3] = {p.dilation_w, p.dilation_h, p.dilation_d}, stride[3] = {p.stride_w, p.stride_h, p.stride_d};
  int const extent[3] = {p.w, p.h, p.d};
  long long const x_stride[3] = {p.x_stride[3], p.x_stride[2], p.x_stride[1]};
  int const bytes = type == TmaDataType::BFLOAT16 || type == TmaDataType::FLOAT16 ? 2 : 1;
  TmaIm2colArgs a;
  a.data_type = type;
  a.rank = std::uint32_t(rank);
  a.global_address = p.x;
  a.global_dim[0] = std::uint64_t(p.c);
  for (int i = 0; i < spatial; ++i) {
    a.lower_corner[i] = -pad[i];
    a.upper_corner[i] = pad[i] - (filter[i] - 1) * dilation[i];
    if (a.lower_corner[i] < -corner_max - 1 || a.upper_corner[i] < -corner_max - 1 || a.upper_corner[i] > corner_max) return 0;
    if (stride[i] > 8 || (filter[i] - 1) * dilation[i] > 0xffff) return 0;  // traversal strides 1..8, 16-bit offsets
    if (a.lower_corner[i] > extent[i] - 1 + a.upper_corner[i]) return 0;      // an empty bounding box
    a.global_dim[1 + i] = std::uint64_t(extent[i]);
    a.global_strides[i] = std::uint64_t(x_stride[i]) * std::uint64_t(bytes);
    a.element_strides[1 + i] = std::uint32_t(stride[i]);
  }
  a.global_dim[rank - 1] = std::uint64_t(p.n);
  a.global_strides[rank - 2] = std::uint64_t(p.x_stride[0]) * std::uint64_t(bytes);
  a.channels_per_pixel = std::uint32_t(channels);
  a.pixels_per_column = std::uint32_t(pixels);
  a.swizzle = TmaSwizzle::B128;
  return encode_tma_im2col_descriptor(a, out).ok() ? rank : 0;
}

}  // namespace kernel::detail

}  // namespace tessel
