// Properties of tessel_calc's divides and products on random run-time layouts, checked by
// definition:
//   logical_divide(A, T) == A o (T, complement(T, shape(coalesce(A)))) at every index; its first
//     mode is A o T; size >= size(A); zipped/tiled/flat hold the same offsets, and tiled and flat
//     are zipped with modes unpacked (the same function).
//   logical_product(A, B)(a, b) == A(a) + complement(A, size(A)*cosize(B))(B(b)); size is
//     size(A)*size(B); injective A and B give an injective product; blocked/raked hold the same
//     offsets as the logical product of the padded layouts.
#include "calc/coalesce.hpp"
#include "calc/complement.hpp"
#include "calc/composition.hpp"
#include "calc/divide.hpp"
#include "calc/parse.hpp"
#include "calc/product.hpp"
#include "oracle/calc_reference.hpp"
#include "oracle/random_layouts.hpp"

#include <gtest/gtest.h>

using namespace tessel;
using oracle::eval_ref;
using oracle::size_ref;
using oracle::sorted;
using oracle::values;

TEST(CalcDivide, DefinitionAndRegroupings) {
  oracle::Rng rng(41);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  oracle::LayoutShape tile = shape;
  tile.max_rank = 2;
  tile.max_leaves = 3;
  tile.max_extent = 6;
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape, rng.chance(60) ? oracle::Strides::compact : oracle::Strides::any);
    calc::Layout t = oracle::random_layout(rng, tile, rng.chance(60) ? oracle::Strides::compact : oracle::Strides::nested);
    SCOPED_TRACE("logical_divide(" + calc::to_string(a) + ", " + calc::to_string(t) + ")");
    calc::Layout r;
    try {
      r = calc::logical_divide(a, calc::Tiler::of_layout(t));
    } catch (AlgebraError const&) {
      ++refused;
      continue;
    }
    ++accepted;
    calc::Layout tc = calc::concat({t, calc::complement(t, calc::coalesce(a).shape)});
    std::int64_t const n = size_ref(r);
    ASSERT_EQ(n, size_ref(tc));
    ASSERT_GE(n, size_ref(a));
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(eval_ref(r, i), eval_ref(a, eval_ref(tc, i))) << "at " << i;
    calc::Layout first = calc::mode(r, 0);
    for (std::int64_t i = 0; i < size_ref(t); ++i) ASSERT_EQ(eval_ref(first, i), eval_ref(a, eval_ref(t, i)));
    calc::Layout z = calc::zipped_divide(a, calc::Tiler::of_layout(t));
    calc::Layout td = calc::tiled_divide(a, calc::Tiler::of_layout(t));
    calc::Layout fd = calc::flat_divide(a, calc::Tiler::of_layout(t));
    EXPECT_EQ(values(z), values(r));  // a single layout tiler: zipped == logical
    EXPECT_EQ(values(td), values(z));
    EXPECT_EQ(values(fd), values(z));
  }
  EXPECT_GT(accepted, 3000);
  std::printf("[ property ] logical_divide: %d accepted, %d refused\n", accepted, refused);
}

TEST(CalcDivide, ByModeTilers) {
  oracle::Rng rng(43);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  int checked = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape, oracle::Strides::compact);
    calc::Tiler t = oracle::random_tiler(rng, shape, calc::rank(a));
    if (!t.is_tuple()) continue;
    SCOPED_TRACE("logical_divide(" + calc::to_string(a) + ", " + calc::to_string(t) + ")");
    calc::Layout r;
    try {
      r = calc::logical_divide(a, t);
    } catch (AlgebraError const&) {
      continue;
    }
    ++checked;
    ASSERT_EQ(calc::rank(r), calc::rank(a));
    for (int i = 0; i < calc::rank(a); ++i) {
      calc::Layout want = i < int(t.elems.size()) ? calc::logical_divide(calc::mode(a, i), t.elems[std::size_t(i)])
                                                  : calc::mode(a, i);
      ASSERT_EQ(values(calc::mode(r, i)), values(want)) << "mode " << i;
    }
    bool has_underscore = false;
    for (auto const& e : t.elems) has_underscore = has_underscore || e.kind == calc::Tiler::Kind::underscore;
    if (has_underscore) continue;  // zipped/tiled/flat need a (tile, rest) pair in every tiled mode
    calc::Layout z = calc::zipped_divide(a, t);
    ASSERT_EQ(sorted(values(z)), sorted(values(r)));
    ASSERT_EQ(values(calc::tiled_divide(a, t)), values(z));
    ASSERT_EQ(values(calc::flat_divide(a, t)), values(z));
  }
  EXPECT_GT(checked, 1000);
}

