// tests/host/tf32_rounding_test.cpp -- fp32 -> tf32 rounding (tessel/numeric/float_bits.hpp): the
// bit rule round_to_tf32 on its edge cases. (The tf32 mainloop does not round with a Veltkamp
// split, which matched it bit for bit: it measured 0.36x cuBLAS there; docs/sm80_gemm.md.)
#include <tessel/numeric/float_bits.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using tessel::detail::bits_float;
using tessel::detail::float_bits;
using tessel::detail::round_to_tf32;

TEST(Tf32Rounding, NearestEvenAtTheThirteenthBit) {
  // tf32 keeps 10 mantissa bits: at 1 its step is 2^-10, a tie half of it.
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);                              // a tie: down to even
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-10f + 0x1p-11f), 1.0f + 0x1p-9f);         // a tie: up to even
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);        // above a tie
  EXPECT_EQ(round_to_tf32(-(1.0f + 0x1p-11f + 0x1p-20f)), -(1.0f + 0x1p-10f));
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f - 0x1p-20f), 1.0f);                   // below it
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(round_to_tf32(bits_float(0x7fffffffu))));
  EXPECT_EQ(float_bits(round_to_tf32(bits_float(0x7f7fffffu))), 0x7f800000u);  // past the largest tf32: infinity
}
