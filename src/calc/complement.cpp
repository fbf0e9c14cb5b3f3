// calc/complement.cpp -- complement on values (layout/complement.hpp complement_filtered).
#include "calc/complement.hpp"

#include "calc/coalesce.hpp"
#include "calc/composition.hpp"  // require_pointwise_budget

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace tessel::calc {

namespace {

using wide = __int128;

// The modes of F in increasing stride order (stable: equal strides keep their order).
std::vector<std::size_t> stride_order(std::vector<Integer> const& d) {
  std::vector<std::size_t> order(d.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return d[x].value < d[y].value; });
  return order;
}

// The rest mode ceil(M / next) : next, and R = coalesce((gaps..., rest) : (strides..., next)).
Layout finish(std::vector<Integer> const& gaps, std::vector<Integer> const& gap_strides, Integer next,
              IntTuple const& cotarget) {
  IntTuple rest_shape = coalesce_shape(ceil_div(cotarget, IntTuple::leaf(next)));
  IntTuple rest_stride = compact_major(rest_shape, Major::left, next);
  return coalesce(Layout{IntTuple::tuple({make_flat_tuple(gaps), rest_shape}),
                         IntTuple::tuple({make_flat_tuple(gap_strides), rest_stride})});
}

Layout complement_filtered(Layout const& f, IntTuple const& cotarget) {
  if (f.stride.is_leaf() && f.stride.value.value == 0) return make_layout(coalesce_shape(cotarget));
  auto const s = leaves(f.shape);
  auto const d = leaves(f.stride);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].value < 1 || d[i].value < 0) {
      fail("complement: extents must be >= 1 and strides >= 0 (negative strides have no complement), got " +
           to_string(s[i]) + ":" + to_string(d[i]) + " in " + to_string(f));
    }
  }
  if (s.size() == 1) {
    // One mode d0 (in units of 1) then the rest: ((d0), rest) : ((_1), rest_stride).
    return finish({d[0]}, {static_int(1)}, d[0] * s[0], cotarget);
  }
  // Take the modes in increasing stride order; each contributes the gap before it.
  std::vector<Integer> gaps, gap_strides{static_int(1)};
  for (std::size_t m : stride_order(d)) {
    Integer prev = gap_strides.back();
    gaps.push_back(d[m] / prev);
    gap_strides.push_back(d[m] * s[m]);
  }
  Integer next = gap_strides.back();
  gap_strides.pop_back();
  return finish(gaps, gap_strides, next, cotarget);
}

// tessel's admissibility rule (complement.hpp complement_admissible), on values.
bool admissible(Layout const& f, IntTuple const& cotarget, Layout const& r) {
  auto const s = leaves(f.shape);
  auto const d = leaves(f.stride);
  bool nested = true;
  wide prev = 1;
  for (std::size_t m : stride_order(d)) {
    wide di = d[m].value;
    if (s.size() == 1 && di == 0) break;
    nested = di > 0 && di >= prev && di % prev == 0;
    if (!nested) break;
    prev = di * s[m].value;
  }
  if (nested) return true;
  for (auto x : leaves(r.shape)) {
    if (x.value < 1) return false;  // an empty mode: F is not injective
  }
  std::int64_t const n = size(r).value;
  std::int64_t const nf = size(f).value;
  require_pointwise_budget(n < nf ? nf : n, leaf_count(r.shape) + leaf_count(f.shape),
                           "complement: the modes of " + to_string(f) +
                               " do not nest, and deciding whether a complement still exists");
  std::unordered_set<std::int64_t> offsets;
  for (std::int64_t j = 0; j < nf; ++j) offsets.insert(crd2idx(IntTuple::leaf(dynamic_int(j)), f.shape, f.stride).value);
  std::int64_t last = crd2idx(IntTuple::leaf(dynamic_int(0)), r.shape, r.stride).value;
  for (std::int64_t i = 1; i < n; ++i) {
    std::int64_t ri = crd2idx(IntTuple::leaf(dynamic_int(i)), r.shape, r.stride).value;
    if (ri <= last || offsets.count(ri)) return false;
    last = ri;
  }
  return nf >= 1 && n >= product(cotarget).value / nf;
}

Layout checked(Layout const& f, IntTuple const& cotarget) {
  Layout r = complement_filtered(f, cotarget);
  if (!admissible(f, cotarget, r)) {
    fail("complement: the modes of " + to_string(f) +
         " overlap or interleave (sorted by stride, each stride must be a positive multiple of the previous "
         "stride times its extent), so no complement exists (docs/layout_algebra.md)");
  }
  return r;
}

}  // namespace

Layout complement(Layout const& a, IntTuple const& cotarget) {
  require_positive_extents(a, "complement");
  if (has_underscore(cotarget)) fail("complement: the cotarget " + to_string(cotarget) + " cannot contain `_`");
  for (auto x : leaves(cotarget)) {
    if (x.value < 1) fail("complement: the cotarget's extents must be >= 1, got " + to_string(cotarget));
  }
  return checked(filter(a), cotarget);
}

Layout complement(Layout const& a) {
  require_positive_extents(a, "complement");
  Layout f = filter(a);
  return checked(f, IntTuple::leaf(cosize(f)));
}

}  // namespace tessel::calc
