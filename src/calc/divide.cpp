// calc/divide.cpp -- the divides on values (layout/divide.hpp).
#include "calc/divide.hpp"

#include "calc/coalesce.hpp"
#include "calc/complement.hpp"
#include "calc/composition.hpp"

namespace tessel::calc {

namespace {

Layout divide_by_layout(Layout const& a, Layout const& t) {
  Layout rest = complement(t, coalesce(a).shape);
  return composition(a, concat({t, rest}));
}

// repeat<N>(_): `_` itself for N == 1, else a tuple of N underscores.
IntTuple repeat_underscore(int n) {
  if (n == 1) return IntTuple::underscore();
  return IntTuple::tuple(std::vector<IntTuple>(std::size_t(n), IntTuple::underscore()));
}

}  // namespace

Layout logical_divide(Layout const& a, Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::underscore: return a;
    case Tiler::Kind::layout: return divide_by_layout(a, t.layout);
    case Tiler::Kind::integer:
      if (t.value.value < 1) fail("logical_divide: a tile extent must be >= 1, got " + to_string(t.value));
      return divide_by_layout(a, make_layout(IntTuple::leaf(t.value)));
    case Tiler::Kind::tuple: break;
  }
  int const rt = int(t.elems.size());
  int const ra = rank(a);
  if (rt > ra) {
    fail("logical_divide: the by-mode tiler " + to_string(t) + " has more modes (" + std::to_string(rt) +
         ") than the layout " + to_string(a) + " (rank " + std::to_string(ra) + ")");
  }
  std::vector<Layout> modes;
  for (int i = 0; i < ra; ++i) {
    Layout m = mode(a, i);
    modes.push_back(i < rt ? logical_divide(m, t.elems[std::size_t(i)]) : m);
  }
  return concat(modes);
}

Layout tile_unzip(Layout const& l, Tiler const& t) { return Layout{zip2_by(l.shape, t), zip2_by(l.stride, t)}; }

Layout unpack_mode1(Layout const& z) {
  IntTuple coord = IntTuple::tuple({IntTuple::underscore(), repeat_underscore(z.shape.mode(1).rank())});
  return slice(z, coord);
}

Layout unpack_both(Layout const& z) {
  IntTuple coord = IntTuple::tuple({repeat_underscore(z.shape.mode(0).rank()), repeat_underscore(z.shape.mode(1).rank())});
  return slice(z, coord);
}

Layout zipped_divide(Layout const& a, Tiler const& t) { return tile_unzip(logical_divide(a, t), t); }
Layout tiled_divide(Layout const& a, Tiler const& t) { return unpack_mode1(zipped_divide(a, t)); }
Layout flat_divide(Layout const& a, Tiler const& t) { return unpack_both(zipped_divide(a, t)); }

}  // namespace tessel::calc