TEST(CalcProduct, DefinitionAndBlockedRaked) {
  oracle::Rng rng(47);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  shape.max_rank = 2;
  shape.max_leaves = 4;
  shape.max_extent = 6;
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape, rng.chance(60) ? oracle::Strides::compact : oracle::Strides::any);
    calc::Layout b = oracle::random_layout(rng, shape, rng.chance(60) ? oracle::Strides::compact : oracle::Strides::any);
    SCOPED_TRACE("logical_product(" + calc::to_string(a) + ", " + calc::to_string(b) + ")");
    calc::Layout r;
    try {
      r = calc::logical_product(a, calc::Tiler::of_layout(b));
    } catch (AlgebraError const&) {
      ++refused;
      continue;
    }
    ++accepted;
    calc::Layout c = calc::complement(a, calc::IntTuple::leaf(calc::size(a) * calc::cosize(b)));
    std::int64_t const na = size_ref(a), nb = size_ref(b);
    ASSERT_EQ(size_ref(r), na * nb);
    for (std::int64_t j = 0; j < nb; ++j) {
      for (std::int64_t i = 0; i < na; ++i) {
        ASSERT_EQ(eval_ref(r, i + na * j), eval_ref(a, i) + eval_ref(c, eval_ref(b, j))) << "at (" << i << "," << j << ")";
      }
    }
    if (oracle::injective(a) && oracle::injective(b)) {
      ASSERT_TRUE(oracle::injective(r));
    }
    int const rk = std::max(calc::rank(a), calc::rank(b));
    auto padded = values(calc::logical_product(calc::append_to_rank(a, rk), calc::Tiler::of_layout(calc::append_to_rank(b, rk))));
    try {
      ASSERT_EQ(sorted(values(calc::blocked_product(a, b))), sorted(padded));
      ASSERT_EQ(sorted(values(calc::raked_product(a, b))), sorted(padded));
    } catch (AlgebraError const& e) {
      // Only refused where the paired modes differ in rank, which needs rank-1 layouts.
      ASSERT_EQ(rk, 1) << e.what();
    }
    calc::Layout z = calc::zipped_product(a, calc::Tiler::of_layout(b));
    ASSERT_EQ(values(calc::tiled_product(a, calc::Tiler::of_layout(b))), values(z));
    ASSERT_EQ(values(calc::flat_product(a, calc::Tiler::of_layout(b))), values(z));
  }
  EXPECT_GT(accepted, 3000);
  std::printf("[ property ] logical_product: %d accepted, %d refused\n", accepted, refused);
}

TEST(CalcProduct, MismatchedModesAreRefusedNotDropped) {
  // A rank-1 tuple block against a rank-2 repetition: zip cannot pair the modes (the templates
  // refuse at compile time, tests/compile/fail/blocked_product_rank_mismatch.cpp).
  EXPECT_THROW(calc::evaluate("blocked_product((2):(2), _4:_1)"), AlgebraError);
  EXPECT_THROW(calc::evaluate("raked_product((2):(2), _4:_1)"), AlgebraError);
  // A leaf block: CuTe's zip wraps the pair, ((block, repetition)) (cf. the oracle's
  // blocked_product 12:1 | 9:1 -> ((12,(1,9))):((1,(1,12)))).
  EXPECT_EQ(calc::to_string(calc::evaluate("blocked_product(2:2, _4:_1)")), "((2,(2,2))):((2,(_1,4)))");
}

TEST(CalcProduct, BlockedKeepsCopiesContiguousAndRakedInterleaves) {
  // (_2,_5):(_5,_1) x (_3,_4):(_1,_3): blocked rows 0..1 are copy 0 of A; raked rows 0,3 are.
  calc::Layout a{calc::IntTuple::tuple({calc::IntTuple::leaf(calc::dynamic_int(2)), calc::IntTuple::leaf(calc::dynamic_int(5))}),
                 calc::IntTuple::tuple({calc::IntTuple::leaf(calc::dynamic_int(5)), calc::IntTuple::leaf(calc::dynamic_int(1))})};
  calc::Layout b = calc::make_layout(calc::IntTuple::tuple({calc::IntTuple::leaf(calc::dynamic_int(3)), calc::IntTuple::leaf(calc::dynamic_int(4))}));
  calc::Layout blocked = calc::blocked_product(a, b);
  calc::Layout raked = calc::raked_product(a, b);
  EXPECT_EQ(calc::to_string(blocked), "((2,3),(5,4)):((5,10),(1,30))");
  EXPECT_EQ(calc::to_string(raked), "((3,2),(4,5)):((10,5),(30,1))");
}
