// tessel_calc prints like CuTe: the print_layout tables of seed_prints.txt byte for byte, every
// layout printed there round-trips, and the seed's tiled-copy TV layout is reproduced by the
// calculator's algebra (right_inverse of the raked product, as make_tiled_copy builds it).
#include "calc/parse.hpp"
#include "calc/print_layout.hpp"

#include <gtest/gtest.h>

#include <fstream>

using namespace tessel;

namespace {

std::vector<std::string> seed_lines() {
  std::ifstream in(TESSEL_SOURCE_DIR "/tests/oracle/data/seed_prints.txt");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string print_table(calc::Value const& v) {
  if (auto const* l = std::get_if<calc::Layout>(&v)) return calc::print_layout(*l);
  return calc::print_layout(std::get<calc::ComposedLayout>(v));
}

}  // namespace

TEST(CalcPrint, SeedPrintLayoutTablesByteForByte) {
  auto lines = seed_lines();
  ASSERT_GT(lines.size(), 100u);
  int tables = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("==== print_layout(", 0) != 0) continue;
    std::string expected;
    std::size_t k = i + 1;
    for (; k < lines.size() && !lines[k].empty(); ++k) expected += lines[k] + "\n";
    calc::Value v = calc::parse_literal(lines[i + 1]);
    EXPECT_EQ(print_table(v), expected) << lines[i];
    ++tables;
  }
  EXPECT_EQ(tables, 2);
}

TEST(CalcPrint, SeedLayoutsRoundTrip) {
  // The last word of lines like "  TiledLayout_TV: ((_16,_8),_8):((_64,_1),_8)" is a layout.
  int n = 0;
  for (auto const& line : seed_lines()) {
    if (line.empty() || line[0] == '#' || line.rfind("Sw<", 0) == 0 || line.rfind("====", 0) == 0) continue;
    std::size_t const k = line.find_last_of(' ');
    std::string const text = line.substr(k == std::string::npos ? 0 : k + 1);
    if (text.find(':') == std::string::npos || text.find_first_not_of("_0123456789(),:-") != std::string::npos) continue;
    EXPECT_EQ(calc::to_string(calc::parse_literal(text)), text) << line;
    ++n;
  }
  EXPECT_GT(n, 20);
}

TEST(CalcPrint, SeedTiledCopyLayout) {
  // make_tiled_copy(atom, (_8,_16) row-major threads, (_1,_8) row-major values).
  auto mn = calc::evaluate("raked_product(make_layout((_8,_16), GenRowMajor), make_layout((_1,_8), GenRowMajor))");
  EXPECT_EQ(calc::to_string(calc::evaluate("shape(" + calc::to_string(mn) + ")")), "((_1,_8),(_8,_16))");
  EXPECT_EQ(calc::to_string(calc::evaluate("composition(right_inverse(" + calc::to_string(mn) + "), make_layout((_128,_8)))")),
            "((_16,_8),_8):((_64,_1),_8)");
}

TEST(CalcPrint, RankOneLayoutsAreAColumnAndRankThreeIsRefused) {
  EXPECT_EQ(calc::print_layout(std::get<calc::Layout>(calc::parse_literal("3:2"))),
            "3:2\n      0 \n    +---+\n 0  | 0 |\n    +---+\n 1  | 2 |\n    +---+\n 2  | 4 |\n    +---+\n");
  try {
    calc::print_layout(std::get<calc::Layout>(calc::parse_literal("(2,2,2):(1,2,4)")));
    FAIL();
  } catch (AlgebraError const& e) {
    EXPECT_EQ(std::string(e.what()).rfind("print_layout needs a layout of rank 1 or 2", 0), 0u) << e.what();
  }
}
