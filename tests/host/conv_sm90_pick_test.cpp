// tests/host/conv_sm90_pick_test.cpp -- the sm_90a convolution kernels the selection picks, without a
// GPU: each case of tests/conv_sm90_pick_cases.hpp through the selection's own entry points
// (src/conv/sm90_conv_launch.hpp), which conv_kernel_name reaches on an H100/H200 (the GPU test
// asks it there).
#include "conv_sm90_pick_cases.hpp"

#include "../../src/conv/conv_params.hpp"
#include "../../src/conv/sm90_conv_launch.hpp"

#include <tessel/conv/conv_validate.hpp>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

using namespace tessel;

TEST(ConvSm90Pick, MeasuredLayers) {
  alignas(16) static unsigned char placeholder[16];
  for (test::ConvSm90PickCase const& c : test::kConvSm90PickCases) {
    ConvArguments const a = test::conv_sm90_pick_problem(c, placeholder);
    SCOPED_TRACE(std::string(conv::to_string(c.op)) + " n" + std::to_string(c.n) + " " + std::to_string(c.h) + "x" +
                 std::to_string(c.w) + " c" + std::to_string(c.c) + " k" + std::to_string(c.k) + " " + to_string(c.dtype));
    Status const valid = conv_validate(a);
    ASSERT_TRUE(valid.ok()) << valid.reason;
    kernel::Sm80ConvParams const p = detail::make_params(a);
    if (std::string(c.expect) == "sm80_") {
      EXPECT_FALSE(sm90_conv_takes(p, c.dtype));
      continue;
    }
    ASSERT_TRUE(sm90_conv_takes(p, c.dtype));
    EXPECT_EQ(std::string(sm90_conv_kernel_name(p, c.dtype)), c.expect);
  }
}

// The halo-window fprop (sm90_conv_fprop_<dtype>_halo_64x256) is listed among the kernels a caller
// may name exactly where its rules hold (3x3, pad 1, stride 1, C = K = 64, at most 62 pixels wide,
// 16-byte aligned, with or without the fused terms), and the selection picks it exactly where it
// is listed, without the fused terms, and the image is at least 48 pixels wide.
TEST(ConvSm90Pick, HaloWindowListedWhereItTakes) {
  alignas(16) static unsigned char placeholder[32];
  struct Case {
    char const* what;
    ConvArguments a;
    bool listed;
  };
  auto conv = [&](conv::Operator op, DType t, std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t r,
                  std::array<std::int64_t, 2> pad, std::array<std::int64_t, 2> stride) {
    ConvArguments a = make_packed_conv2d(op, 4, 20, w, c, k, r, r, pad, stride, {1, 1}, 1, t);
    a.x.ptr = a.filter.ptr = a.y.ptr = placeholder;
    a.out = placeholder;
    return a;
  };
  using conv::Operator;
  std::vector<Case> cases;
  for (DType t : {DType::bf16, DType::f16}) {
    cases.push_back({"56 wide", conv(Operator::kFprop, t, 56, 64, 64, 3, {1, 1}, {1, 1}), true});
    cases.push_back({"62 wide", conv(Operator::kFprop, t, 62, 64, 64, 3, {1, 1}, {1, 1}), true});
    cases.push_back({"1 wide", conv(Operator::kFprop, t, 1, 64, 64, 3, {1, 1}, {1, 1}), true});
    cases.push_back({"63 wide", conv(Operator::kFprop, t, 63, 64, 64, 3, {1, 1}, {1, 1}), false});
    cases.push_back({"K 72", conv(Operator::kFprop, t, 56, 64, 72, 3, {1, 1}, {1, 1}), false});
    cases.push_back({"C 128", conv(Operator::kFprop, t, 56, 128, 64, 3, {1, 1}, {1, 1}), false});
    cases.push_back({"stride 2", conv(Operator::kFprop, t, 56, 64, 64, 3, {1, 1}, {2, 2}), false});
    cases.push_back({"pad 0", conv(Operator::kFprop, t, 56, 64, 64, 3, {0, 0}, {1, 1}), false});
    cases.push_back({"5x5", conv(Operator::kFprop, t, 56, 64, 64, 5, {2, 2}, {1, 1}), false});
    cases.push_back({"dgrad", conv(Operator::kDgrad, t, 56, 64, 64, 3, {1, 1}, {1, 1}), false});
    ConvArguments padded = conv(Operator::kFprop, t, 30, 64, 64, 3, {1, 1}, {1, 1});
    padded.x.stride_w = 72, padded.x.stride_h = 72 * 30, padded.x.stride_n = 72 * 30 * 20;
    cases.push_back({"x pixels 72 apart", padded, true});
    ConvArguments odd = padded;
    odd.x.stride_w = 68, odd.x.stride_h = 68 * 30, odd.x.stride_n = 68 * 30 * 20;
    cases.push_back({"x pixels 68 apart (not 16-byte aligned)", odd, false});
    ConvArguments shifted = conv(Operator::kFprop, t, 56, 64, 64, 3, {1, 1}, {1, 1});
    shifted.x.ptr = placeholder + 2;
    cases.push_back({"x off 16-byte alignment", shifted, false});
    ConvArguments tall = conv(Operator::kFprop, t, 56, 64, 64, 3, {1, 1}, {1, 1});
    tall.y.stride_h = std::int64_t(1) << 27, tall.y.stride_n = std::int64_t(1) << 32;
    cases.push_back({"y's image past 2^31 elements (rows 2^27 apart)", tall, false});
    ConvArguments scaled = conv(Operator::kFprop, t, 56, 64, 64, 3, {1, 1}, {1, 1});
    scaled.alpha = 0.5f;
    cases.push_back({"alpha", scaled, true});
    ConvArguments residual = scaled;
    residual.beta = 1.0f, residual.residual = placeholder;
    cases.push_back({"a residual", residual, true});
    ConvArguments shifted_residual = residual;
    shifted_residual.residual = placeholder + 2;
    cases.push_back({"a residual off 16-byte alignment", shifted_residual, false});
    ConvArguments bias = scaled;
    bias.bias = reinterpret_cast<float const*>(placeholder);
    cases.push_back({"a bias", bias, true});
    ConvArguments act = scaled;
    act.activation = ConvActivation::silu;
    cases.push_back({"an activation", act, true});
  }
  for (Case const& c : cases) {
    SCOPED_TRACE(std::string(c.what) + " " + to_string(c.a.dtype));
    Status const valid = conv_validate(c.a);
    ASSERT_TRUE(valid.ok()) << valid.reason;
    kernel::Sm80ConvParams const p = detail::make_params(c.a);
    std::string const halo = std::string("sm90_conv_fprop_") + (c.a.dtype == DType::bf16 ? "bf16" : "fp16") + "_halo_64x256";
    bool listed = false;
    if (sm90_conv_takes(p, c.a.dtype))
      for (char const* n : sm90_conv_kernel_names(p, c.a.dtype)) listed = listed || halo == n;
    EXPECT_EQ(listed, c.listed);
    if (sm90_conv_takes(p, c.a.dtype)) {
      bool const fused = p.residual != nullptr || p.bias != nullptr || p.activation != kernel::ConvActivation::none;
      EXPECT_EQ(std::string(sm90_conv_kernel_name(p, c.a.dtype)) == halo, c.listed && !fused && p.w >= 48);
    }
  }
}
