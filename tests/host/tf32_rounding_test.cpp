// tests/host/tf32_rounding_test.cpp -- fp32 -> tf32 rounding (tessel/numeric/float_bits.hpp): the
// bit rule round_to_tf32 on its edge cases, and Veltkamp's split round_to_tf32_split against it
// over every 61st bit pattern of the floats.
#include <tessel/numeric/float_bits.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

using tessel::detail::bits_float;
using tessel::detail::float_bits;
using tessel::detail::round_to_tf32;
using tessel::detail::round_to_tf32_split;

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

TEST(Tf32Rounding, SplitMatchesTheBitRuleOnNormalsBelowTwoToThe114) {
  long long checked = 0, mismatched = 0;
  std::uint32_t first = 0;
  for (std::uint64_t u = 0; u <= 0xffffffffu; u += 61) {
    float const x = bits_float(std::uint32_t(u));
    float const a = std::fabs(x);
    if (!(a >= std::numeric_limits<float>::min() && a < 0x1p114f)) continue;
    ++checked;
    if (float_bits(round_to_tf32_split(x)) != float_bits(round_to_tf32(x)) && mismatched++ == 0) first = std::uint32_t(u);
  }
  EXPECT_GT(checked, 40'000'000);
  EXPECT_EQ(mismatched, 0) << "first at 0x" << std::hex << first;
  // Ties both ways, and the largest value it rounds.
  EXPECT_EQ(round_to_tf32_split(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(round_to_tf32_split(1.0f + 0x1p-10f + 0x1p-11f), 1.0f + 0x1p-9f);
  float const below = std::nextafter(0x1p114f, 0.0f);
  EXPECT_EQ(float_bits(round_to_tf32_split(below)), float_bits(round_to_tf32(below)));
}

TEST(Tf32Rounding, SplitLeavesHugeInfiniteAndNanInputsToTheConsumer) {
  float const inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(round_to_tf32_split(inf), inf);
  EXPECT_EQ(round_to_tf32_split(-inf), -inf);
  EXPECT_EQ(round_to_tf32_split(0x1p114f + 0x1p100f), 0x1p114f + 0x1p100f);  // kept: truncated later
  EXPECT_EQ(round_to_tf32_split(std::numeric_limits<float>::max()), std::numeric_limits<float>::max());
  EXPECT_TRUE(std::isnan(round_to_tf32_split(bits_float(0x7fffffffu))));
  EXPECT_TRUE(std::isnan(round_to_tf32_split(bits_float(0xffffffffu))));
  EXPECT_TRUE(std::isnan(round_to_tf32_split(bits_float(0x7fc00000u))));
  EXPECT_EQ(round_to_tf32_split(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(round_to_tf32_split(-0.0f)));
}
