// tessel_calc never overflows, divides by zero, recurses without bound or runs for long: such
// inputs are refused with one AlgebraError line naming the operation.
#include "calc/expr.hpp"
#include "calc/parse.hpp"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string refusal(std::string const& e) {
  try {
    calc::evaluate(e);
  } catch (AlgebraError const& err) {
    std::string m = err.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "";
}

bool starts_with(std::string const& s, std::string const& p) { return s.rfind(p, 0) == 0; }
bool contains(std::string const& s, std::string const& p) { return s.find(p) != std::string::npos; }

}  // namespace

TEST(CalcLimits, OverflowIsRefused) {
  std::string m = refusal("size((4294967296,4294967296,4))");
  EXPECT_TRUE(starts_with(m, "size: integer overflow")) << m;
  m = refusal("cosize((4294967296,4294967296):(4294967296,4294967296))");
  EXPECT_TRUE(starts_with(m, "cosize: integer overflow")) << m;
  m = refusal("eval(8:9223372036854775807, 7)");
  EXPECT_TRUE(starts_with(m, "eval: integer overflow")) << m;
  m = refusal("logical_product((4611686018427387904):(1), 4:1)");
  EXPECT_TRUE(starts_with(m, "logical_product: integer overflow")) << m;
  m = refusal("complement(3:3074457345618258602, 9223372036854775807)");
  EXPECT_TRUE(contains(m, "overflow")) << m;
  // Large but representable values are fine.
  EXPECT_EQ(calc::to_string(calc::evaluate("size((4294967296,2147483647))")), "9223372032559808512");
  EXPECT_EQ(calc::to_string(calc::evaluate("composition(9223372036854775807:1, 4:2)")), "4:2");
}

TEST(CalcLimits, DegenerateInputsAreRefused) {
  EXPECT_TRUE(starts_with(refusal("composition((0,2):(1,1), 2:1)"), "composition: every extent must be >= 1")) << refusal("composition((0,2):(1,1), 2:1)");
  EXPECT_TRUE(starts_with(refusal("complement(4:1, 0)"), "complement: the cotarget's extents must be >= 1"));
  EXPECT_TRUE(starts_with(refusal("logical_divide(8:1, 0)"), "logical_divide: a tile extent must be >= 1"));
  EXPECT_TRUE(starts_with(refusal("eval((0,2):(1,1), 3)"), "eval: division by zero"));
  EXPECT_TRUE(starts_with(refusal("eval(8:1, -1)"), "eval: the index -1 into 8:1 is negative"));
  EXPECT_TRUE(starts_with(refusal("swizzle(Sw<3,3,2>, 1)"), "swizzle: Sw<3,3,2>: |S| must be >= B"));
  EXPECT_TRUE(starts_with(refusal("swizzle(Sw<20,30,20>, 1)"), "swizzle: Sw<20,30,20>: B + M + |S| must be <= 62"));
  EXPECT_TRUE(starts_with(refusal("composition((4,2):(1,4), (2,2,2))"), "composition: the by-mode tiler (2,2,2) has more modes (3)"));
  EXPECT_TRUE(starts_with(refusal("get((4,2):(1,4), 2)"), "get: mode 2 of (4,2) does not exist"));
  EXPECT_TRUE(starts_with(refusal("composition(4, 2)"), "composition: argument 1 must be a layout"));
  EXPECT_TRUE(starts_with(refusal("size()"), "size: expects 1 argument, got 0"));
  EXPECT_TRUE(starts_with(refusal("zipped_divide((8,8):(1,8), (_,2))"), "zipped_divide: the tiler element `_` keeps the mode 8"));
}

TEST(CalcLimits, HugePointwiseChecksAreRefusedQuickly) {
  // The even-walk test fails and B has 2^40 points: the point-by-point check is not attempted.
  std::string m = refusal("composition((3,1099511627776):(1,4), 1099511627776:2)");
  EXPECT_TRUE(starts_with(m, "composition: 1099511627776:2 walks across the modes of")) << m;
  EXPECT_TRUE(contains(m, "limit")) << m;
  // Even walks of huge layouts need no point-by-point check.
  EXPECT_EQ(calc::to_string(calc::evaluate("composition((1048576,1048576):(1,2097152), (1024,1048576):(1,1024))")),
            "(1024,(1024,1024)):(1,(1024,2097152))");
}

TEST(CalcLimits, ResultsStayWithinTheSizeLimits) {
  // Each product multiplies the number of modes; the result limit stops a blow-up.
  std::string e = "(2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128)";
  for (int i = 0; i < 30; ++i) e = "logical_product(" + e + ", (2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128))";
  std::string m = refusal(e);
  EXPECT_FALSE(m.empty());
}
