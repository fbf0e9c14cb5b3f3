// The SVG writer: documents are well-formed XML (checked by a small independent parser), there is
// exactly one cell element per element of the layout, labelled with its offset (through the
// swizzle for swizzled layouts), wide layouts get a canvas wide enough for every column, and TV
// layouts draw one T#V# cell per (thread, value), coloured by thread.
#include "calc/parse.hpp"
#include "calc/svg.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace tessel;

namespace {

// "" if `doc` is well-formed XML (one root, balanced tags, quoted attributes, known entities).
std::string xml_error(std::string const& doc) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  int roots = 0;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':'; };
  while (i < doc.size()) {
    if (doc[i] == '<') {
      if (doc.compare(i, 2, "<?") == 0) {
        std::size_t e = doc.find("?>", i);
        if (e == std::string::npos) return "unterminated <?";
        i = e + 2;
        continue;
      }
      bool closing = doc[i + 1] == '/';
      std::size_t j = i + (closing ? 2 : 1);
      std::size_t start = j;
      while (j < doc.size() && name_char(doc[j])) ++j;
      std::string name = doc.substr(start, j - start);
      if (name.empty()) return "empty tag name at " + std::to_string(i);
      if (closing) {
        if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
        stack.pop_back();
        j = doc.find('>', j);
        if (j == std::string::npos) return "unterminated </" + name;
        i = j + 1;
        continue;
      }
      // attributes
      while (true) {
        while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
        if (j >= doc.size()) return "unterminated <" + name;
        if (doc[j] == '>' || doc.compare(j, 2, "/>") == 0) break;
        std::size_t a = j;
        while (j < doc.size() && name_char(doc[j])) ++j;
        if (j == a || doc[j] != '=' || (doc[j + 1] != '"' && doc[j + 1] != '\'')) return "bad attribute in <" + name + ">";
        char q = doc[j + 1];
        std::size_t e = doc.find(q, j + 2);
        if (e == std::string::npos) return "unterminated attribute in <" + name + ">";
        if (doc.substr(j + 2, e - j - 2).find('<') != std::string::npos) return "'<' in an attribute of <" + name + ">";
        j = e + 1;
      }
      if (stack.empty()) ++roots;
      if (doc[j] == '>') {
        stack.push_back(name);
        i = j + 1;
      } else {
        i = j + 2;
      }
      continue;
    }
    if (doc[i] == '&') {
      std::size_t e = doc.find(';', i);
      if (e == std::string::npos) return "bare '&'";
      std::string ent = doc.substr(i, e - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;") return "unknown entity " + ent;
      i = e + 1;
      continue;
    }
    if (stack.empty() && !std::isspace(static_cast<unsigned char>(doc[i]))) return "text outside the root element";
    ++i;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

// The text between `open` (found from `from`) and the next `close`.
std::string between(std::string const& s, std::size_t from, std::string const& open, std::string const& close) {
  std::size_t a = s.find(open, from);
  if (a == std::string::npos) return "";
  a += open.size();
  return s.substr(a, s.find(close, a) - a);
}

// The labels of the cell elements, in document order.
std::vector<std::string> cell_labels(std::string const& doc) {
  std::vector<std::string> out;
  for (std::size_t k = doc.find("<g class=\"cell\">"); k != std::string::npos; k = doc.find("<g class=\"cell\">", k + 1)) {
    std::size_t t = doc.find("<text ", k);
    out.push_back(between(doc, t, ">", "</text>"));
  }
  return out;
}

// An integer attribute of the first element at or after `from` that has it.
int attribute(std::string const& doc, std::size_t from, std::string const& name) {
  return std::stoi(between(doc, from, " " + name + "=\"", "\""));
}

std::size_t count(std::string const& s, std::string const& what) {
  std::size_t n = 0;
  for (std::size_t k = s.find(what); k != std::string::npos; k = s.find(what, k + 1)) ++n;
  return n;
}

calc::Layout layout(char const* s) { return std::get<calc::Layout>(calc::parse_literal(s)); }

}  // namespace

TEST(CalcSvg, OneCellPerElementLabelledWithItsOffset) {
  calc::Layout l = layout("(4,(2,3)):(2,(1,8))");
  std::string doc = calc::svg::render(calc::svg::layout_panel(l));
  ASSERT_EQ(xml_error(doc), "");
  EXPECT_EQ(count(doc, "<svg "), 1u);
  auto labels = cell_labels(doc);
  ASSERT_EQ(labels.size(), 24u);
  EXPECT_EQ(count(doc, "class=\"cell\""), 24u);
  // Row-major over (m, n): cell (m, n) shows L(m, n).
  for (std::int64_t m = 0, k = 0; m < 4; ++m) {
    for (std::int64_t n = 0; n < 6; ++n, ++k) {
      auto c = calc::IntTuple::tuple({calc::IntTuple::leaf(calc::dynamic_int(m)), calc::IntTuple::leaf(calc::dynamic_int(n))});
      EXPECT_EQ(labels[std::size_t(k)], std::to_string(calc::eval(l, c).value));
    }
  }
  EXPECT_NE(doc.find(">(4,(2,3)):(2,(1,8))</text>"), std::string::npos) << "the title is the layout";
}

TEST(CalcSvg, SwizzledLayoutsAreDrawnThroughTheSwizzle) {
  auto c = std::get<calc::ComposedLayout>(calc::parse_literal("Sw<3,0,3> o _0 o (_8,_8):(_8,_1)"));
  std::string doc = calc::svg::render(calc::svg::layout_panel(c));
  ASSERT_EQ(xml_error(doc), "");
  auto labels = cell_labels(doc);
  ASSERT_EQ(labels.size(), 64u);
  // Row 1 of the 8x8 bank tile of seed_prints.txt: 9 8 11 10 13 12 15 14.
  EXPECT_EQ(std::vector<std::string>(labels.begin() + 8, labels.begin() + 16),
            (std::vector<std::string>{"9", "8", "11", "10", "13", "12", "15", "14"}));
  EXPECT_NE(doc.find("Sw&lt;3,0,3&gt; o _0 o (_8,_8):(_8,_1)"), std::string::npos) << "the title is escaped";
}

TEST(CalcSvg, WideLayoutsGetAWideEnoughCanvas) {
  calc::Layout l = layout("(_8,_64):(_64,_1)");
  std::string doc = calc::svg::render(calc::svg::layout_panel(l));
  ASSERT_EQ(xml_error(doc), "");
  EXPECT_EQ(cell_labels(doc).size(), 512u);
  int const width = attribute(doc, doc.find("<svg "), "width");
  // Every cell lies inside the canvas.
  int max_right = 0;
  for (std::size_t k = doc.find("<g class=\"cell\">"); k != std::string::npos; k = doc.find("<g class=\"cell\">", k + 1)) {
    max_right = std::max(max_right, attribute(doc, k, "x") + attribute(doc, k, "width"));
  }
  EXPECT_GE(width, max_right);
  EXPECT_GE(max_right, 64 * 28);
}

TEST(CalcSvg, RankOneLayoutsAreAColumnAndRankThreeIsRefused) {
  auto doc = calc::svg::render(calc::svg::layout_panel(layout("5:3")));
  EXPECT_EQ(xml_error(doc), "");
  EXPECT_EQ(cell_labels(doc), (std::vector<std::string>{"0", "3", "6", "9", "12"}));
  EXPECT_THROW(calc::svg::layout_panel(layout("(2,2,2):(1,2,4)")), AlgebraError);
  EXPECT_THROW(calc::svg::layout_panel(layout("(1000,1000):(1,1000)")), AlgebraError);
}

TEST(CalcSvg, TvLayoutsAreLabelledByThreadAndValue) {
  // The SM80 16x8x8 C fragment: 32 threads x 4 values over a 16 x 8 tile (seed_prints.txt).
  calc::Layout tv = layout("((_4,_8),(_2,_2)):((_32,_1),(_16,_8))");
  calc::svg::Panel p = calc::svg::tv_panel(tv, 16, 8, "LayoutC_TV");
  std::string doc = calc::svg::render(p);
  ASSERT_EQ(xml_error(doc), "");
  auto labels = cell_labels(doc);
  ASSERT_EQ(labels.size(), 128u);
  std::map<std::string, int> seen;
  for (auto const& l : labels) ++seen[l];
  EXPECT_EQ(seen.size(), 128u) << "every (thread, value) once";
  EXPECT_EQ(seen.count("T0V0"), 1u);
  EXPECT_EQ(seen.count("T31V3"), 1u);
  // Row 0 reads T0V0 T0V1 T1V0 T1V1 ... (thread stride 32 = two columns of the 16-row tile).
  std::map<std::int64_t, std::string> at;  // row * 8 + col
  for (auto const& c : p.cells) at[c.row * 8 + c.col] = c.label;
  EXPECT_EQ(at[0], "T0V0");
  EXPECT_EQ(at[1], "T0V1");
  EXPECT_EQ(at[2], "T1V0");
  EXPECT_EQ(at[8 * 8], "T0V2");
  // Several panels side by side (A, B, C of an MMA) make one document.
  std::string three = calc::svg::render({p, p, p});
  EXPECT_EQ(xml_error(three), "");
  EXPECT_EQ(cell_labels(three).size(), 384u);
  EXPECT_THROW(calc::svg::tv_panel(tv, 8, 8), AlgebraError) << "indices past the tile are refused";
}
