// tests/oracle/random_layouts.hpp -- deterministic random IntTuples, layouts and tilers.
//
// Shared by the oracle generator (random all-static cross-checks against the templated code)
// and the calculator's property tests. The generator is a fixed splitmix64 stream, so a seed
// gives the same cases on every platform and standard library. Header-only.
#pragma once

#include "calc/layout.hpp"
#include "calc/swizzle.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessel::oracle {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + std::int64_t(next() % std::uint64_t(hi - lo + 1));
  }
  bool chance(int percent) { return uniform(0, 99) < percent; }
  template <class T>
  T const& pick(std::vector<T> const& v) {
    return v[std::size_t(uniform(0, std::int64_t(v.size()) - 1))];
  }

 private:
  std::uint64_t s_;
};

// How random layouts are made.
enum class Strides {
  compact,     // a permutation of the compact strides: a bijection onto [0, size)
  nested,      // compact with gaps (each stride a multiple of the previous reach): injective
  arbitrary,   // small random strides, zeros included: anything goes
  any,         // one of the above (and sometimes a broadcast or negative stride)
};

struct LayoutShape {
  int max_rank = 3;         // top-level modes
  int max_sub = 2;          // leaves per nested mode
  int max_leaves = 6;       // leaves in all
  int max_extent = 8;
  int nest_percent = 30;    // chance that a mode is a tuple
  int static_percent = 100; // chance that a leaf is static
};

inline calc::Integer random_integer(Rng& rng, std::int64_t v, int static_percent) {
  return calc::Integer{v, rng.chance(static_percent)};
}

// A shape tree: rank 1..max_rank; a mode is a leaf or a tuple of up to max_sub leaves; the whole
// shape is sometimes a bare leaf (rank-1 non-tuple) or a rank-1 tuple.
inline calc::IntTuple random_shape(Rng& rng, LayoutShape const& o) {
  auto leaf = [&] {
    std::int64_t e = rng.chance(15) ? 1 : rng.uniform(2, o.max_extent);
    return calc::IntTuple::leaf(random_integer(rng, e, o.static_percent));
  };
  if (rng.chance(12)) return leaf();
  int const rank = int(rng.uniform(1, o.max_rank));
  std::vector<calc::IntTuple> modes;
  int leaves = 0;
  for (int i = 0; i < rank && leaves < o.max_leaves; ++i) {
    if (rng.chance(o.nest_percent) && leaves + 2 <= o.max_leaves) {
      int const sub = int(rng.uniform(1, std::min<int>(o.max_sub, o.max_leaves - leaves)));
      std::vector<calc::IntTuple> e;
      for (int j = 0; j < sub; ++j) e.push_back(leaf());
      leaves += sub;
      modes.push_back(calc::IntTuple::tuple(std::move(e)));
    } else {
      modes.push_back(leaf());
      ++leaves;
    }
  }
  return calc::IntTuple::tuple(std::move(modes));
}

// Replace the leaves of `shape` (in order) by `values`, keeping each leaf's static flag chance.
inline calc::IntTuple with_leaves(calc::IntTuple const& shape, std::vector<std::int64_t> const& values, std::size_t& k,
                                  Rng& rng, int static_percent) {
  if (shape.is_tuple()) {
    std::vector<calc::IntTuple> e;
    for (auto const& x : shape.elems) e.push_back(with_leaves(x, values, k, rng, static_percent));
    return calc::IntTuple::tuple(std::move(e));
  }
  return calc::IntTuple::leaf(random_integer(rng, values[k++], static_percent));
}

inline calc::Layout random_layout(Rng& rng, LayoutShape const& o, Strides style = Strides::any) {
  calc::IntTuple shape = random_shape(rng, o);
  auto ext = calc::leaves(shape);
  std::size_t const n = ext.size();
  if (style == Strides::any) {
    std::int64_t r = rng.uniform(0, 9);
    style = r < 4 ? Strides::compact : r < 7 ? Strides::nested : Strides::arbitrary;
  }
  std::vector<std::int64_t> d(n, 0);
  if (style == Strides::arbitrary) {
    for (auto& x : d) x = rng.chance(15) ? 0 : rng.uniform(1, 24);
    if (rng.chance(10)) d[std::size_t(rng.uniform(0, std::int64_t(n) - 1))] *= -1;
  } else {
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[std::size_t(rng.uniform(0, std::int64_t(i) - 1))]);
    std::int64_t reach = 1;
    for (std::size_t i : order) {
      if (style == Strides::nested && rng.chance(35)) reach *= rng.uniform(2, 3);
      d[i] = reach;
      reach *= ext[i].value;
    }
    if (rng.chance(8)) d[std::size_t(rng.uniform(0, std::int64_t(n) - 1))] = 0;  // a broadcast mode
  }
  std::size_t k = 0;
  calc::IntTuple stride = with_leaves(shape, d, k, rng, o.static_percent);
  return calc::Layout{shape, stride};
}

// A tiler for a layout of rank `rank`: a layout, an integer, or a by-mode tuple of layouts,
// integers and `_` (at most `rank` elements).
inline calc::Tiler random_tiler(Rng& rng, LayoutShape const& o, int rank) {
  LayoutShape small = o;
  small.max_rank = 2;
  small.max_leaves = 3;
  small.max_extent = 6;
  std::int64_t r = rng.uniform(0, 9);
  if (r < 4) return calc::Tiler::of_layout(random_layout(rng, small));
  if (r < 5) return calc::Tiler::integer(random_integer(rng, rng.uniform(1, 8), o.static_percent));
  int const n = int(rng.uniform(1, rank));
  std::vector<calc::Tiler> e;
  for (int i = 0; i < n; ++i) {
    std::int64_t k = rng.uniform(0, 9);
    if (k < 2) {
      e.push_back(calc::Tiler::underscore());
    } else if (k < 5) {
      e.push_back(calc::Tiler::integer(random_integer(rng, rng.uniform(1, 6), o.static_percent)));
    } else {
      small.max_rank = 1;
      e.push_back(calc::Tiler::of_layout(random_layout(rng, small)));
    }
  }
  return calc::Tiler::tuple(std::move(e));
}

inline calc::Swizzle random_swizzle(Rng& rng) {
  int b = int(rng.uniform(0, 4));
  int m = int(rng.uniform(0, 5));
  int s = int(rng.uniform(b, 6));
  if (s > 0 && rng.chance(30)) s = -s;
  return calc::Swizzle{b, m, s};
}

}  // namespace tessel::oracle
