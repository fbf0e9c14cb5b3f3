// calc/product.cpp -- the products on values (layout/product.hpp).
#include "calc/product.hpp"

#include "calc/complement.hpp"
#include "calc/composition.hpp"
#include "calc/divide.hpp"  // tile_unzip, unpack_mode1, unpack_both

namespace tessel::calc {

namespace {

Layout product_by_layout(Layout const& a, Layout const& b) {
  require_positive_extents(b, "logical_product");
  Layout c = complement(a, IntTuple::leaf(size(a) * cosize(b)));
  return concat({a, composition(c, b)});
}

}  // namespace

Layout logical_product(Layout const& a, Tiler const& t) {
  switch (t.kind) {
    case Tiler::Kind::underscore: return a;
    case Tiler::Kind::layout: return product_by_layout(a, t.layout);
    case Tiler::Kind::integer:
      if (t.value.value < 1) fail("logical_product: a repeat count must be >= 1, got " + to_string(t.value));
      return product_by_layout(a, make_layout(IntTuple::leaf(t.value)));
    case Tiler::Kind::tuple: break;
  }
  int const rt = int(t.elems.size());
  int const ra = rank(a);
  if (rt > ra) {
    fail("logical_product: the by-mode tiler " + to_string(t) + " has more modes (" + std::to_string(rt) +
         ") than the layout " + to_string(a) + " (rank " + std::to_string(ra) + ")");
  }
  std::vector<Layout> modes;
  for (int i = 0; i < ra; ++i) {
    Layout m = mode(a, i);
    modes.push_back(i < rt ? logical_product(m, t.elems[std::size_t(i)]) : m);
  }
  return concat(modes);
}

Layout zipped_product(Layout const& a, Tiler const& t) { return tile_unzip(logical_product(a, t), t); }
Layout tiled_product(Layout const& a, Tiler const& t) { return unpack_mode1(zipped_product(a, t)); }
Layout flat_product(Layout const& a, Tiler const& t) { return unpack_both(zipped_product(a, t)); }

namespace {
// logical_product of A and B padded to the same rank, as (layout<0>, layout<1>).
Layout padded_product(Layout const& a, Layout const& b) {
  int const r = std::max(rank(a), rank(b));
  return product_by_layout(append_to_rank(a, r), append_to_rank(b, r));
}
// zip(x, y) pairs the modes of x with those of y. When x is a tuple whose rank differs from y's,
// CuTe's zip drops y's extra modes (a wrong layout) or fails to compile; refuse instead.
Layout zip_layouts(Layout const& x, Layout const& y, char const* op, char const* xname, char const* yname) {
  if (x.shape.is_tuple() && x.shape.rank() != y.shape.rank()) {
    fail(std::string(op) + ": the " + xname + " " + to_string(x) + " has rank " + std::to_string(x.shape.rank()) +
         " but the " + yname + " " + to_string(y) + " has rank " + std::to_string(y.shape.rank()) +
         ", so zip cannot pair their modes (CuTe's zip drops modes here or fails to compile). Write both "
         "operands as rank-1 tuples, e.g. (6):(_1) instead of 6:_1");
  }
  return Layout{zip(x.shape, y.shape), zip(x.stride, y.stride)};
}
}  // namespace

Layout blocked_product(Layout const& a, Layout const& b) {
  Layout p = padded_product(a, b);
  return zip_layouts(mode(p, 0), mode(p, 1), "blocked_product", "block", "repetition complement(A) o B");
}

Layout raked_product(Layout const& a, Layout const& b) {
  Layout p = padded_product(a, b);
  return zip_layouts(mode(p, 1), mode(p, 0), "raked_product", "repetition complement(A) o B", "block");
}

}  // namespace tessel::calc
