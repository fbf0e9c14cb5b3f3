// calc/svg.cpp -- the SVG writer of calc/svg.hpp.
#include "calc/svg.hpp"

#include "calc/print_layout.hpp"  // grid_shape, grid_value, grid_cell_limit

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

namespace tessel::calc::svg {

namespace {

std::string escape(std::string const& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

int digits(std::int64_t x) { return int(std::to_string(x).size()); }

constexpr int cell_h = 22;
constexpr int char_w = 8;  // monospace advance at font-size 13, rounded up
constexpr int margin = 12;
constexpr int title_h = 24;
constexpr int panel_gap = 36;

struct Geometry {
  int cell_w, left, top, width, height;
};

Geometry geometry(Panel const& p) {
  std::size_t longest = 1;
  for (auto const& c : p.cells) longest = std::max(longest, c.label.size());
  if (p.index_labels) longest = std::max<std::size_t>(longest, std::size_t(digits(p.cols - 1)));
  Geometry g{};
  g.cell_w = std::max(28, int(longest) * char_w + 12);
  g.left = p.index_labels ? digits(std::max<std::int64_t>(p.rows - 1, 0)) * char_w + 14 : 0;
  g.top = title_h + (p.index_labels ? cell_h : 0);
  int const grid_w = int(p.cols) * g.cell_w;
  g.width = std::max(g.left + grid_w, int(p.title.size()) * char_w);
  g.height = g.top + int(p.rows) * cell_h;
  return g;
}

void render_panel(std::string& out, Panel const& p, int x0, int y0) {
  Geometry g = geometry(p);
  char buf[512];
  out += "  <g class=\"panel\">\n";
  std::snprintf(buf, sizeof buf, "    <text class=\"title\" x=\"%d\" y=\"%d\" font-size=\"14\">", x0, y0 + 16);
  out += buf + escape(p.title) + "</text>\n";
  int const gx = x0 + g.left;
  int const gy = y0 + g.top;
  if (p.index_labels) {
    for (std::int64_t n = 0; n < p.cols; ++n) {
      std::snprintf(buf, sizeof buf,
                    "    <text class=\"index\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">%lld</text>\n",
                    gx + int(n) * g.cell_w + g.cell_w / 2, gy - 6, static_cast<long long>(n));
      out += buf;
    }
    for (std::int64_t m = 0; m < p.rows; ++m) {
      std::snprintf(buf, sizeof buf,
                    "    <text class=\"index\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">%lld</text>\n", gx - 6,
                    gy + int(m) * cell_h + 15, static_cast<long long>(m));
      out += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "    <rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n",
                gx, gy, int(p.cols) * g.cell_w, int(p.rows) * cell_h);
  out += buf;
  for (auto const& c : p.cells) {
    int const x = gx + int(c.col) * g.cell_w;
    int const y = gy + int(c.row) * cell_h;
    std::string const fill = c.colour < 0 ? "#ffffff" : colour_of(c.colour);
    std::snprintf(buf, sizeof buf,
                  "    <g class=\"cell\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#444\"/>"
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
                  x, y, g.cell_w, cell_h, fill.c_str(), x + g.cell_w / 2, y + 15);
    out += buf + escape(c.label) + "</text></g>\n";
  }
  out += "  </g>\n";
}

void require_cells(Panel const& p) {
  if (p.rows < 0 || p.cols < 0 || p.rows > grid_cell_limit || p.cols > grid_cell_limit ||
      p.rows * p.cols > grid_cell_limit) {
    fail("svg: a panel of " + std::to_string(p.rows) + " x " + std::to_string(p.cols) + " cells is too large (limit " +
         std::to_string(grid_cell_limit) + " cells)");
  }
  for (auto const& c : p.cells) {
    if (c.row < 0 || c.row >= p.rows || c.col < 0 || c.col >= p.cols) {
      fail("svg: cell (" + std::to_string(c.row) + "," + std::to_string(c.col) + ") lies outside the " +
           std::to_string(p.rows) + " x " + std::to_string(p.cols) + " panel '" + p.title + "'");
    }
  }
}

template <class L>
Panel offsets_panel(L const& l, Layout const& inner, std::string title) {
  GridShape g = grid_shape(inner, "svg");
  Panel p;
  p.title = std::move(title);
  p.rows = g.rows;
  p.cols = g.cols;
  p.cells.reserve(std::size_t(g.rows * g.cols));
  for (std::int64_t m = 0; m < g.rows; ++m) {
    for (std::int64_t n = 0; n < g.cols; ++n) {
      std::int64_t v = grid_value(l, m, n).value;
      p.cells.push_back(Cell{m, n, std::to_string(v), int(((v % 8) + 8) % 8)});
    }
  }
  return p;
}

}  // namespace

std::string colour_of(int key) {
  double const hue = std::fmod(double(key) * 137.50776405, 360.0);
  double const s = 0.60, l = 0.82;
  double const c = (1 - std::fabs(2 * l - 1)) * s;
  double const hp = hue / 60.0;
  double const x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  double const m = l - c / 2;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(std::lround((r + m) * 255)), int(std::lround((g + m) * 255)),
                int(std::lround((b + m) * 255)));
  return buf;
}

std::string render(std::vector<Panel> const& panels) {
  int width = margin, height = 0;
  for (auto const& p : panels) {
    require_cells(p);
    Geometry g = geometry(p);
    width += g.width + panel_gap;
    height = std::max(height, g.height);
  }
  width = width - (panels.empty() ? 0 : panel_gap) + margin;
  height += 2 * margin;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"monospace\" font-size=\"13\">\n",
                width, height, width, height);
  out += buf;
  out += "  <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  int x = margin;
  for (auto const& p : panels) {
    render_panel(out, p, x, margin);
    x += geometry(p).width + panel_gap;
  }
  out += "</svg>\n";
  return out;
}

std::string render(Panel const& panel) { return render(std::vector<Panel>{panel}); }

Panel layout_panel(Layout const& l) { return offsets_panel(l, l, to_string(l)); }

Panel layout_panel(ComposedLayout const& c) { return offsets_panel(c, c.layout, to_string(c)); }

Panel tv_panel(Layout const& tv, std::int64_t rows, std::int64_t cols, std::string title) {
  Panel p;
  p.title = title.empty() ? to_string(tv) : std::move(title);
  p.rows = rows;
  p.cols = cols;
  require_cells(p);
  require_positive_extents(tv, "svg");
  std::int64_t const threads = size(mode(tv, 0)).value;
  std::int64_t const total = size(tv).value;
  if (total > grid_cell_limit * 64) fail("svg: the TV layout " + to_string(tv) + " is too large to draw");
  std::int64_t const values = total / threads;
  std::map<std::pair<std::int64_t, std::int64_t>, bool> seen;
  for (std::int64_t v = 0; v < values; ++v) {
    for (std::int64_t t = 0; t < threads; ++t) {
      std::int64_t idx = eval(tv, t + threads * v).value;
      if (idx < 0 || idx >= rows * cols) {
        fail("svg: the TV layout " + to_string(tv) + " maps thread " + std::to_string(t) + ", value " +
             std::to_string(v) + " to index " + std::to_string(idx) + ", outside the " + std::to_string(rows) + " x " +
             std::to_string(cols) + " tile");
      }
      std::int64_t m = idx % rows, n = idx / rows;
      if (seen.emplace(std::pair{m, n}, true).second) {
        p.cells.push_back(Cell{m, n, std::string("T").append(std::to_string(t)).append("V").append(std::to_string(v)), int(t)});
      }
    }
  }
  return p;
}

void write_file(std::string const& path, std::string const& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("cannot open '" + path + "' for writing");
  f << text;
  f.close();
  if (!f) fail("cannot write '" + path + "'");
}

}  // namespace tessel::calc::svg
