// tests/host/conv_sm90_pick_test.cpp -- the sm_90a convolution kernels the selection picks, without a
// GPU: each case of tests/conv_sm90_pick_cases.hpp through the selection's own entry points
// (src/conv/sm90_conv_launch.hpp), which conv_kernel_name reaches on an H100/H200 (the GPU test
// asks it there).
#include "conv_sm90_pick_cases.hpp"

#include "../../src/conv/conv_params.hpp"
#include "../../src/conv/sm90_conv_launch.hpp"

#include <tessel/conv/conv_validate.hpp>

#include <gtest/gtest.h>

#include <string>

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
