// tessel_calc's notation and expressions: every printed form parses back to itself, expressions
// evaluate, and malformed input gives one ParseError that names what was expected and the column.
#include "calc/expr.hpp"
#include "calc/parse.hpp"
#include "oracle/oracle_cases.hpp"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

std::string eval_text(std::string const& e) { return calc::to_string(calc::evaluate(e)); }

// The message of the ParseError that `text` raises ("" if none).
std::string parse_error(std::string const& text) {
  try {
    calc::evaluate(text);
  } catch (calc::ParseError const& e) {
    return e.what();
  } catch (std::exception const& e) {
    return std::string("not a ParseError: ") + e.what();
  }
  return "";
}

}  // namespace

TEST(CalcParse, NotationRoundTrips) {
  for (char const* s : {"8", "_8", "_-4", "-4", "_", "()", "(8)", "((2))", "(_2,(3,_))", "8:_1", "(8):(_1)",
                        "((_2,_4)):((_1,_2))", "(_3:_4,_8:_2)", "(2:1,_8)", "(_,_1)", "Sw<3,3,3>", "Sw<2,4,-3>",
                        "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)", "Sw<1,4,4> o 7 o (16,8):(8,1)", "():()",
                        "(((_2,_4)),((1,2),_3)):(((_1,_2)),((_0,-1),_9))"}) {
    EXPECT_EQ(calc::to_string(calc::parse_literal(s)), s);
  }
}

TEST(CalcParse, EveryOracleFieldRoundTrips) {
  auto cases = oracle::load_cases(TESSEL_SOURCE_DIR "/tests/oracle/data/cases_public.txt");
  for (auto const& c : cases) {
    for (auto const& f : c.args) EXPECT_EQ(calc::to_string(calc::parse_literal(f)), f) << "line " << c.line;
    EXPECT_EQ(calc::to_string(calc::parse_literal(c.result)), c.result) << "line " << c.line;
  }
}

TEST(CalcParse, StaticFlagsAreKeptPerLeaf) {
  auto v = calc::parse_literal("(_4,3):(1,_0)");
  auto const& l = std::get<calc::Layout>(v);
  EXPECT_TRUE(l.shape.elems[0].value.is_static);
  EXPECT_FALSE(l.shape.elems[1].value.is_static);
  EXPECT_FALSE(l.stride.elems[0].value.is_static);
  EXPECT_TRUE(l.stride.elems[1].value.is_static);
  // A rank-1 tuple is not a bare integer.
  EXPECT_NE(calc::parse_literal("(8):(_1)"), calc::parse_literal("8:_1"));
}

