// Property tests of the templated algebra with run-time values: random layouts of fixed
// structure, every result checked against the operation's definition at every point, and every
// refusal checked against an independent, unchecked walk (the refusal must be needed).
#include <tessel/layout.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace tessel;

namespace {

// Flat (extent, stride) modes of a layout, for the independent reference below.
struct Mode {
  long long s, d;
};

template <class L>
std::vector<Mode> flat_modes(L const& l) {
  std::vector<Mode> m;
  auto fs = flatten_to_tuple(l.shape());
  auto fd = flatten_to_tuple(l.stride());
  for_each(transform(fs, fd, [](auto s, auto d) { return make_tuple(s, d); }),
           [&](auto const& p) { m.push_back({(long long)get<0>(p), (long long)get<1>(p)}); });
  return m;
}

// A(x) for a flat layout, colexicographic, the last mode extending without bound.
long long eval_flat(std::vector<Mode> const& a, long long x) {
  long long r = 0;
  for (size_t k = 0; k + 1 < a.size(); ++k) {
    r += (x % a[k].s) * a[k].d;
    x /= a[k].s;
  }
  return r + x * a.back().d;
}

// CuTe's composition walk for one integral mode s:d of B over flat modes of A, without any
// check, as (extent, stride) modes of the result.
std::vector<Mode> unchecked_walk(std::vector<Mode> const& a, long long n, long long d) {
  if (a.size() == 1) return {{n, d * a[0].d}};
  if (d == 0) return {{n, 0}};
  std::vector<Mode> r;
  for (size_t k = 0; k + 1 < a.size(); ++k) {
    long long c = a[k].s;
    long long q = (c + d - 1) / d;
    long long nn = std::min(q, n);
    r.push_back({nn, d * a[k].d});
    n = nn == 0 ? 0 : n / nn;
    d = (d + c - 1) / c;
  }
  r.push_back({n, d * a.back().d});
  return r;
}

bool walk_is_right(std::vector<Mode> const& a, long long n, long long d) {
  auto r = unchecked_walk(a, n, d);
  long long size = 1;
  for (auto m : r) size *= m.s;
  if (size != n) return false;
  for (long long i = 0; i < n; ++i) {
    if (eval_flat(r, i) != eval_flat(a, i * d)) return false;
  }
  return true;
}

}  // namespace

TEST(CompositionProperty, RunTimeValuesAreRightOrRefusedExactlyWhenTheWalkIsWrong) {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    auto a = make_layout(make_shape(pick(1, 8), pick(1, 8), pick(1, 6)),
                         make_stride(pick(0, 40), pick(0, 40), pick(0, 40)));
    int n = pick(1, 24), d = pick(0, 30);
    auto b = make_layout(n, d);
    auto am = flat_modes(a);
    try {
      auto r = composition(a, b);
      ++accepted;
      ASSERT_EQ(size(r), n) << "A=" << a << " B=" << b << " R=" << r;
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(r(i), a(i * d)) << "A=" << a << " B=" << b << " R=" << r << " i=" << i;
      }
    } catch (AlgebraError const& e) {
      ++refused;
      ASSERT_FALSE(walk_is_right(am, n, d)) << "refused although the walk is right: A=" << a << " B=" << b << "\n" << e.what();
    }
  }
  // Both branches must be exercised for the test to mean anything.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

TEST(CompositionProperty, TwoModeRightOperandDistributes) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    int s0 = pick(1, 16);
    auto a = make_layout(make_shape(s0, pick(1, 16)), make_stride(pick(1, 4), pick(1, 64) * s0));
    auto b = make_layout(make_shape(pick(1, 6), pick(1, 6)), make_stride(pick(0, 12), pick(0, 24)));
    try {
      auto r = composition(a, b);
      ASSERT_EQ(size(r), size(b));
      for (int i = 0; i < size(b); ++i) ASSERT_EQ(r(i), a(b(i))) << "A=" << a << " B=" << b << " R=" << r;
      ++checked;
    } catch (AlgebraError const&) {
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(CompositionProperty, ByModeTilerKeepsAndDropsModes) {
  auto a = make_layout(make_shape(12, make_shape(4, 8)), make_stride(59, make_stride(13, 1)));
  auto r = composition(a, make_tile(make_layout(_3{}, _4{}), make_layout(_8{}, _2{})));
  // Mode 0: 12:59 o 3:4 -> 3:236; mode 1: (4,8):(13,1) o 8:2 -> (2,4):(26,1).
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r(make_coord(i, 0)), 236 * i);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(r(make_coord(0, j)), layout<1>(a)(2 * j));
  auto kept = composition(a, make_tile(_, 2));
  EXPECT_EQ(to_string(layout<0>(kept)), "12:59");
}

TEST(ComplementProperty, RunTimeRankOneIsOrderedDisjointAndCovering) {
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 5000; ++trial) {
    int s = pick(1, 12), d = pick(0, 12), m = pick(1, 200);
    auto a = make_layout(s, d);
    auto c = complement(a, m);
    // Ordered, and disjoint from A except at 0.
    for (int i = 1; i < size(c); ++i) {
      ASSERT_LT(c(i - 1), c(i)) << "A=" << a << " M=" << m << " R=" << c;
      for (int j = 0; j < s; ++j) ASSERT_NE(c(i), a(j)) << "A=" << a << " M=" << m << " R=" << c;
    }
    // (A, R) covers [0, M) when A's image is contiguous or evenly spaced.
    long long reach = (d == 0 ? 1 : (long long)s * d);
    ASSERT_GE((long long)size(c) * reach, m) << "A=" << a << " M=" << m << " R=" << c;
  }
}

TEST(ComplementProperty, NegativeRunTimeStrideIsRefused) {
  EXPECT_THROW(complement(make_layout(4, -1), 16), AlgebraError);
}

TEST(InverseProperty, StaticInversesSatisfyTheirDefinitions) {
  auto check = [](auto a) {
    auto r = right_inverse(a);
    for (int i = 0; i < size(r); ++i) EXPECT_EQ(a(r(i)), i) << "A=" << a << " R=" << r;
    auto l = left_inverse(a);
    for (int i = 0; i < size(a); ++i) EXPECT_EQ(l(a(i)), i) << "A=" << a << " L=" << l;
  };
  check(make_layout(make_shape(_4{}, _2{}), make_stride(_2{}, _1{})));
  check(make_layout(make_shape(make_shape(_8{}, _4{}), make_shape(_2{}, _2{})), make_stride(make_stride(_2{}, _16{}), make_stride(_1{}, _64{}))));
  check(make_layout(make_shape(_3{}, _5{}, _2{}), make_stride(_10{}, _1{}, _5{})));
  check(make_layout(make_shape(_16{}, _8{}), GenRowMajor{}));
}

TEST(DivideProductProperty, RunTimeDivideAndProductMatchTheirDefinitions) {
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 2000; ++trial) {
    int t = pick(1, 8), n = pick(1, 8) * t;
    auto a = make_layout(n, pick(1, 5));
    auto tile = make_layout(t, 1);
    auto div = logical_divide(a, tile);
    // ((tile),(rest)): element (i, j) is A(i + t*j).
    for (int j = 0; j < size<1>(div); ++j)
      for (int i = 0; i < t; ++i) ASSERT_EQ(div(make_coord(i, j)), a(i + t * j)) << "A=" << a << " R=" << div;
    auto prod = logical_product(make_layout(t, 1), make_layout(pick(1, 5), 1));
    for (int i = 0; i < size(prod); ++i) ASSERT_EQ(prod(i), i) << prod;  // compact tiling is the identity
  }
}
