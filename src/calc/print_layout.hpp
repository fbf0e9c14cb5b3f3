// calc/print_layout.hpp -- a layout as CuTe's print_layout table (layout/print_layout.hpp's format).
//
//   print_layout((2,3):(1,2)) ==
//   (2,3):(1,2)
//          0    1    2
//       +---+---+---+
//    0  | 0 | 2 | 4 |
//       +---+---+---+
//    1  | 1 | 3 | 5 |
//       +---+---+---+
// Byte for byte CuTe's text for rank-2 layouts (cells as wide as cosize's digits plus padding,
// the trailing space of the column-index row kept). A rank-1 layout is drawn as one column
// (CuTe refuses it); rank > 2 is refused with a message. Swizzled layouts are evaluated through
// the swizzle (the width still comes from the inner layout's cosize, as in CuTe).
//   Pre: rank 1 or 2; every extent >= 1; at most grid_cell_limit cells.
#pragma once

#include "calc/layout.hpp"
#include "calc/swizzle.hpp"

#include <functional>
#include <string>

namespace tessel::calc {

inline constexpr std::int64_t grid_cell_limit = std::int64_t(1) << 16;

std::string print_layout(Layout const& l);
std::string print_layout(ComposedLayout const& c);

// The (rows, cols) of the grid a layout is drawn on, and its value at (m, n); shared with the SVG
// writer. Throws AlgebraError for rank > 2, extents < 1 or more than grid_cell_limit cells.
struct GridShape {
  std::int64_t rows = 0, cols = 0;
};
GridShape grid_shape(Layout const& l, char const* what);
Integer grid_value(Layout const& l, std::int64_t m, std::int64_t n);
Integer grid_value(ComposedLayout const& c, std::int64_t m, std::int64_t n);

}  // namespace tessel::calc
