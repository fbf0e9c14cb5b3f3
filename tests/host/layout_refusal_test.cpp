// Where CuTe returns a wrong layout without complaint, tessel refuses with run-time values
// (the static twins are in tests/compile/fail/). The cases are those of docs/layout_algebra.md.
#include <tessel/layout.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace tessel;

namespace {
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (AlgebraError const& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Refusal, CompositionAcrossModesUnevenlyIsRefused) {
  // CuTe: (8,1):(1,8), a layout of size 8 for a request of 14 elements.
  auto msg = refusal([] { return composition(make_layout(make_shape(8, 3), make_stride(1, 8)), make_layout(14, 1)); });
  EXPECT_NE(msg.find("composition"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(8,3):(1,8)"), std::string::npos) << "the message names the operands: " << msg;
  // The static twin coalesces A to _24:_1 first and is fine.
  EXPECT_EQ(to_string(composition(make_layout(make_shape(_8{}, _3{}), make_stride(_1{}, _8{})), make_layout(Int<14>{}, _1{}))), "_14:_1");
}

TEST(Refusal, CompositionWhoseModesCarryIntoEachOtherIsRefused) {
  // CuTe: ((5,1),(2,2)):((8,170),(20,170)), wrong at (3,1): 44 instead of A(11) = 174.
  auto msg = refusal([] {
    return composition(make_layout(make_shape(10, 14), make_stride(4, 170)), make_layout(make_shape(5, 4), make_stride(2, 5)));
  });
  EXPECT_FALSE(msg.empty());
}

TEST(Refusal, DivideByUnevenTileIsRefused) {
  auto a = make_layout(make_shape(make_shape(7, 10)), make_stride(make_stride(1, 14)));
  auto msg = refusal([&] { return logical_divide(a, make_layout(make_shape(_5{}, Int<14>{}), make_stride(_1{}, _5{}))); });
  EXPECT_FALSE(msg.empty());
}

TEST(Refusal, RightByCoincidenceIsAccepted) {
  // The walk is uneven at mode 0, yet (36 + 4 == 40) makes CuTe's layout right: accepted.
  auto a = make_layout(make_shape(2, 5, 2), make_stride(36, 4, 40));
  auto r = composition(a, make_layout(2, 13));
  ASSERT_EQ(size(r), 2);
  EXPECT_EQ(r(1), a(13));
}

TEST(Refusal, ZeroStridesAndExtentsAreHandled) {
  // A run-time stride 0 in B: every element maps to A(0) (CuTe divides by zero here).
  auto r = composition(make_layout(make_shape(4, 6), make_stride(1, 4)), make_layout(5, 0));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r(i), 0);
  // A run-time stride 0 in complement: the complement is all of [0, M).
  auto c = complement(make_layout(4, 0), 12);
  EXPECT_EQ(size(c), 12);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(c(i), i);
  // Extent 0 has nothing to compose.
  EXPECT_FALSE(refusal([] { return composition(make_layout(make_shape(4, 6), make_stride(1, 4)), make_layout(0, 1)); }).empty());
}