TEST(CalcParse, ExpressionsEvaluate) {
  EXPECT_EQ(eval_text("composition((4,2):(1,4), (2,2):(2,1))"), "(2,2):(2,1)");
  EXPECT_EQ(eval_text("composition( (_6,_2):(_8,_2) , (_4,_3):(_3,_1) )"), "((_2,_2),_3):((_24,_2),_8)");
  EXPECT_EQ(eval_text("complement(4:2, 24)"), "(2,3):(_1,8)");
  EXPECT_EQ(eval_text("complement(_4:_2, _24)"), "(_2,_3):(_1,_8)");
  EXPECT_EQ(eval_text("logical_divide((_4,_2,_3):(_2,_1,_8), _4:_2)"), "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))");
  EXPECT_EQ(eval_text("size((_4,_4,(_2,_2)):(_96,_6,(_1,_48)))"), "_64");
  EXPECT_EQ(eval_text("size((3,_2):(_1,_3))"), "6");
  EXPECT_EQ(eval_text("cosize((8,4):(16,4))"), "125");
  EXPECT_EQ(eval_text("rank((4,(2,3)):(1,(4,8)))"), "_2");
  EXPECT_EQ(eval_text("depth((4,(2,3)):(1,(4,8)))"), "_2");
  EXPECT_EQ(eval_text("shape((4,(2,3)):(1,(4,8)))"), "(4,(2,3))");
  EXPECT_EQ(eval_text("get((4,(2,3)):(1,(4,8)), 1, 0)"), "2:4");
  EXPECT_EQ(eval_text("flatten((4,(2,3)):(1,(4,8)))"), "(4,2,3):(1,4,8)");
  EXPECT_EQ(eval_text("coalesce((_2,(_1,_6)):(_1,(_6,_2)))"), "_12:_1");
  EXPECT_EQ(eval_text("coalesce((2,(1,6)):(1,(6,2)))"), "12:1");
  EXPECT_EQ(eval_text("coalesce((_2,_3,(_2,_2)):(_1,_2,(_6,_12)), (_1,_1,_1))"), "(_2,_3,_4):(_1,_2,_6)");
  EXPECT_EQ(eval_text("filter((_4,_2):(_0,_1))"), "_2:_1");
  EXPECT_EQ(eval_text("make_layout((4,2))"), "(4,2):(_1,4)");
  EXPECT_EQ(eval_text("make_layout((4,2), GenRowMajor)"), "(4,2):(2,_1)");
  EXPECT_EQ(eval_text("make_layout((_4,_2), (_1,_8))"), "(_4,_2):(_1,_8)");
  EXPECT_EQ(eval_text("make_layout(4:1, 2:8)"), "(4,2):(1,8)");
  EXPECT_EQ(eval_text("make_layout((8))"), "(8):(_1)");
  EXPECT_EQ(eval_text("swizzle(Sw<3,3,3>, 100)"), "108");
  EXPECT_EQ(eval_text("Sw<3,3,3>(_122)"), "_114");
  EXPECT_EQ(eval_text("composition(Sw<3,3,3>, (_8,_64):(_64,_1))"), "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)");
  EXPECT_EQ(eval_text("(Sw<3,3,3> o _0 o (_8,_64):(_64,_1))(72)"), "9");
  EXPECT_EQ(eval_text("composition(Sw<3,3,3> o _0 o (_8,_64):(_64,_1), (_4,_8))"), "Sw<3,3,3> o _0 o (_4,_8):(_64,_1)");
  EXPECT_EQ(eval_text("(4,(2,3)):(2,(1,8))(9)"), "10");  // index 9 is (1,(0,1))
  EXPECT_EQ(eval_text("(4,(2,3)):(2,(1,8))(1,(0,1))"), "10");
  EXPECT_EQ(eval_text("eval((4,(2,3)):(2,(1,8)), 1, (0,2))"), "18");
  EXPECT_EQ(eval_text("((2,2):(_1,2))"), "((2,2):(_1,2))");  // a rank-1 tiler, not a grouping
  EXPECT_EQ(eval_text("eval((4,2):(2,1), 5)"), "3");
  EXPECT_EQ(eval_text("((4,2):(2,1))(_,1)"), "(4):(2)");
  EXPECT_EQ(eval_text("right_inverse((_4,_2):(_2,_1))"), "(_2,_4):(_4,_1)");
  EXPECT_EQ(eval_text("left_inverse((4,2):(2,1))"), "(2,4):(4,_1)");
  EXPECT_EQ(eval_text("blocked_product((_2,_5):(_5,_1), (_3,_4):(_1,_3))"), "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))");
  EXPECT_EQ(eval_text("raked_product((_2,_5):(_5,_1), (_3,_4):(_1,_3))"), "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))");
  EXPECT_EQ(eval_text("tiled_divide((_9,(_4,_8)):(_59,(_13,_1)), (_3:_3,(_2,_4):(_1,_8)))"),
            "((_3,(_2,_4)),_3,(_2,_2)):((_177,(_13,_2)),_59,(_26,_1))");
  // Swizzled layouts divide and slice their inner layout (layout/composed_divide.hpp).
  EXPECT_EQ(eval_text("zipped_divide(Sw<3,3,3> o _0 o (_8,_64):(_64,_1), (_8,_8))"),
            "Sw<3,3,3> o _0 o ((_8,_8),(_1,_8)):((_64,_1),(_0,_8))");
  EXPECT_EQ(eval_text("(Sw<3,3,3> o _0 o (_8,_64):(_64,_1))(2,_)"), "Sw<3,3,3> o 128 o (_64):(_1)");
  EXPECT_EQ(eval_text("(Sw<3,3,3> o _0 o (_8,_64):(_64,_1))(_2,_)"), "Sw<3,3,3> o _128 o (_64):(_1)");
  // Nested calls.
  EXPECT_EQ(eval_text("size(logical_divide((_4,_2,_3):(_2,_1,_8), _4:_2))"), "_24");
}

