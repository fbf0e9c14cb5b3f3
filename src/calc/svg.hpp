// calc/svg.hpp -- drawing layouts as SVG grids: offsets, swizzled offsets, TV layouts.
//
// A Panel is a rows x cols grid of labelled, optionally coloured cells with a title; render()
// lays panels out side by side in one standalone SVG document (viewable in a browser). Cells are
// sized from the longest label, so wide layouts (64 columns of 4-digit offsets) stay legible, and
// every cell is one <g class="cell"> element holding its <rect> and <text>.
//
//   layout_panel(L)          cell (m,n) labelled L(m,n), coloured by offset (a rank-1 L is a column)
//   layout_panel(Sw o o o L) the same through the swizzle
//   tv_panel(TV, M, N)       a thread-value layout TV: (thread, value) -> index into an M x N tile
//                            (column-major, index = m + n*M); cell (m,n) labelled T<t>V<v>,
//                            coloured by thread -- what `tessel mma` / `tessel copy` draw for the
//                            A/B/C or source/destination layouts of an atom (one panel each).
// Pre: at most grid_cell_limit cells per panel (calc/print_layout.hpp); throws AlgebraError.
#pragma once

#include "calc/layout.hpp"
#include "calc/swizzle.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::calc::svg {

struct Cell {
  std::int64_t row = 0, col = 0;
  std::string label;
  int colour = -1;  // a key into the palette (e.g. a thread id or an offset); -1 = no fill
};

struct Panel {
  std::string title;
  std::int64_t rows = 0, cols = 0;
  std::vector<Cell> cells;  // at most one per (row, col); cells left out are drawn empty
  bool index_labels = true;  // row and column numbers along the edges
};

// The fill colour of a palette key: well-separated pastel hues, stable for a key.
std::string colour_of(int key);

std::string render(std::vector<Panel> const& panels);
std::string render(Panel const& panel);

Panel layout_panel(Layout const& l);
Panel layout_panel(ComposedLayout const& c);
// TV: a layout of rank >= 1 whose mode 0 is the thread and whose other modes (if any) the value.
Panel tv_panel(Layout const& tv, std::int64_t rows, std::int64_t cols, std::string title = {});

// Writes `text` to `path`; throws AlgebraError naming the path when it cannot.
void write_file(std::string const& path, std::string const& text);

}  // namespace tessel::calc::svg
