// calc/layout.cpp -- Layout and Tiler basics, mirroring layout/layout.hpp.
#include "calc/layout.hpp"

namespace tessel::calc {

Layout make_layout(IntTuple shape, IntTuple stride) {
  if (has_underscore(shape) || has_underscore(stride)) {
    fail("a layout's shape and stride cannot contain `_`: " + to_string(shape) + ":" + to_string(stride));
  }
  if (!congruent(shape, stride)) {
    fail("a layout needs a shape and a stride of the same profile (congruent); got " + to_string(shape) + ":" +
         to_string(stride));
  }
  return Layout{std::move(shape), std::move(stride)};
}

Layout make_layout(IntTuple const& shape, Major major) {
  if (has_underscore(shape)) fail("make_layout: the shape " + to_string(shape) + " contains `_`");
  return Layout{shape, compact_major(shape, major)};
}

Layout concat(std::vector<Layout> const& modes) {
  std::vector<IntTuple> s, d;
  s.reserve(modes.size());
  d.reserve(modes.size());
  for (auto const& m : modes) {
    s.push_back(m.shape);
    d.push_back(m.stride);
  }
  return Layout{IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d))};
}

void require_positive_extents(Layout const& l, char const* op) {
  for (auto x : leaves(l.shape)) {
    if (x.value < 1) {
      fail(std::string(op) + ": every extent must be >= 1; " + to_string(l) + " has extent " + to_string(x));
    }
  }
}

std::string to_string(Layout const& l) { return to_string(l.shape) + ":" + to_string(l.stride); }

int rank(Layout const& l) { return l.shape.rank(); }
int depth(Layout const& l) { return depth(l.shape); }

Layout mode(Layout const& l, int i) { return Layout{l.shape.mode(i), l.stride.mode(i)}; }

Integer size(Layout const& l) { return product(l.shape); }

namespace {
// inner_product((s - _1), |d|) as layout.hpp computes it: a left fold from _0 over the modes.
Integer cosize_sum(IntTuple const& s, IntTuple const& d) {
  if (s.is_tuple()) {
    Integer acc = static_int(0);
    for (std::size_t i = 0; i < s.elems.size(); ++i) acc = acc + cosize_sum(s.elems[i], d.elems[i]);
    return acc;
  }
  return (s.value - static_int(1)) * abs(d.value);
}
}  // namespace

Integer cosize(Layout const& l) { return cosize_sum(l.shape, l.stride) + static_int(1); }

Layout flatten(Layout const& l) { return Layout{flatten(l.shape), flatten(l.stride)}; }

Integer eval(Layout const& l, IntTuple const& coord) {
  if (has_underscore(coord)) fail("evaluating " + to_string(l) + " at " + to_string(coord) + ": use slice for `_`");
  if (coord.is_leaf() && coord.value.value < 0) {
    fail("the index " + to_string(coord) + " into " + to_string(l) + " is negative");
  }
  return crd2idx(coord, l.shape, l.stride);
}

Integer eval(Layout const& l, std::int64_t index) { return eval(l, IntTuple::leaf(dynamic_int(index))); }

Layout slice(Layout const& l, IntTuple const& coord) {
  return Layout{slice(coord, l.shape), slice(coord, l.stride)};
}

Layout append_to_rank(Layout const& l, int n) {
  return Layout{append_to_rank(l.shape, n, IntTuple::leaf(static_int(1))),
                append_to_rank(l.stride, n, IntTuple::leaf(static_int(0)))};
}

// ---- tilers ---------------------------------------------------------------------------------

Tiler Tiler::of_int_tuple(IntTuple const& t) {
  switch (t.kind) {
    case IntTuple::Kind::leaf: return integer(t.value);
    case IntTuple::Kind::underscore: return underscore();
    case IntTuple::Kind::tuple: break;
  }
  std::vector<Tiler> e;
  for (auto const& x : t.elems) e.push_back(of_int_tuple(x));
  return tuple(std::move(e));
}

std::string to_string(Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::integer: return to_string(t.value);
    case Tiler::Kind::underscore: return "_";
    case Tiler::Kind::layout: return to_string(t.layout);
    case Tiler::Kind::tuple: break;
  }
  std::string s = "(";
  for (std::size_t i = 0; i < t.elems.size(); ++i) {
    if (i) s += ",";
    s += to_string(t.elems[i]);
  }
  return s + ")";
}

int depth(Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::layout: return depth(t.layout);
    case Tiler::Kind::tuple: break;
    default: return 0;
  }
  int d = 0;
  for (auto const& e : t.elems) d = std::max(d, depth(e));
  return d + 1;
}

std::size_t leaf_count(Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::layout: return 2 * leaf_count(t.layout.shape);
    case Tiler::Kind::tuple: break;
    default: return 1;
  }
  std::size_t n = 0;
  for (auto const& e : t.elems) n += leaf_count(e);
  return n;
}

IntTuple zip2_by(IntTuple const& t, Tiler const& guide) {
  if (guide.is_tuple()) {
    std::size_t const gr = guide.elems.size();
    if (!t.is_tuple() || t.elems.size() < gr) {
      fail("zip2_by: the guide " + to_string(guide) + " has more modes than " + to_string(t));
    }
    std::vector<IntTuple> firsts, seconds;
    for (std::size_t i = 0; i < gr; ++i) {
      IntTuple split = zip2_by(t.elems[i], guide.elems[i]);
      firsts.push_back(split.elems[0]);
      seconds.push_back(split.elems[1]);
    }
    for (std::size_t i = gr; i < t.elems.size(); ++i) seconds.push_back(t.elems[i]);
    return IntTuple::tuple({IntTuple::tuple(std::move(firsts)), IntTuple::tuple(std::move(seconds))});
  }
  if (!t.is_tuple() || t.elems.size() != 2) {
    if (guide.kind == Tiler::Kind::underscore) {
      fail("the tiler element `_` keeps the mode " + to_string(t) +
           " whole, so it has no (tile, rest) pair to regroup; zipped/tiled/flat divides and products need a "
           "layout or an integer there (1 keeps the mode as the rest)");
    }
    fail("zip2_by: expected a rank-2 (tile, rest) mode at tiler element " + to_string(guide) + ", got " +
         to_string(t));
  }
  return t;
}

}  // namespace tessel::calc