TEST(CalcParse, RunTimeLayoutsSimplifyLikeTheirStaticTwins) {
  // CuTe keeps (x,1) modes with run-time ints; the calculator decides on values.
  EXPECT_EQ(eval_text("composition((10,2):(16,4), (5,4):(1,5))"), "(5,(2,2)):(16,(80,4))");
  EXPECT_EQ(eval_text("composition((_10,_2):(_16,_4), (_5,_4):(_1,_5))"), "(_5,(_2,_2)):(_16,(_80,_4))");
  EXPECT_EQ(eval_text("complement(4:1, 24)"), "6:4");
  EXPECT_EQ(eval_text("right_inverse((4,2):(2,1))"), "(2,4):(4,_1)");  // _1: a constant of the construction
  // CuTe's run-time path returns (8,1):(1,8) here, a layout of size 8.
  EXPECT_EQ(eval_text("composition((8,3):(1,8), 14)"), "14:1");
}

TEST(CalcParse, ErrorsNameWhatWasExpectedAndTheColumn) {
  EXPECT_EQ(parse_error("(1,2"), "expected ',' or ')' to close the '(' at column 1, found end of input at column 5");
  EXPECT_EQ(parse_error("(1,2))"), "expected end of input (this ')' has no matching '('), found ')' at column 6");
  EXPECT_EQ(parse_error("1 2"), "expected end of input, found the integer 2 at column 3");
  EXPECT_EQ(parse_error("(4,2):(1)"), "the shape (4,2) and the stride (1) of a layout must have the same profile at column 6");
  EXPECT_EQ(parse_error("(4,2):"), "expected a stride (an integer or a tuple) after ':', found end of input at column 7");
  EXPECT_EQ(parse_error("foo(1)"), "unknown operation 'foo' (tessel layout --help lists them) at column 1");
  EXPECT_EQ(parse_error("size 4"), "expected '(' after the operation 'size', found the integer 4 at column 6");
  EXPECT_EQ(parse_error("bar"), "unknown name 'bar' at column 1");
  EXPECT_EQ(parse_error("99999999999999999999"), "the integer does not fit in 64 bits at column 1");
  EXPECT_EQ(parse_error("(1,#)"), "unexpected character '#' at column 4");
  EXPECT_EQ(parse_error("Sw<1,2>"), "expected ',' in Sw<B,M,S>, found '>' at column 7");
  EXPECT_EQ(parse_error("_:1"), "expected a shape before ':' (`_` is not an extent), found ':' at column 2");
  EXPECT_EQ(parse_error(""), "expected a layout, a tuple, an integer, `_`, a swizzle or an operation, found end of input at column 1");
  EXPECT_EQ(parse_error("(Sw<1,1,1>,2)"), "a tuple can hold integers, `_`, layouts and tuples of these, not the swizzle Sw<1,1,1> at column 1");
  EXPECT_EQ(parse_error("9223372036854775807"), "");
  EXPECT_EQ(parse_error("-9223372036854775808"), "");
  EXPECT_EQ(parse_error("9223372036854775808"), "the integer does not fit in 64 bits at column 1");
}

TEST(CalcParse, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep(10000, '(');
  EXPECT_EQ(parse_error(deep), "nesting deeper than 64 levels at column 65");
  std::string calls;
  for (int i = 0; i < 5000; ++i) calls += "size(";
  EXPECT_EQ(parse_error(calls), "nesting deeper than 64 levels at column 325");
  std::string strides = "1:" + std::string(10000, '(');
  EXPECT_EQ(parse_error(strides), "nesting deeper than 64 levels at column 67");
  std::string swizzles;
  for (int i = 0; i < 100; ++i) swizzles += "Sw<1,1,1> o ";
  EXPECT_NE(parse_error(swizzles).find("nesting deeper than 64 levels"), std::string::npos);
  // 64 levels are fine.
  EXPECT_EQ(eval_text(std::string(63, '(') + "1" + std::string(63, ')')), std::string(63, '(') + "1" + std::string(63, ')'));
}

TEST(CalcParse, OversizedInputIsRefused) {
  std::string many = "(";
  for (int i = 0; i < 5000; ++i) many += "1,";
  many += "1)";
  EXPECT_NE(parse_error(many).find("more than 4096 integers"), std::string::npos);
  EXPECT_NE(parse_error(std::string(70000, ' ') + "1").find("longer than 65536 characters"), std::string::npos);
}
