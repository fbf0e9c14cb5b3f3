// Properties of tessel_calc's right_inverse and left_inverse on random run-time layouts:
// A(R(i)) == i for every i < size(R) (right), R(A(i)) == i for every i < size(A) when A is
// injective (left); a bijective A has a right inverse of its full size; layouts whose
// nonzero-stride modes nest are never refused by left_inverse, and non-injective ones
// (ignoring stride-0 modes) always are.
#include "calc/inverse.hpp"
#include "calc/parse.hpp"
#include "oracle/calc_reference.hpp"
#include "oracle/random_layouts.hpp"

#include <gtest/gtest.h>

using namespace tessel;
using oracle::eval_ref;

namespace {

// A without its stride-0 modes (those coordinates are read as 0 by a left inverse).
calc::Layout drop_broadcast(calc::Layout const& a) {
  std::vector<calc::Integer> s, d;
  for (auto m : oracle::flat_modes(a)) {
    if (m.d != 0) {
      s.push_back(calc::dynamic_int(m.s));
      d.push_back(calc::dynamic_int(m.d));
    }
  }
  if (s.empty()) return calc::Layout{calc::IntTuple::leaf(calc::static_int(1)), calc::IntTuple::leaf(calc::static_int(0))};
  return calc::Layout{calc::make_flat_tuple(s), calc::make_flat_tuple(d)};
}

bool nests(calc::Layout const& a) {
  auto m = oracle::flat_modes(drop_broadcast(a));
  std::sort(m.begin(), m.end(), [](auto x, auto y) { return x.d < y.d; });
  std::int64_t reach = 1;
  for (auto x : m) {
    if (x.s == 1) continue;
    if (x.d < reach || x.d % reach != 0) return false;
    reach = x.d * x.s;
  }
  return true;
}

}  // namespace

TEST(CalcInverse, RightInverse) {
  oracle::Rng rng(31);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  int full = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape);
    SCOPED_TRACE("right_inverse(" + calc::to_string(a) + ")");
    calc::Layout r = calc::right_inverse(a);
    std::int64_t const n = oracle::size_ref(r);
    ASSERT_GE(n, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(eval_ref(a, eval_ref(r, i)), i) << "R = " << calc::to_string(r) << " at " << i;
    }
    auto v = oracle::sorted(oracle::values(a));
    bool bijective = true;
    for (std::size_t i = 0; i < v.size(); ++i) bijective = bijective && v[i] == std::int64_t(i);
    if (bijective) {
      ++full;
      ASSERT_EQ(n, oracle::size_ref(a)) << "a bijection onto [0, size) has a right inverse of the same size";
    }
  }
  EXPECT_GT(full, 2000);
}

TEST(CalcInverse, LeftInverse) {
  oracle::Rng rng(37);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    calc::Layout a = oracle::random_layout(rng, shape, rng.chance(60) ? oracle::Strides::nested : oracle::Strides::arbitrary);
    SCOPED_TRACE("left_inverse(" + calc::to_string(a) + ")");
    bool negative = false;
    for (auto m : oracle::flat_modes(a)) negative = negative || (m.d < 0 && m.s > 1);
    calc::Layout r;
    try {
      r = calc::left_inverse(a);
    } catch (AlgebraError const& e) {
      ++refused;
      ASSERT_TRUE(negative || !nests(a)) << "a nesting layout was refused: " << e.what();
      continue;
    }
    ++accepted;
    ASSERT_FALSE(negative);
    calc::Layout core = drop_broadcast(a);
    ASSERT_TRUE(oracle::injective(core)) << "accepted a layout that is not injective";
    // R(A(i)) == i with the coordinates of stride-0 modes read as 0, i.e. R o A == R o A' where A'
    // drops them: check R(A'(j)) == the index j of A' re-embedded in A.
    auto m = oracle::flat_modes(a);
    std::int64_t const n = oracle::size_ref(a);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t x = i, expect = 0, weight = 1;
      for (std::size_t k = 0; k < m.size(); ++k) {
        std::int64_t c = k + 1 < m.size() ? x % m[k].s : x;
        if (k + 1 < m.size()) x /= m[k].s;
        if (m[k].d != 0) expect += c * weight;
        weight *= m[k].s;
      }
      ASSERT_EQ(eval_ref(r, eval_ref(a, i)), expect) << "R = " << calc::to_string(r) << " at " << i;
    }
  }
  EXPECT_GT(accepted, 8000);
  EXPECT_GT(refused, 1000);
  std::printf("[ property ] left_inverse: %d accepted, %d refused\n", accepted, refused);
}

TEST(CalcInverse, LeftInverseRefusesOverlappingModes) {
  // The templated rule (each stride a multiple of the gaps before it) accepts these; they are
  // not injective, so no left inverse exists.
  for (char const* e : {"left_inverse((4,2):(1,2))", "left_inverse((2,2):(1,1))", "left_inverse((_4,_2):(_1,_2))"}) {
    EXPECT_THROW(calc::evaluate(e), AlgebraError) << e;
  }
  EXPECT_EQ(calc::to_string(calc::evaluate("left_inverse(((_8,_2,_8)):((_0,_64,_8)))")), "(_8,_8,_2):(_0,_16,_8)");
}
