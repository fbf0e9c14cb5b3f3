// tests/oracle/calc_reference.hpp -- slow, obvious helpers for the calculator's property tests.
//
// values(L) lists L(i) for every i < size(L) by the colexicographic definition, written here
// independently of tessel_calc's crd2idx; with_flags(v, s) marks every leaf static or run-time.
#pragma once

#include "calc/value.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::oracle {

// The flat (extent, stride) modes of a layout, left to right.
struct FlatMode {
  std::int64_t s, d;
};
inline std::vector<FlatMode> flat_modes(calc::Layout const& l) {
  auto s = calc::leaves(l.shape);
  auto d = calc::leaves(l.stride);
  std::vector<FlatMode> m;
  for (std::size_t i = 0; i < s.size(); ++i) m.push_back({s[i].value, d[i].value});
  return m;
}

// L(x) by the definition: split x colexicographically over the flat modes, the last mode taking
// what is left (so x may run past size(L)).
inline std::int64_t eval_ref(calc::Layout const& l, std::int64_t x) {
  auto m = flat_modes(l);
  if (m.empty()) return 0;
  std::int64_t r = 0;
  for (std::size_t k = 0; k + 1 < m.size(); ++k) {
    r += (x % m[k].s) * m[k].d;
    x /= m[k].s;
  }
  return r + x * m.back().d;
}

inline std::int64_t size_ref(calc::Layout const& l) {
  std::int64_t n = 1;
  for (auto const& m : flat_modes(l)) n *= m.s;
  return n;
}

inline std::vector<std::int64_t> values(calc::Layout const& l) {
  std::vector<std::int64_t> v;
  std::int64_t const n = size_ref(l);
  v.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) v.push_back(eval_ref(l, i));
  return v;
}

inline std::vector<std::int64_t> sorted(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

inline bool injective(calc::Layout const& l) {
  auto v = sorted(values(l));
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

inline calc::IntTuple with_flags(calc::IntTuple t, bool is_static) {
  if (t.is_leaf()) t.value.is_static = is_static;
  for (auto& e : t.elems) e = with_flags(e, is_static);
  return t;
}
inline calc::Layout with_flags(calc::Layout const& l, bool s) { return {with_flags(l.shape, s), with_flags(l.stride, s)}; }
inline calc::Tiler with_flags(calc::Tiler t, bool s) {
  if (t.kind == calc::Tiler::Kind::integer) t.value.is_static = s;
  if (t.kind == calc::Tiler::Kind::layout) t.layout = with_flags(t.layout, s);
  for (auto& e : t.elems) e = with_flags(e, s);
  return t;
}
inline calc::Value with_flags(calc::Value const& v, bool s) {
  if (auto const* x = std::get_if<calc::IntTuple>(&v)) return with_flags(*x, s);
  if (auto const* x = std::get_if<calc::Layout>(&v)) return with_flags(*x, s);
  if (auto const* x = std::get_if<calc::Tiler>(&v)) return with_flags(*x, s);
  if (auto const* x = std::get_if<calc::ComposedLayout>(&v)) {
    calc::ComposedLayout c = *x;
    c.offset.is_static = s;
    c.layout = with_flags(c.layout, s);
    return c;
  }
  return v;
}

// The text with the static marks removed: "_8" -> "8" (a lone `_` stays).
inline std::string strip_static(std::string const& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i + 1 < s.size() && (s[i + 1] == '-' || (s[i + 1] >= '0' && s[i + 1] <= '9'))) continue;
    out += s[i];
  }
  return out;
}

// Every leaf of the value's layouts and tuples, with its flag.
inline void collect(calc::IntTuple const& t, std::vector<calc::Integer>& out) {
  if (t.is_leaf()) out.push_back(t.value);
  for (auto const& e : t.elems) collect(e, out);
}
inline std::vector<calc::Integer> all_leaves(calc::Value const& v) {
  std::vector<calc::Integer> out;
  if (auto const* x = std::get_if<calc::IntTuple>(&v)) collect(*x, out);
  if (auto const* x = std::get_if<calc::Layout>(&v)) {
    collect(x->shape, out);
    collect(x->stride, out);
  }
  return out;
}

}  // namespace tessel::oracle
