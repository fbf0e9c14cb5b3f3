// tests/conv_sm90_pick_cases.hpp -- what the sm_90a convolution selection (src/conv/sm90_conv_run.cpp,
// pick_variant) must pick on an H100/H200, each case placed by a rule that docs/conv.md gives with
// its measurements: the host test (host/conv_sm90_pick_test.cpp) asks the selection directly, the
// GPU test (gpu/conv_test.cpp, ConvSm90.TilePicks) asks conv_kernel_name on the device.
#pragma once

#include <tessel/conv/conv_arguments.hpp>

#include <cstdint>

namespace tessel::test {

struct ConvSm90PickCase {
  conv::Operator op;
  DType dtype;
  std::int64_t n, d, h, w, c, k, t, r, s, pad, stride;
  char const* expect;  // the registry name, or "sm80_": no sm_90a kernel takes the problem
};

// 3x3 (or 3x3x3) layers, padding 1 unless noted; 2-D where d = t = 1.
inline constexpr ConvSm90PickCase kConvSm90PickCases[] = {
    // fprop and dgrad: up to 64 output channels in 256-pixel x 64-channel tiles; 128 channels in
    // 256 x 128; multiples of 256 in 128-pixel x 256-channel cluster tiles -- unless 192 x 128
    // tiles take at most nine tenths of the work per SM (rounds on 132 SMs x tile area).
    {conv::Operator::kDgrad, DType::bf16, 2, 1, 8, 8, 64, 256, 1, 3, 3, 1, 1, "sm90_conv_dgrad_bf16_256x64x64_c1"},
    // 3x3 pad 1 stride 1 at C = K = 64 on images 48 to 62 pixels wide: the halo-window fprop.
    {conv::Operator::kFprop, DType::bf16, 128, 1, 56, 56, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_halo_64x256"},
    {conv::Operator::kFprop, DType::f16, 64, 1, 62, 62, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_fprop_fp16_halo_64x256"},
    {conv::Operator::kFprop, DType::bf16, 32, 1, 48, 48, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_halo_64x256"},
    {conv::Operator::kFprop, DType::bf16, 128, 1, 47, 47, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_256x64x64_c1"},
    {conv::Operator::kFprop, DType::bf16, 128, 1, 28, 28, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_256x64x64_c1"},
    {conv::Operator::kFprop, DType::bf16, 4, 16, 56, 56, 64, 64, 3, 3, 3, 1, 1, "sm90_conv_fprop_bf16_256x64x64_c1"},
    {conv::Operator::kDgrad, DType::f16, 33, 1, 32, 32, 128, 64, 1, 3, 3, 1, 1, "sm90_conv_dgrad_fp16_256x128x64_c1"},
    {conv::Operator::kFprop, DType::bf16, 128, 1, 28, 28, 128, 128, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_256x128x64_c1"},
    // U-Net C320: three rounds of 256 x 128 against four of 192 x 128, the same work.
    {conv::Operator::kFprop, DType::bf16, 8, 1, 64, 64, 320, 320, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_256x128x64_c1"},
    {conv::Operator::kDgrad, DType::bf16, 64, 1, 28, 28, 256, 256, 1, 3, 3, 1, 1, "sm90_conv_dgrad_bf16_128x256x64_c2"},
    // 66 pixel tiles (the last partial) of two 256-channel tiles: 132 cluster tiles, two full rounds.
    {conv::Operator::kFprop, DType::f16, 75, 1, 15, 15, 64, 512, 1, 3, 3, 1, 1, "sm90_conv_fprop_fp16_128x256x64_c2"},
    // 98 cluster tiles of 128 x 256 on 66 clusters (the second round half full) or 262 of 192 x
    // 128 on 132 SMs (two full rounds); 7x7 C512: 50 cluster tiles or one full round of 132.
    {conv::Operator::kDgrad, DType::bf16, 128, 1, 14, 14, 256, 256, 1, 3, 3, 1, 1, "sm90_conv_dgrad_bf16_192x128x64_c1"},
    {conv::Operator::kFprop, DType::bf16, 128, 1, 14, 14, 256, 256, 1, 3, 3, 1, 1, "sm90_conv_fprop_bf16_192x128x64_c1"},
    {conv::Operator::kFprop, DType::f16, 128, 1, 7, 7, 512, 512, 1, 3, 3, 1, 1, "sm90_conv_fprop_fp16_192x128x64_c1"},
    // One tile of either kind: the 192-pixel one is the smaller.
    {conv::Operator::kDgrad, DType::f16, 2, 1, 8, 8, 128, 64, 1, 3, 3, 1, 1, "sm90_conv_dgrad_fp16_192x128x64_c1"},
    // A strided data gradient runs on sm_80.
    {conv::Operator::kDgrad, DType::bf16, 2, 1, 8, 8, 64, 64, 1, 3, 3, 1, 2, "sm80_"},
    // wgrad: 64 filters in 64-row tiles; more in 128-row tiles, in clusters of two 192-column
    // tiles sharing dy^T where C <= 128 and the column tiles pair up (C128: 6 of them; C64: 3).
    {conv::Operator::kWgrad, DType::bf16, 128, 1, 56, 56, 64, 64, 1, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_64x192x64_c1"},
    {conv::Operator::kWgrad, DType::bf16, 4, 16, 56, 56, 64, 64, 3, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_64x192x64_c1"},
    {conv::Operator::kWgrad, DType::bf16, 128, 1, 28, 28, 128, 128, 1, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_128x192x64_c1x2"},
    {conv::Operator::kWgrad, DType::f16, 128, 1, 28, 28, 128, 256, 1, 3, 3, 1, 1, "sm90_conv_wgrad_fp16_128x192x64_c1x2"},
    {conv::Operator::kWgrad, DType::f16, 128, 1, 28, 28, 64, 128, 1, 3, 3, 1, 1, "sm90_conv_wgrad_fp16_128x192x64_c1"},
    {conv::Operator::kWgrad, DType::bf16, 128, 1, 14, 14, 256, 256, 1, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_128x192x64_c1"},
    {conv::Operator::kWgrad, DType::bf16, 128, 1, 7, 7, 512, 512, 1, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_128x192x64_c1"},
    {conv::Operator::kWgrad, DType::bf16, 8, 1, 64, 64, 320, 320, 1, 3, 3, 1, 1, "sm90_conv_wgrad_bf16_128x192x64_c1"},
};

// The case's problem, packed, every pointer at `placeholder` (the choice reads only their
// alignment; 16 bytes suffice).
inline ConvArguments conv_sm90_pick_problem(ConvSm90PickCase const& c, void* placeholder) {
  ConvArguments a = c.d > 1 || c.t > 1
                        ? make_packed_conv3d(c.op, c.n, c.d, c.h, c.w, c.c, c.k, c.t, c.r, c.s, {c.pad, c.pad, c.pad},
                                             {c.stride, c.stride, c.stride}, {1, 1, 1}, 1, c.dtype)
                        : make_packed_conv2d(c.op, c.n, c.h, c.w, c.c, c.k, c.r, c.s, {c.pad, c.pad}, {c.stride, c.stride},
                                             {1, 1}, 1, c.dtype);
  a.x.ptr = a.filter.ptr = a.y.ptr = placeholder;
  a.out = placeholder;
  return a;
}

}  // namespace tessel::test
