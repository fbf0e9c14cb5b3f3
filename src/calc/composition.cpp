// calc/composition.cpp -- CuTe's composition walk on values, with tessel's admissibility rule.
#include "calc/composition.hpp"

#include "calc/coalesce.hpp"

namespace tessel::calc {

namespace {

using wide = __int128;

// A o (rs:rd) for a flat, coalesced A (composition.hpp detail::compose_impl).
Layout compose_impl(Layout const& flat, IntTuple const& rs, IntTuple const& rd) {
  if (rs.is_tuple()) {
    std::vector<Layout> modes;
    modes.reserve(rs.elems.size());
    for (std::size_t i = 0; i < rs.elems.size(); ++i) modes.push_back(compose_impl(flat, rs.elems[i], rd.elems[i]));
    return concat(modes);
  }
  if (rd.value.value == 0) return Layout{rs, rd};
  if (!flat.shape.is_tuple()) return Layout{rs, IntTuple::leaf(rd.value * flat.stride.value)};
  auto const ls = leaves(flat.shape);
  auto const ld = leaves(flat.stride);
  std::size_t const r = ls.size();
  std::vector<Integer> res_s, res_d;
  Integer rest_s = rs.value;
  Integer rest_d = rd.value;
  for (std::size_t k = 0; k + 1 < r; ++k) {
    Integer c = ls[k];
    Integer ad = abs(rest_d);
    Integer next_s = ceil_div(c, ad);
    Integer next_d = ceil_div(ad, c) * signum(rest_d);
    if (next_s.value == 1 || rest_s.value == 1) {
      rest_d = next_d;
      continue;
    }
    Integer new_s = min(next_s, rest_s);
    res_s.push_back(new_s);
    res_d.push_back(rest_d * ld[k]);
    rest_s = rest_s / new_s;
    rest_d = next_d;
  }
  if (res_s.empty()) return Layout{IntTuple::leaf(rest_s), IntTuple::leaf(rest_d * ld[r - 1])};
  if (rest_s.value == 1) return Layout{unwrap(make_flat_tuple(res_s)), unwrap(make_flat_tuple(res_d))};
  res_s.push_back(rest_s);
  res_d.push_back(rest_d * ld[r - 1]);
  return Layout{make_flat_tuple(res_s), make_flat_tuple(res_d)};
}

// The even-walk test of one leaf n:d of B against the flat extents c of A; on success adds the
// largest position the leaf reaches in each mode of A to `reach`.
bool even_walk(std::vector<std::int64_t> const& c, wide n, wide d, std::vector<wide>& reach) {
  std::size_t const ra = c.size();
  if (ra == 1 || n <= 1 || d == 0) return true;
  if (d < 0) return false;
  for (std::size_t k = 0; k + 1 < ra; ++k) {
    if (n <= 1) break;
    wide ck = c[k];
    wide q = (ck + d - 1) / d;
    bool even = n <= q || (n % q == 0 && (d % ck == 0 || ck % d == 0));
    if (!even) return false;
    wide placed = n < q ? n : q;
    reach[k] += (placed - 1) * d;
    n /= placed;
    d = (d + ck - 1) / ck;
  }
  return true;
}

bool leaf_sizes_match(IntTuple const& bs, IntTuple const& rs) {
  if (bs.is_tuple()) {
    if (!rs.is_tuple() || rs.elems.size() != bs.elems.size()) return false;
    for (std::size_t i = 0; i < bs.elems.size(); ++i) {
      if (!leaf_sizes_match(bs.elems[i], rs.elems[i])) return false;
    }
    return true;
  }
  return product(rs).value == bs.value.value;
}

// tessel's admissibility rule (composition.hpp composition_admissible), on values.
bool admissible(Layout const& flat, Layout const& b, Layout const& r) {
  std::vector<std::int64_t> c;
  for (auto x : leaves(flat.shape)) c.push_back(x.value);
  auto const bs = leaves(b.shape);
  auto const bd = leaves(b.stride);
  std::vector<wide> reach(c.size(), 0);
  bool even = true;
  for (std::size_t j = 0; j < bs.size() && even; ++j) even = even_walk(c, bs[j].value, bd[j].value, reach);
  for (std::size_t k = 0; k + 1 < c.size() && even; ++k) {
    if (reach[k] >= c[k]) even = false;
  }
  if (even) return true;
  if (!leaf_sizes_match(b.shape, r.shape)) return false;
  std::int64_t const n = size(b).value;
  require_pointwise_budget(n, leaf_count(b.shape) + leaf_count(r.shape) + leaf_count(flat.shape),
                           "composition: " + to_string(b) + " walks across the modes of " + to_string(flat) +
                               " unevenly, and deciding whether the result is still right");
  for (std::int64_t i = 0; i < n; ++i) {
    IntTuple idx = IntTuple::leaf(dynamic_int(i));
    Integer bi = crd2idx(idx, b.shape, b.stride);
    if (crd2idx(idx, r.shape, r.stride).value != crd2idx(IntTuple::leaf(bi), flat.shape, flat.stride).value) {
      return false;
    }
  }
  return true;
}

}  // namespace

void require_pointwise_budget(std::int64_t points, std::size_t leaves_per_point, std::string const& what) {
  wide const work = wide(points) * wide(leaves_per_point + 1);
  if (work > pointwise_work_limit) {
    fail(what + " needs a point-by-point check of " + std::to_string(points) + " points; the calculator's limit is " +
         std::to_string(pointwise_work_limit / std::int64_t(leaves_per_point + 1)) + " points for layouts of this size");
  }
}

Layout composition_unchecked(Layout const& a, Layout const& b) {
  require_positive_extents(a, "composition");
  require_positive_extents(b, "composition");
  return compose_impl(coalesce_x(a), b.shape, b.stride);
}

Layout composition(Layout const& a, Layout const& b) {
  require_positive_extents(a, "composition");
  require_positive_extents(b, "composition");
  Layout flat = coalesce_x(a);
  Layout r = compose_impl(flat, b.shape, b.stride);
  if (!admissible(flat, b, r)) {
    fail("composition: " + to_string(b) + " walks across the modes of " + to_string(a) +
         " unevenly (stride/shape divisibility): no layout of this form equals A o B. Where N elements at "
         "spacing d meet a mode of extent c, tessel needs N <= ceil(c/d), or N a multiple of ceil(c/d) with c "
         "and d dividing one another (docs/layout_algebra.md)");
  }
  return r;
}

Layout composition(Layout const& a, Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::underscore: return a;
    case Tiler::Kind::layout: return composition(a, t.layout);
    case Tiler::Kind::integer:
      return composition(a, Layout{IntTuple::leaf(t.value), IntTuple::leaf(static_int(1))});
    case Tiler::Kind::tuple: break;
  }
  int const rt = int(t.elems.size());
  if (rt > rank(a)) {
    fail("composition: the by-mode tiler " + to_string(t) + " has more modes (" + std::to_string(rt) +
         ") than the layout " + to_string(a) + " (rank " + std::to_string(rank(a)) + ")");
  }
  std::vector<Layout> modes;
  for (int i = 0; i < rt; ++i) modes.push_back(composition(mode(a, i), t.elems[std::size_t(i)]));
  return concat(modes);
}

}  // namespace tessel::calc
