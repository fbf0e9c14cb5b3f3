// `tessel mma` / `tessel copy` replay the TiledMMA/TiledCopy steps with the run-time algebra
// (apps/tessel/tiled_calc.hpp). The replay must print exactly what the templates print -- seed
// 001's configurations and more -- and its pictures must be well-formed SVG with one cell per
// tile element.
#include "../../apps/tessel/tiled_calc.hpp"
// The atom registry is compiled into the CLI; the test compiles its own copy.
#include "../../apps/tessel/tiled_atoms.cpp"

#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace tessel;
namespace tiled = tessel::cli::tiled;

namespace {

template <class TM>
void expect_same_mma(tiled::MmaTiling const& m, TM const& mma) {
  EXPECT_EQ(m.text(), to_string(mma));
  EXPECT_EQ(tiled::calc::to_string(m.layout_a_tv()), to_string(mma.get_layoutA_TV()));
  EXPECT_EQ(tiled::calc::to_string(m.layout_b_tv()), to_string(mma.get_layoutB_TV()));
  EXPECT_EQ(tiled::calc::to_string(m.layout_c_tv()), to_string(mma.get_layoutC_TV()));
}

template <class TC>
void expect_same_copy(tiled::CopyTiling const& c, TC const& tc) {
  EXPECT_EQ(c.text(), to_string(tc));
  EXPECT_EQ(tiled::calc::to_string(c.layout_s_tv()), to_string(tc.get_layoutS_TV()));
  EXPECT_EQ(tiled::calc::to_string(c.layout_d_tv()), to_string(tc.get_layoutD_TV()));
}

tiled::calc::Layout rt(std::string const& text) { return std::get<tiled::calc::Layout>(tiled::calc::parse_literal(text)); }

// A minimal XML well-formedness check: every tag closes in order; returns the element names seen.
std::vector<std::string> xml_elements(std::string const& s, bool* ok) {
  std::vector<std::string> stack, seen;
  *ok = true;
  std::size_t i = 0;
  while ((i = s.find('<', i)) != std::string::npos) {
    std::size_t j = s.find('>', i);
    if (j == std::string::npos) {
      *ok = false;
      break;
    }
    std::string tag = s.substr(i + 1, j - i - 1);
    i = j + 1;
    if (tag.empty()) {
      *ok = false;
      break;
    }
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        *ok = false;
        break;
      }
      stack.pop_back();
      continue;
    }
    std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
    seen.push_back(name);
    if (tag.back() != '/') stack.push_back(name);
  }
  if (!stack.empty()) *ok = false;
  return seen;
}

std::size_t count(std::string const& s, std::string const& what) {
  std::size_t n = 0;
  for (std::size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

}  // namespace

TEST(TiledCalc, MmaReplayPrintsLikeTheTemplates) {
  expect_same_mma(tiled::make_mma_tiling("SM80_16x8x8_F32F16F16F32_TN", {4, 1, 1}, true, {{64, 16, 16}}),
                  make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_4, _1, _1>{}, GenRowMajor{}),
                                 Tile<_64, _16, _16>{}));
  expect_same_mma(tiled::make_mma_tiling("SM80_16x8x16_F32BF16BF16F32_TN", {2, 2, 1}, false, {{32, 32, 16}}),
                  make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}),
                                 Tile<_32, _32, _16>{}));
  expect_same_mma(tiled::make_mma_tiling("SM80_16x8x16_F32BF16BF16F32_TN", {2, 2, 1}, false, std::nullopt),
                  make_tiled_mma(MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>{}, make_layout(Shape<_2, _2, _1>{})));
  expect_same_mma(tiled::make_mma_tiling("SM80_16x8x32_S32S8S8S32_TN", {1, 4, 2}, true, {{32, 64, 128}}),
                  make_tiled_mma(MMA_Atom<SM80_16x8x32_S32S8S8S32_TN>{}, make_layout(Shape<_1, _4, _2>{}, GenRowMajor{}),
                                 Tile<_32, _64, _128>{}));
  expect_same_mma(tiled::make_mma_tiling("SM80_16x8x8_F32TF32TF32F32_TN", {2, 1, 1}, false, std::nullopt),
                  make_tiled_mma(MMA_Atom<SM80_16x8x8_F32TF32TF32F32_TN>{}, make_layout(Shape<_2, _1, _1>{})));
  expect_same_mma(tiled::make_mma_tiling("UniversalFMA", {16, 16, 1}, false, {{64, 64, 4}}),
                  make_tiled_mma(UniversalFMA<float>{}, make_layout(Shape<_16, _16, _1>{}), Tile<_64, _64, _4>{}));
}

