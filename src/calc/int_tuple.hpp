// calc/int_tuple.hpp -- run-time IntTuples: a tree whose leaves are Integers (or `_`).
//
// The run-time twin of include/tessel/core/{tuple,int_tuple,tuple_algorithms,underscore}.hpp.
// A node is a leaf (an Integer with its static flag), the Underscore `_`, or a tuple of nodes.
// Structure is kept exactly as written: `(8)` is a rank-1 tuple, `8` a leaf.
//   e.g.  parse "(_4,(2,_))"  ->  tuple(leaf _4, tuple(leaf 2, underscore))
//
// Decisions the templated code takes on static values (is this extent _1? do these neighbours
// merge?) are taken here on the values, as if every leaf were static; the static flags only
// follow the arithmetic (calc/integer.hpp). Functions mirror the templated ones of the same name.
#pragma once

#include "calc/integer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::calc {

struct IntTuple {
  enum class Kind : std::uint8_t { leaf, tuple, underscore };
  Kind kind = Kind::leaf;
  Integer value;                // leaf
  std::vector<IntTuple> elems;  // tuple

  static IntTuple leaf(Integer v) { return IntTuple{Kind::leaf, v, {}}; }
  static IntTuple tuple(std::vector<IntTuple> e) { return IntTuple{Kind::tuple, {}, std::move(e)}; }
  static IntTuple underscore() { return IntTuple{Kind::underscore, {}, {}}; }

  bool is_leaf() const { return kind == Kind::leaf; }
  bool is_tuple() const { return kind == Kind::tuple; }
  bool is_underscore() const { return kind == Kind::underscore; }

  // Number of top-level modes (1 for a leaf or `_`).
  int rank() const { return is_tuple() ? int(elems.size()) : 1; }
  // get<i>: the i-th mode; a leaf is its own mode 0. Throws AlgebraError when out of range.
  IntTuple const& mode(int i) const;

  friend bool operator==(IntTuple const&, IntTuple const&) = default;
};

// CuTe's text: `_8`, `8`, `_`, `(a,b)`, `()`.
std::string to_string(IntTuple const& t);

// True when t is a leaf whose value is v (static or not: decisions are taken on values).
bool is_value(IntTuple const& t, std::int64_t v);

int depth(IntTuple const& t);            // 0 for a leaf
std::size_t leaf_count(IntTuple const& t);
bool has_underscore(IntTuple const& t);
bool congruent(IntTuple const& a, IntTuple const& b);  // same profile
bool all_static(IntTuple const& t);

// Product of the leaves, left to right (`_1` for the empty tuple).
Integer product(IntTuple const& t);
// The leaves, left to right.
std::vector<Integer> leaves(IntTuple const& t);
// flatten: a tuple becomes a flat tuple of its leaves; a leaf stays a leaf.
IntTuple flatten(IntTuple const& t);
IntTuple flatten_to_tuple(IntTuple const& t);
IntTuple wrap(IntTuple const& t);    // a leaf becomes (leaf)
IntTuple unwrap(IntTuple const& t);  // strips rank-1 tuples
IntTuple make_flat_tuple(std::vector<Integer> const& v);

// ceil_div of IntTuples (int_tuple.hpp): tuple/leaf folds the divisor across the modes,
// tuple/tuple divides mode by mode, leaf/tuple divides by the product.
IntTuple ceil_div(IntTuple const& a, IntTuple const& b);

// coalesce of a shape (coalesce.hpp): neighbouring leaves merge. As if every leaf were static,
// every neighbour merges, so the result is the product (a leaf).
IntTuple coalesce_shape(IntTuple const& shape);

// Compact strides of `shape` starting at `current` (LayoutLeft: first mode fastest; LayoutRight:
// last mode fastest). An extent-1 leaf gets stride _0.
enum class Major { left, right };
IntTuple compact_major(IntTuple const& shape, Major major, Integer current = static_int(1));

// The index of coordinate c under (shape, stride), colexicographic (int_tuple.hpp crd2idx).
Integer crd2idx(IntTuple const& coord, IntTuple const& shape, IntTuple const& stride);

// slice(c, t): the elements of t paired with `_` in c, nested underscores lifted.
IntTuple slice(IntTuple const& coord, IntTuple const& t);

// append<N>(t, x): t padded to rank N with copies of x (a leaf is wrapped first unless N == 1).
IntTuple append_to_rank(IntTuple const& t, int n, IntTuple const& x);

// zip(t0, t1) of two IntTuples: ((a0,b0),(a1,b1),...) over the modes of t0; ((t0,t1)) for a leaf t0
// (CuTe's zip wraps a pair whose first element is a leaf).
IntTuple zip(IntTuple const& t0, IntTuple const& t1);

}  // namespace tessel::calc
