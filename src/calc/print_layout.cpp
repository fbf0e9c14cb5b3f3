// calc/print_layout.cpp -- CuTe's print_layout table on run-time layouts.
#include "calc/print_layout.hpp"


namespace tessel::calc {

namespace {

int num_digits(std::int64_t x) {
  int n = 1;
  while (x >= 10) {
    x /= 10;
    ++n;
  }
  return n;
}

// printf's "%*lld": right-aligned in `width` characters (wider numbers are not cut).
std::string padded(std::int64_t x, int width) {
  std::string s = std::to_string(x);
  if (int(s.size()) < width) s.insert(0, std::size_t(width) - s.size(), ' ');
  return s;
}

IntTuple grid_coord(Layout const& l, std::int64_t m, std::int64_t n) {
  if (rank(l) == 1) return IntTuple::leaf(dynamic_int(m));
  return IntTuple::tuple({IntTuple::leaf(dynamic_int(m)), IntTuple::leaf(dynamic_int(n))});
}

std::string table(std::string const& heading, GridShape g, Integer cosize_value,
                  std::function<Integer(std::int64_t, std::int64_t)> const& value) {
  int const w = num_digits(cosize_value.value) + 2;
  std::string const delim = "+-----------------------";
  std::string out = heading + "\n";
  out += "    ";
  for (std::int64_t n = 0; n < g.cols; ++n) out += "  " + padded(n, w - 2) + " ";
  out += "\n";
  std::string rule = "    ";
  for (std::int64_t n = 0; n < g.cols; ++n) rule += delim.substr(0, std::size_t(w + 1));
  rule += "+\n";
  for (std::int64_t m = 0; m < g.rows; ++m) {
    out += rule;
    out += padded(m, 2) + "  ";
    for (std::int64_t n = 0; n < g.cols; ++n) out += "| " + padded(value(m, n).value, w - 2) + " ";
    out += "|\n";
  }
  out += rule;
  return out;
}

}  // namespace

GridShape grid_shape(Layout const& l, char const* what) {
  int const r = rank(l);
  if (r > 2) {
    fail(std::string(what) + " needs a layout of rank 1 or 2 (rows, columns); " + to_string(l) + " has rank " +
         std::to_string(r) + ". Group or select modes first, e.g. with get(L, i) or coalesce(L, (_1,_1))");
  }
  require_positive_extents(l, what);
  GridShape g{size(mode(l, 0)).value, r == 2 ? size(mode(l, 1)).value : 1};
  if (g.rows > grid_cell_limit || g.cols > grid_cell_limit || g.rows * g.cols > grid_cell_limit) {
    fail(std::string(what) + ": " + to_string(l) + " has " + std::to_string(g.rows) + " x " + std::to_string(g.cols) +
         " cells; the limit is " + std::to_string(grid_cell_limit));
  }
  return g;
}

Integer grid_value(Layout const& l, std::int64_t m, std::int64_t n) { return eval(l, grid_coord(l, m, n)); }

Integer grid_value(ComposedLayout const& c, std::int64_t m, std::int64_t n) {
  return eval(c, grid_coord(c.layout, m, n));
}

std::string print_layout(Layout const& l) {
  GridShape g = grid_shape(l, "print_layout");
  return table(to_string(l), g, cosize(l), [&](std::int64_t m, std::int64_t n) { return grid_value(l, m, n); });
}

std::string print_layout(ComposedLayout const& c) {
  GridShape g = grid_shape(c.layout, "print_layout");
  return table(to_string(c), g, cosize(c.layout), [&](std::int64_t m, std::int64_t n) { return grid_value(c, m, n); });
}

}  // namespace tessel::calc