TEST(TiledCalc, CopyReplayPrintsLikeTheTemplates) {
  // Seed 001's TiledCopy.
  expect_same_copy(
      tiled::make_copy_tiling(tiled::find_copy_atom("AutoVectorizingCopyWithAssumedAlignment<128>", 16),
                              rt("(_8,_16):(_16,_1)"), rt("(_1,_8):(_8,_1)")),
      make_tiled_copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>{},
                      make_layout(Shape<_8, _16>{}, GenRowMajor{}), make_layout(Shape<_1, _8>{}, GenRowMajor{})));
  expect_same_copy(tiled::make_copy_tiling(tiled::find_copy_atom("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 32),
                                           rt("(_32,_4):(_1,_32)"), rt("(_4,_1):(_1,_0)")),
                   make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{}, make_layout(Shape<_32, _4>{}),
                                   make_layout(Shape<_4, _1>{})));
  // ldmatrix fitted to MMA operands.
  auto mma = make_tiled_mma(MMA_Atom<SM80_16x8x8_F32F16F16F32_TN>{}, make_layout(Shape<_4, _1, _1>{}, GenRowMajor{}),
                            Tile<_64, _16, _16>{});
  auto m = tiled::make_mma_tiling("SM80_16x8x8_F32F16F16F32_TN", {4, 1, 1}, true, {{64, 16, 16}});
  expect_same_copy(tiled::make_copy_tiling_for_mma(tiled::find_copy_atom("SM75_U32x4_LDSM_N", 16), m, 'A'),
                   make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma));
  expect_same_copy(tiled::make_copy_tiling_for_mma(tiled::find_copy_atom("SM75_U32x1_LDSM_N", 16), m, 'B'),
                   make_tiled_copy_B(Copy_Atom<SM75_U32x1_LDSM_N, half_t>{}, mma));
  auto mma2 = make_tiled_mma(MMA_Atom<SM80_16x8x16_F32F16F16F32_TN>{}, make_layout(Shape<_2, _2, _1>{}), Tile<_32, _32, _16>{});
  auto m2 = tiled::make_mma_tiling("SM80_16x8x16_F32F16F16F32_TN", {2, 2, 1}, false, {{32, 32, 16}});
  expect_same_copy(tiled::make_copy_tiling_for_mma(tiled::find_copy_atom("SM75_U16x8_LDSM_T", 16), m2, 'B'),
                   make_tiled_copy_B(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, mma2));
  expect_same_copy(tiled::make_copy_tiling_for_mma(tiled::find_copy_atom("SM90_U32x4_STSM_N", 16), m2, 'C'),
                   make_tiled_copy_C(Copy_Atom<SM90_U32x4_STSM_N, half_t>{}, mma2));
}

TEST(TiledCalc, SeedPrintsThroughTheReplay) {
  // The oracle's seed blocks, produced by the run-time path.
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/tests/oracle/data/seed_prints.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string const oracle = ss.str();
  auto m = tiled::make_mma_tiling("SM80_16x8x16_F32BF16BF16F32_TN", {2, 2, 1}, false, std::nullopt);
  EXPECT_NE(oracle.find("---- print(tiled_mma)\n" + m.text()), std::string::npos);
  EXPECT_NE(oracle.find("---- get_layoutB_TV() = " + tiled::calc::to_string(m.layout_b_tv()) + "\n"), std::string::npos);
  auto c = tiled::make_copy_tiling(tiled::find_copy_atom("AutoVectorizingCopyWithAssumedAlignment<128>", 16),
                                   rt("(_8,_16):(_16,_1)"), rt("(_1,_8):(_8,_1)"));
  EXPECT_NE(oracle.find("---- print(tiled_copy)\n" + c.text()), std::string::npos);
}

TEST(TiledCalc, PicturesAreWellFormedWithOneCellPerElement) {
  auto m = tiled::make_mma_tiling("SM80_16x8x16_F32F16F16F32_TN", {2, 2, 1}, false, {{32, 32, 16}});
  std::string svg = tiled::mma_svg(m);
  bool ok = false;
  auto elems = xml_elements(svg, &ok);
  EXPECT_TRUE(ok) << "the SVG does not nest its tags properly";
  EXPECT_EQ(elems.front(), "svg");
  // A 32x16, B 32x16, C 32x32: one <g class="cell"> per element, each labelled T#V#.
  EXPECT_EQ(count(svg, "class=\"cell\""), std::size_t(32 * 16 + 32 * 16 + 32 * 32));
  EXPECT_EQ(count(svg, ">T0V0<"), 3u);
  std::regex label(">T([0-9]+)V([0-9]+)<");
  std::size_t labels = std::distance(std::sregex_iterator(svg.begin(), svg.end(), label), std::sregex_iterator());
  EXPECT_EQ(labels, std::size_t(32 * 16 + 32 * 16 + 32 * 32));

  auto c = tiled::make_copy_tiling(tiled::find_copy_atom("UniversalCopy<uint128_t>", 16), rt("(_8,_16):(_16,_1)"),
                                   rt("(_1,_8):(_8,_1)"));
  std::string csvg = tiled::copy_svg(c);
  xml_elements(csvg, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(count(csvg, "class=\"cell\""), std::size_t(2 * 8 * 128));
}

TEST(TiledCalc, BadInputIsOneClearError) {
  EXPECT_THROW(tiled::find_mma_atom("SM80_16x8x8_NOPE"), tessel::cli::UsageError);
  EXPECT_THROW(tiled::make_mma_tiling("SM80_16x8x8_F32F16F16F32_TN", {2, 2, 1}, false, {{24, 16, 8}}),
               tessel::cli::UsageError);  // 24 is not a multiple of 16 x 2
  EXPECT_THROW(tiled::find_copy_atom("UniversalCopy<uint8_t>", 16), tessel::cli::UsageError);
  EXPECT_THROW(tiled::parse_extents("2x2", 3, "--atoms"), tessel::cli::UsageError);
  EXPECT_THROW(tiled::parse_extents("2xx1", 3, "--atoms"), tessel::cli::UsageError);
  // ldmatrix needs whole warps.
  EXPECT_THROW(tiled::make_copy_tiling(tiled::find_copy_atom("SM75_U32x4_LDSM_N", 16), rt("(_8,_2):(_2,_1)"),
                                       rt("(_1,_8):(_8,_1)")),
               tessel::cli::UsageError);
}
