// apps/tessel/cmd_mma.cpp -- `tessel mma ATOM [--atoms MxNxK] [--tile MxNxK] [--row-major] [--svg FILE]`.
//
// Prints the TiledMMA built from an MMA atom (as CuTe's print writes it) and its A, B and C
// thread-value layouts; --svg draws the three maps, each cell of the tile labelled T#V# and
// coloured by thread. Bad names and tilings are one line on stderr and exit status 2.
//   tessel mma SM80_16x8x8_F32F16F16F32_TN --atoms 4x1x1 --row-major --tile 64x16x16
//   tessel mma SM80_16x8x16_F32BF16BF16F32_TN --atoms 2x2x1 --tile 32x32x16 --svg mma.svg
#include "command.hpp"
#include "tiled_calc.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace {

using tessel::cli::UsageError;
namespace tiled = tessel::cli::tiled;

void print_help() {
  std::printf(
      "usage: tessel mma ATOM [--atoms MxNxK] [--tile MxNxK] [--row-major] [--svg FILE]\n"
      "\n"
      "Tiles an MMA atom over an M x N x K grid of atoms (make_tiled_mma) and prints the TiledMMA and\n"
      "its thread-value layouts get_layoutA_TV / B / C, as CuTe prints them.\n"
      "\n"
      "  --atoms MxNxK  atoms along M, N and K (default 1x1x1); each group of the atom's threads\n"
      "                 (32 for mma.sync) executes one atom\n"
      "  --row-major    number the atoms row-major (GenRowMajor) instead of column-major\n"
      "  --tile MxNxK   the tile one TiledMMA step covers (the permutation Tile<_M,_N,_K>); each extent a\n"
      "                 multiple of atom extent x atoms (default: exactly that)\n"
      "  --svg FILE     draw the A (MxK), B (NxK) and C (MxN) maps: cells labelled T<thread>V<value>\n"
      "\n"
      "atoms:");
  for (auto const& a : tiled::mma_atoms()) std::printf(" %s", a.name.c_str());
  std::printf(
      "\n\nexample (seed 001):\n"
      "  tessel mma SM80_16x8x8_F32F16F16F32_TN --atoms 4x1x1 --row-major --tile 64x16x16\n");
}

int run_mma(std::vector<std::string> const& args) {
  std::string atom, svg_path;
  std::array<std::int64_t, 3> atoms{1, 1, 1};
  std::optional<std::array<std::int64_t, 3>> tile;
  bool row_major = false;
  auto value = [&](std::size_t& i, char const* opt) -> std::string const& {
    if (i + 1 >= args.size()) throw UsageError(std::string(opt) + " needs a value (tessel mma --help)");
    return args[++i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string const& a = args[i];
    if (a == "--help" || a == "-h") {
      print_help();
      return 0;
    } else if (a == "--atoms") {
      auto v = tiled::parse_extents(value(i, "--atoms"), 3, "--atoms");
      atoms = {v[0], v[1], v[2]};
    } else if (a == "--tile") {
      auto v = tiled::parse_extents(value(i, "--tile"), 3, "--tile");
      tile = std::array<std::int64_t, 3>{v[0], v[1], v[2]};
    } else if (a == "--row-major") {
      row_major = true;
    } else if (a == "--svg") {
      svg_path = value(i, "--svg");
    } else if (a.size() > 1 && a[0] == '-') {
      throw UsageError("unknown option '" + a + "' (tessel mma --help)");
    } else if (atom.empty()) {
      atom = a;
    } else {
      throw UsageError("one ATOM only; unexpected '" + a + "'");
    }
  }
  if (atom.empty()) throw UsageError("name an MMA atom, e.g. tessel mma SM80_16x8x16_F32F16F16F32_TN (tessel mma --help)");
  auto m = tiled::make_mma_tiling(atom, atoms, row_major, tile);
  std::printf("%s", m.text().c_str());
  std::printf("size:           %lld threads\n", static_cast<long long>(m.threads()));
  std::printf("tile_size:      %lld,%lld,%lld\n", static_cast<long long>(m.tile[0]), static_cast<long long>(m.tile[1]),
              static_cast<long long>(m.tile[2]));
  std::printf("get_layoutA_TV: %s\n", tiled::calc::to_string(m.layout_a_tv()).c_str());
  std::printf("get_layoutB_TV: %s\n", tiled::calc::to_string(m.layout_b_tv()).c_str());
  std::printf("get_layoutC_TV: %s\n", tiled::calc::to_string(m.layout_c_tv()).c_str());
  if (!svg_path.empty()) {
    tiled::calc::svg::write_file(svg_path, tiled::mma_svg(m));
    std::printf("wrote %s\n", svg_path.c_str());
  }
  return 0;
}

tessel::cli::Register reg{{"mma", "a TiledMMA's thread-value layouts (text, SVG)", run_mma}};

}  // namespace
