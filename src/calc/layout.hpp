// calc/layout.hpp -- run-time layouts (shape:stride) and tilers.
//
// The run-time twin of include/tessel/layout/layout.hpp. A Layout pairs a shape and a congruent
// stride (IntTuples without `_`); L(i) splits the index i colexicographically over the shape (the
// first mode varies fastest, the last absorbs overflow) and sums coordinate * stride.
//   e.g.  (4,(2,3)):(2,(1,8)) at 9 == at (1,(0,1)) == 1*2 + 0*1 + 1*8 == 10
//
// A Tiler is what the right-hand side of composition/divide/product accepts: a layout, an integer
// n (meaning n:_1), `_` (keep the mode), or a tuple of tilers (by-mode).
#pragma once

#include "calc/int_tuple.hpp"

#include <string>
#include <vector>

namespace tessel::calc {

struct Layout {
  IntTuple shape;
  IntTuple stride;
  friend bool operator==(Layout const&, Layout const&) = default;
};

// Layout from a congruent shape and stride. Throws when they are not congruent or contain `_`.
Layout make_layout(IntTuple shape, IntTuple stride);
// The compact layout of `shape` (column-major unless Major::right).
Layout make_layout(IntTuple const& shape, Major major = Major::left);
// make_layout(L0, L1, ...): the layout whose modes are L0, L1, ...
Layout concat(std::vector<Layout> const& modes);

// Throws AlgebraError unless every extent is >= 1 (the algebra's precondition on shapes).
void require_positive_extents(Layout const& l, char const* op);

std::string to_string(Layout const& l);  // shape:stride

int rank(Layout const& l);
int depth(Layout const& l);
Layout mode(Layout const& l, int i);  // get<i>(L)
Integer size(Layout const& l);
// 1 + sum((s - 1) * |d|) over the leaves (layout.hpp cosize).
Integer cosize(Layout const& l);
Layout flatten(Layout const& l);

// L(coord): coord is an integer index or a (hierarchical) coordinate without `_`.
Integer eval(Layout const& l, IntTuple const& coord);
Integer eval(Layout const& l, std::int64_t index);  // run-time index
// L(coord) with `_` in coord: the sub-layout of the kept modes (slice).
Layout slice(Layout const& l, IntTuple const& coord);

// append<N>(L): pad to rank N with _1:_0 modes.
Layout append_to_rank(Layout const& l, int n);

// ---- tilers ---------------------------------------------------------------------------------

struct Tiler {
  enum class Kind : std::uint8_t { integer, underscore, layout, tuple };
  Kind kind = Kind::integer;
  Integer value;             // integer
  Layout layout;             // layout
  std::vector<Tiler> elems;  // tuple

  static Tiler integer(Integer v) { return Tiler{Kind::integer, v, {}, {}}; }
  static Tiler underscore() { return Tiler{Kind::underscore, {}, {}, {}}; }
  static Tiler of_layout(Layout l) { return Tiler{Kind::layout, {}, std::move(l), {}}; }
  static Tiler tuple(std::vector<Tiler> e) { return Tiler{Kind::tuple, {}, {}, std::move(e)}; }
  // An IntTuple read as a tiler: leaves are integers, `_` stays `_`.
  static Tiler of_int_tuple(IntTuple const& t);

  bool is_tuple() const { return kind == Kind::tuple; }
  friend bool operator==(Tiler const&, Tiler const&) = default;
};

std::string to_string(Tiler const& t);  // e.g. (_3:_4,_8,_)
int depth(Tiler const& t);
std::size_t leaf_count(Tiler const& t);

// zip2_by(t, guide) (int_tuple.hpp): split the rank-2 modes at the terminals of the guide into
// (firsts, seconds) and append t's modes past the guide's rank to the seconds.
IntTuple zip2_by(IntTuple const& t, Tiler const& guide);

}  // namespace tessel::calc
