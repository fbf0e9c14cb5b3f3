// apps/tessel/cmd_copy.cpp -- `tessel copy ATOM ...`: a TiledCopy's source and destination maps.
//
// Two ways to tile a copy atom, as in CuTe:
//   tessel copy ATOM --type T --thr MxN [--thr-row-major] --val MxN [--val-row-major]   make_tiled_copy
//   tessel copy ATOM --type T --mma MMA_ATOM [--atoms MxNxK] [--tile MxNxK] [--row-major] --operand A|B|C
//                                                                              make_tiled_copy_A/B/C
// Prints the TiledCopy (as CuTe's print writes it) and get_layoutS_TV / get_layoutD_TV; --svg FILE
// draws both maps with cells labelled T#V# and coloured by thread.
//   tessel copy AutoVectorizingCopyWithAssumedAlignment<128> --type half --thr 8x16 --thr-row-major --val 1x8
//   tessel copy SM75_U32x4_LDSM_N --type half --mma SM80_16x8x8_F32F16F16F32_TN --atoms 4x1x1 --row-major
//               --tile 64x16x16 --operand A --svg ldsm.svg
#include "command.hpp"
#include "tiled_calc.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

using tessel::cli::UsageError;
namespace tiled = tessel::cli::tiled;
namespace calc = tessel::calc;

void print_help() {
  std::printf(
      "usage: tessel copy ATOM [--type T] --thr MxN [--thr-row-major] [--val MxN] [--val-row-major] [--svg FILE]\n"
      "       tessel copy ATOM [--type T] --mma MMA_ATOM [--atoms MxNxK] [--tile MxNxK] [--row-major]\n"
      "                        --operand A|B|C [--svg FILE]\n"
      "\n"
      "Tiles a copy atom (make_tiled_copy with thread and value layouts, or make_tiled_copy_A/B/C fitted to\n"
      "a TiledMMA's operand) and prints the TiledCopy and its source/destination thread-value layouts, as\n"
      "CuTe prints them.\n"
      "\n"
      "  --type T         element type: int8, half, bf16, float, tf32, int32 (default half)\n"
      "  --thr MxN        the thread layout (column-major unless --thr-row-major)\n"
      "  --val MxN        each thread's value block (default 1x1; column-major unless --val-row-major)\n"
      "  --mma ... --operand A|B|C   as tessel mma, then the TV layout of that operand\n"
      "  --svg FILE       draw the source and destination maps: cells labelled T<thread>V<value>\n"
      "\n"
      "atoms:");
  std::string last;
  for (auto const& a : tiled::copy_atoms()) {
    if (a.name != last) std::printf(" %s", a.name.c_str());
    last = a.name;
  }
  std::printf(
      "\n\nexamples (seed 001):\n"
      "  tessel copy AutoVectorizingCopyWithAssumedAlignment<128> --type half --thr 8x16 --thr-row-major --val 1x8 "
      "--val-row-major\n"
      "  tessel copy SM75_U32x4_LDSM_N --type half --mma SM80_16x8x8_F32F16F16F32_TN --atoms 4x1x1 --row-major \\\n"
      "              --tile 64x16x16 --operand A\n");
}

calc::Layout compact(std::vector<std::int64_t> const& e, bool row_major) {
  return calc::make_layout(tiled::stuple({tiled::sint(e[0]), tiled::sint(e[1])}),
                           row_major ? calc::Major::right : calc::Major::left);
}

int run_copy(std::vector<std::string> const& args) {
  std::string atom, type = "half", svg_path, mma_atom, operand;
  std::optional<std::vector<std::int64_t>> thr, val;
  bool thr_row = false, val_row = false, mma_row = false;
  std::array<std::int64_t, 3> atoms{1, 1, 1};
  std::optional<std::array<std::int64_t, 3>> tile;
  auto value = [&](std::size_t& i, char const* opt) -> std::string const& {
    if (i + 1 >= args.size()) throw UsageError(std::string(opt) + " needs a value (tessel copy --help)");
    return args[++i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string const& a = args[i];
    if (a == "--help" || a == "-h") {
      print_help();
      return 0;
    } else if (a == "--type") {
      type = value(i, "--type");
    } else if (a == "--thr") {
      thr = tiled::parse_extents(value(i, "--thr"), 2, "--thr");
    } else if (a == "--val") {
      val = tiled::parse_extents(value(i, "--val"), 2, "--val");
    } else if (a == "--thr-row-major") {
      thr_row = true;
    } else if (a == "--val-row-major") {
      val_row = true;
    } else if (a == "--mma") {
      mma_atom = value(i, "--mma");
    } else if (a == "--atoms") {
      auto v = tiled::parse_extents(value(i, "--atoms"), 3, "--atoms");
      atoms = {v[0], v[1], v[2]};
    } else if (a == "--tile") {
      auto v = tiled::parse_extents(value(i, "--tile"), 3, "--tile");
      tile = std::array<std::int64_t, 3>{v[0], v[1], v[2]};
    } else if (a == "--row-major") {
      mma_row = true;
    } else if (a == "--operand") {
      operand = value(i, "--operand");
    } else if (a == "--svg") {
      svg_path = value(i, "--svg");
    } else if (a.size() > 1 && a[0] == '-') {
      throw UsageError("unknown option '" + a + "' (tessel copy --help)");
    } else if (atom.empty()) {
      atom = a;
    } else {
      throw UsageError("one ATOM only; unexpected '" + a + "'");
    }
  }
  if (atom.empty()) throw UsageError("name a copy atom, e.g. tessel copy UniversalCopy<uint128_t> (tessel copy --help)");
  auto const& info = tiled::find_copy_atom(atom, tiled::value_bits_of(type));

  tiled::CopyTiling c;
  if (!mma_atom.empty()) {
    if (thr || val) throw UsageError("--mma and --thr/--val are two different tilings; give one");
    if (operand != "A" && operand != "B" && operand != "C") throw UsageError("--mma needs --operand A, B or C");
    auto m = tiled::make_mma_tiling(mma_atom, atoms, mma_row, tile);
    c = tiled::make_copy_tiling_for_mma(info, m, operand[0]);
  } else {
    if (!thr) throw UsageError("give the thread layout (--thr MxN) or an MMA to fit (--mma ATOM --operand A|B|C)");
    if ((*thr)[0] * (*thr)[1] > 4096) throw UsageError("--thr: at most 4096 threads");
    std::vector<std::int64_t> v = val ? *val : std::vector<std::int64_t>{1, 1};
    if (v[0] * v[1] > 1024) throw UsageError("--val: at most 1024 values per thread");
    c = tiled::make_copy_tiling(info, compact(*thr, thr_row), compact(v, val_row));
  }
  std::printf("%s", c.text().c_str());
  std::printf("get_layoutS_TV: %s\n", calc::to_string(c.layout_s_tv()).c_str());
  std::printf("get_layoutD_TV: %s\n", calc::to_string(c.layout_d_tv()).c_str());
  if (!svg_path.empty()) {
    calc::svg::write_file(svg_path, tiled::copy_svg(c));
    std::printf("wrote %s\n", svg_path.c_str());
  }
  return 0;
}

tessel::cli::Register reg{{"copy", "a TiledCopy's source/destination thread-value layouts (text, SVG)", run_copy}};

}  // namespace
