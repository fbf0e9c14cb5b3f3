// Properties of tessel_calc's composition on random run-time layouts, checked by definition:
// an accepted R = A o B has B's size and leaf extents and R(i) == A(B(i)) at every i; a refusal
// is needed: the unchecked walk gives a wrong layout. Also: by-mode tilers compose mode by mode.
#include "calc/composition.hpp"
#include "calc/expr.hpp"
#include "calc/parse.hpp"
#include "oracle/calc_reference.hpp"
#include "oracle/random_layouts.hpp"

#include <gtest/gtest.h>

using namespace tessel;
using oracle::eval_ref;

namespace {

bool leaf_sizes_match(calc::IntTuple const& b, calc::IntTuple const& r) {
  if (!b.is_tuple()) return calc::product(r).value == b.value.value;
  if (!r.is_tuple() || r.elems.size() != b.elems.size()) return false;
  for (std::size_t i = 0; i < b.elems.size(); ++i) {
    if (!leaf_sizes_match(b.elems[i], r.elems[i])) return false;
  }
  return true;
}

// "" when R is A o B on B's domain, else the first difference.
std::string check_definition(calc::Layout const& a, calc::Layout const& b, calc::Layout const& r) {
  if (!leaf_sizes_match(b.shape, r.shape)) return "shape " + calc::to_string(r.shape) + " is not compatible with " + calc::to_string(b.shape);
  std::int64_t const n = oracle::size_ref(b);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t want = eval_ref(a, eval_ref(b, i));
    if (eval_ref(r, i) != want) return "R(" + std::to_string(i) + ") = " + std::to_string(eval_ref(r, i)) + ", A(B(i)) = " + std::to_string(want);
  }
  return "";
}

bool has_negative_offsets(calc::Layout const& b) {
  for (auto v : oracle::values(b)) {
    if (v < 0) return true;
  }
  return false;
}

}  // namespace

TEST(CalcComposition, AcceptedMeansRightAndRefusedMeansTheWalkIsWrong) {
  oracle::Rng rng(7);
  oracle::LayoutShape a_shape{};
  a_shape.static_percent = 50;
  oracle::LayoutShape b_shape = a_shape;
  b_shape.max_rank = 2;
  b_shape.max_leaves = 3;
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, a_shape);
    calc::Layout b = oracle::random_layout(rng, b_shape);
    if (has_negative_offsets(b)) continue;  // A(x) is defined for x >= 0
    SCOPED_TRACE("composition(" + calc::to_string(a) + ", " + calc::to_string(b) + ")");
    try {
      calc::Layout r = calc::composition(a, b);
      ++accepted;
      ASSERT_EQ(check_definition(a, b, r), "") << "R = " << calc::to_string(r);
    } catch (AlgebraError const& e) {
      ++refused;
      calc::Layout walk = calc::composition_unchecked(a, b);
      ASSERT_NE(check_definition(a, b, walk), "") << "refused (" << e.what() << ") although the walk gives "
                                                  << calc::to_string(walk) << ", which is right";
    }
  }
  EXPECT_GT(accepted, 5000);
  EXPECT_GT(refused, 500);
  std::printf("[ property ] composition: %d accepted, %d refused\n", accepted, refused);
}

TEST(CalcComposition, ByModeTilersComposeModeByMode) {
  oracle::Rng rng(11);
  oracle::LayoutShape shape{};
  shape.static_percent = 40;
  int checked = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape, oracle::Strides::compact);
    calc::Tiler t = oracle::random_tiler(rng, shape, calc::rank(a));
    if (!t.is_tuple()) continue;
    SCOPED_TRACE("composition(" + calc::to_string(a) + ", " + calc::to_string(t) + ")");
    calc::Layout r;
    try {
      r = calc::composition(a, t);
    } catch (AlgebraError const&) {
      continue;
    }
    ++checked;
    ASSERT_EQ(calc::rank(r), int(t.elems.size()));
    for (std::size_t i = 0; i < t.elems.size(); ++i) {
      calc::Layout ai = calc::mode(a, int(i));
      calc::Layout ri = calc::mode(r, int(i));
      calc::Tiler const& ti = t.elems[i];
      if (ti.kind == calc::Tiler::Kind::underscore) {
        EXPECT_EQ(ri, ai);
        continue;
      }
      calc::Layout bi = ti.kind == calc::Tiler::Kind::layout
                            ? ti.layout
                            : calc::Layout{calc::IntTuple::leaf(ti.value), calc::IntTuple::leaf(calc::static_int(1))};
      if (has_negative_offsets(bi)) continue;
      ASSERT_EQ(check_definition(ai, bi, ri), "") << "mode " << i << ": " << calc::to_string(ri);
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(CalcComposition, SwizzledLayoutsComposeTheirInnerLayout) {
  auto r = calc::evaluate("composition(Sw<2,1,3> o 5 o (8,8):(8,1), (4,2):(2,1))");
  auto const& c = std::get<calc::ComposedLayout>(r);
  calc::Layout inner = calc::composition(std::get<calc::Layout>(calc::parse_literal("(8,8):(8,1)")),
                                         std::get<calc::Layout>(calc::parse_literal("(4,2):(2,1)")));
  EXPECT_EQ(c.layout, inner);
  for (std::int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(calc::eval(c, calc::IntTuple::leaf(calc::dynamic_int(i))).value,
              calc::apply(c.swizzle, calc::dynamic_int(5 + eval_ref(inner, i))).value);
  }
}

TEST(CalcComposition, RefusalsNameTheRule) {
  try {
    calc::evaluate("composition((4,3):(1,5), 6:1)");
    FAIL() << "expected a refusal";
  } catch (AlgebraError const& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("composition: 6:1 walks across the modes of (4,3):(1,5) unevenly", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}
