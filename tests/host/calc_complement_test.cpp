// Properties of tessel_calc's complement on random run-time layouts, checked by definition:
// R is strictly increasing, R(i) is never an offset of A for i >= 1 (disjoint), and
// size(R) >= M / size(filter(A)); when A's modes nest, (filter(A), R) is a bijection onto
// [0, size(filter(A)) * size(R)) which covers [0, M). Nesting layouts are never refused.
#include "calc/coalesce.hpp"
#include "calc/complement.hpp"
#include "calc/parse.hpp"
#include "oracle/calc_reference.hpp"
#include "oracle/random_layouts.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace tessel;

namespace {

// The modes of A nest: sorted by stride, each (nonzero) stride is a multiple of the previous
// stride times its extent. Extent-1 and stride-0 modes are ignored (filter drops them).
bool nests(calc::Layout const& a) {
  std::vector<oracle::FlatMode> m;
  for (auto x : oracle::flat_modes(a)) {
    if (x.s != 1 && x.d != 0) m.push_back(x);
  }
  std::sort(m.begin(), m.end(), [](auto x, auto y) { return x.d < y.d; });
  std::int64_t reach = 1;
  for (auto x : m) {
    if (x.d < reach || x.d % reach != 0) return false;
    reach = x.d * x.s;
  }
  return true;
}

std::string check_definition(calc::Layout const& a, std::int64_t m, calc::Layout const& r) {
  auto rv = oracle::values(r);
  auto av = oracle::values(a);
  std::set<std::int64_t> offsets(av.begin(), av.end());
  for (std::size_t i = 1; i < rv.size(); ++i) {
    if (rv[i] <= rv[i - 1]) return "not strictly increasing at " + std::to_string(i);
    if (offsets.count(rv[i])) return "R(" + std::to_string(i) + ") = " + std::to_string(rv[i]) + " is an offset of A";
  }
  std::int64_t const nf = oracle::size_ref(calc::filter(a));
  if (std::int64_t(rv.size()) < m / nf) return "size(R) = " + std::to_string(rv.size()) + " < M / size(filter(A))";
  return "";
}

std::string check_cover(calc::Layout const& a, std::int64_t m, calc::Layout const& r) {
  calc::Layout f = calc::filter(a);
  auto fv = oracle::values(f);
  auto rv = oracle::values(r);
  std::vector<std::int64_t> all;
  for (auto x : rv) {
    for (auto y : fv) all.push_back(x + y);
  }
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] != std::int64_t(i)) return "(filter(A), R) does not cover [0, N) once; first gap at " + std::to_string(i);
  }
  if (std::int64_t(all.size()) < m) return "(filter(A), R) covers " + std::to_string(all.size()) + " < M offsets";
  return "";
}

}  // namespace

TEST(CalcComplement, DisjointOrderedCovering) {
  oracle::Rng rng(23);
  oracle::LayoutShape shape{};
  shape.static_percent = 50;
  int accepted = 0, refused = 0, covered = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    bool const nested = rng.chance(70);
    calc::Layout a = oracle::random_layout(rng, shape, nested ? oracle::Strides::nested : oracle::Strides::arbitrary);
    std::int64_t const cos = calc::cosize(calc::filter(a)).value;
    bool const with_target = rng.chance(75);
    calc::IntTuple target = calc::IntTuple::leaf(calc::dynamic_int(
        rng.chance(50) ? cos * rng.uniform(1, 3) : rng.uniform(1, 2 * cos + 8)));
    std::int64_t const m = with_target ? target.value.value : cos;
    SCOPED_TRACE("complement(" + calc::to_string(a) + (with_target ? ", " + calc::to_string(target) : "") + ")");
    calc::Layout r;
    try {
      r = with_target ? calc::complement(a, target) : calc::complement(a);
    } catch (AlgebraError const& e) {
      ++refused;
      bool negative = false;
      for (auto x : oracle::flat_modes(a)) negative = negative || (x.d < 0 && x.s > 1);
      ASSERT_TRUE(negative || !nests(a)) << "a nesting layout was refused: " << e.what();
      continue;
    }
    ++accepted;
    ASSERT_EQ(check_definition(a, m, r), "") << "R = " << calc::to_string(r);
    if (nests(a)) {
      ++covered;
      ASSERT_EQ(check_cover(a, m, r), "") << "R = " << calc::to_string(r);
    }
  }
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(refused, 500);
  std::printf("[ property ] complement: %d accepted (%d nesting, checked for cover), %d refused\n", accepted, covered,
              refused);
}

TEST(CalcComplement, TupleCotargetsDivideModeByMode) {
  // The worked examples of the oracle README, with run-time ints.
  EXPECT_EQ(calc::to_string(calc::evaluate("complement(8:4, (4,24))")), "(4,3):(_1,32)");
  EXPECT_EQ(calc::to_string(calc::evaluate("complement(_4:_1, (_3,_2))")), "_1:_0");
  EXPECT_EQ(calc::to_string(calc::evaluate("complement(4:1, (4,2))")), "2:4");
}

TEST(CalcComplement, RefusalsNameTheRule) {
  for (char const* e : {"complement((2,2):(2,3))", "complement(4:-1, 8)", "complement((4,2):(1,2), 16)"}) {
    try {
      calc::evaluate(e);
      ADD_FAILURE() << e << " was accepted";
    } catch (AlgebraError const& err) {
      EXPECT_EQ(std::string(err.what()).rfind("complement: ", 0), 0u) << err.what();
    }
  }
}
