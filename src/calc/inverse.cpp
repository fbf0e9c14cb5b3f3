// calc/inverse.cpp -- right_inverse / left_inverse on values (layout/inverse.hpp).
#include "calc/inverse.hpp"

#include "calc/coalesce.hpp"

#include <algorithm>
#include <numeric>

namespace tessel::calc {

namespace {

struct Flat {
  std::vector<Integer> s, d, pre;  // extents, strides, prefix products (_1, s0, s0*s1, ...)
  std::vector<std::size_t> order;  // modes sorted by stride (stable)
};

Flat flat_sorted(Layout const& a) {
  Layout c = coalesce(a);
  Flat f{leaves(c.shape), leaves(c.stride), {static_int(1)}, {}};
  for (auto x : f.s) f.pre.push_back(x * f.pre.back());
  f.order.resize(f.s.size());
  std::iota(f.order.begin(), f.order.end(), std::size_t(0));
  std::stable_sort(f.order.begin(), f.order.end(),
                   [&](std::size_t x, std::size_t y) { return f.d[x].value < f.d[y].value; });
  return f;
}

}  // namespace

Layout right_inverse(Layout const& a) {
  require_positive_extents(a, "right_inverse");
  Flat f = flat_sorted(a);
  std::vector<Integer> rs{static_int(1)}, rd{static_int(0)};
  std::int64_t curr = 1;
  for (std::size_t i : f.order) {
    if (f.d[i].value != curr) continue;
    rs.push_back(f.s[i]);
    rd.push_back(f.pre[i]);
    curr = checked_mul(f.s[i].value, f.d[i].value);
  }
  return coalesce(Layout{make_flat_tuple(rs), make_flat_tuple(rd)});
}

Layout left_inverse(Layout const& a) {
  require_positive_extents(a, "left_inverse");
  Flat f = flat_sorted(a);
  std::vector<Integer> rs, rd{static_int(0)};
  Integer gaps = static_int(1);  // size(rs)
  __int128 end = 1;              // stride * extent of the previous nonzero-stride mode
  for (std::size_t i : f.order) {
    Integer d = f.d[i];
    if (d.value < 0) {
      fail("left_inverse: " + to_string(a) + " has the negative stride " + to_string(d) +
           "; left_inverse needs strides >= 0");
    }
    if (d.value == 0) continue;
    if (d.value % gaps.value != 0) {
      fail("left_inverse: " + to_string(a) + " is not injective, or its modes interleave: sorted by stride, "
           "each stride must be a multiple of the product of the extents before it (stride " + to_string(d) +
           " after " + std::to_string(gaps.value) + ") (docs/layout_algebra.md)");
    }
    if (d.value < end) {
      fail("left_inverse: " + to_string(a) + " is not injective: sorted by stride, stride " + to_string(d) +
           " lies inside the previous mode, which reaches " + std::to_string(static_cast<long long>(end)) +
           " (docs/layout_algebra.md)");
    }
    rs.push_back(d / gaps);
    gaps = gaps * rs.back();
    rd.push_back(f.pre[i]);
    end = static_cast<__int128>(d.value) * f.s[i].value;
  }
  rs.push_back(f.s[f.order.back()]);
  return coalesce(Layout{make_flat_tuple(rs), make_flat_tuple(rd)});
}

}  // namespace tessel::calc
