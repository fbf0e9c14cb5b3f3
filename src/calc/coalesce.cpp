// calc/coalesce.cpp -- bw_coalesce on values, as layout/coalesce.hpp does on static values.
#include "calc/coalesce.hpp"

#include <algorithm>

namespace tessel::calc {

namespace {

// The layout being built by bw_coalesce: a lone leaf, or a flat tuple (kept in reverse order so
// that prepending is cheap).
struct Building {
  bool is_tuple = false;
  std::vector<Integer> shape_rev, stride_rev;

  Integer& front_shape() { return shape_rev.back(); }
  Integer& front_stride() { return stride_rev.back(); }
  bool is_lone_one() const { return !is_tuple && shape_rev.back().value == 1; }
};

bool product_equals(Integer a, Integer b, Integer c) {
  return static_cast<__int128>(a.value) * static_cast<__int128>(b.value) == static_cast<__int128>(c.value);
}

// Walk the flat modes os[i], os[i-1], ..., os[0] onto the front of the layout being built:
//   extent 1                        -> skip it
//   the layout is a lone extent 1   -> replace it
//   os[i] ends where the front starts (s*d == front stride) -> merge
//   otherwise                       -> prepend
Layout bw_coalesce(std::vector<Integer> const& os, std::vector<Integer> const& od, int i, Integer ns, Integer nd) {
  Building b;
  b.shape_rev.push_back(ns);
  b.stride_rev.push_back(nd);
  for (; i >= 0; --i) {
    Integer s = os[std::size_t(i)];
    Integer d = od[std::size_t(i)];
    if (s.value == 1) continue;
    if (b.is_lone_one()) {
      b.shape_rev.back() = s;
      b.stride_rev.back() = d;
    } else if (product_equals(s, d, b.front_stride())) {
      b.front_shape() = s * b.front_shape();
      b.front_stride() = d;
    } else {
      b.is_tuple = true;
      b.shape_rev.push_back(s);
      b.stride_rev.push_back(d);
    }
  }
  if (b.is_lone_one()) return Layout{IntTuple::leaf(static_int(1)), IntTuple::leaf(static_int(0))};
  if (!b.is_tuple) return Layout{IntTuple::leaf(b.shape_rev[0]), IntTuple::leaf(b.stride_rev[0])};
  std::reverse(b.shape_rev.begin(), b.shape_rev.end());
  std::reverse(b.stride_rev.begin(), b.stride_rev.end());
  return Layout{make_flat_tuple(b.shape_rev), make_flat_tuple(b.stride_rev)};
}

Layout empty_coalesced() { return Layout{IntTuple::leaf(static_int(1)), IntTuple::leaf(static_int(0))}; }

template <class F>
Layout by_profile(Layout const& l, IntTuple const& profile, F f, char const* op) {
  if (!profile.is_tuple()) return f(l);
  int const r = rank(l);
  int const rp = profile.rank();
  if (rp > r) {
    fail(std::string(op) + ": the profile " + to_string(profile) + " has more modes than the layout " + to_string(l));
  }
  std::vector<Layout> modes;
  for (int i = 0; i < r; ++i) {
    Layout m = mode(l, i);
    modes.push_back(i < rp ? by_profile(m, profile.elems[std::size_t(i)], f, op) : m);
  }
  return concat(modes);
}

}  // namespace

Layout coalesce(Layout const& l) {
  auto fs = leaves(l.shape);
  auto fd = leaves(l.stride);
  int const r = int(fs.size());
  if (r == 0) return empty_coalesced();
  return bw_coalesce(fs, fd, r - 2, fs.back(), fd.back());
}

Layout coalesce_x(Layout const& l) {
  auto fs = leaves(l.shape);
  auto fd = leaves(l.stride);
  int const r = int(fs.size());
  if (r == 0) return empty_coalesced();
  Integer last = fs.back().value == 1 ? static_int(2) : fs.back();
  return bw_coalesce(fs, fd, r - 2, last, fd.back());
}

Layout coalesce(Layout const& l, IntTuple const& profile) {
  return by_profile(l, profile, [](Layout const& m) { return coalesce(m); }, "coalesce");
}

namespace {
IntTuple zeros_to_one(IntTuple const& stride, IntTuple const& shape) {
  if (stride.is_tuple()) {
    std::vector<IntTuple> out;
    for (std::size_t i = 0; i < stride.elems.size(); ++i) out.push_back(zeros_to_one(stride.elems[i], shape.elems[i]));
    return IntTuple::tuple(std::move(out));
  }
  return stride.value.value == 0 ? IntTuple::leaf(static_int(1)) : shape;
}
}  // namespace

Layout filter_zeros(Layout const& l) { return Layout{zeros_to_one(l.stride, l.shape), l.stride}; }

Layout filter(Layout const& l) { return coalesce(filter_zeros(l)); }

Layout filter(Layout const& l, IntTuple const& profile) {
  return by_profile(l, profile, [](Layout const& m) { return filter(m); }, "filter");
}

}  // namespace tessel::calc
