// apps/tessel/tiled_calc.hpp -- TiledMMA and TiledCopy layouts at run time, for `tessel mma` and
// `tessel copy`.
//
// The atoms' layouts come from the templated traits (include/tessel/atom/), printed and read
// back as run-time layouts (tiled_atoms.cpp, the one file that instantiates them); the tiling (atom grid, tile, thread and value layouts) is chosen on
// the command line, so the steps of tiled/tiled_mma.hpp and tiled/tiled_copy.hpp are replayed
// here with the run-time algebra of src/calc. tests/host/tiled_calc_test.cpp checks that the
// replay prints exactly what the templates print, seed 001's configurations included.
//   MmaTiling m = make_mma_tiling("SM80_16x8x8_F32F16F16F32_TN", {4,1,1}, /*row_major=*/true, {64,16,16});
//   calc::to_string(m.layout_a_tv())  ==  "((_4,_8,_4),((_2,_2),(_1,_2))):((_128,_1,_16),((_64,_8),(_0,_512)))"
// Bad names and tilings throw tessel::cli::UsageError (one line: what is wrong and what is allowed).
#pragma once

#include "command.hpp"

#include "calc/coalesce.hpp"
#include "calc/composition.hpp"
#include "calc/divide.hpp"
#include "calc/inverse.hpp"
#include "calc/layout.hpp"
#include "calc/parse.hpp"
#include "calc/product.hpp"
#include "calc/svg.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tessel::cli::tiled {

namespace calc = tessel::calc;

inline calc::IntTuple sint(std::int64_t v) { return calc::IntTuple::leaf(calc::static_int(v)); }
inline calc::IntTuple stuple(std::vector<calc::IntTuple> e) { return calc::IntTuple::tuple(std::move(e)); }
inline calc::Tiler tl(calc::Layout l) { return calc::Tiler::of_layout(std::move(l)); }
inline calc::Tiler tt(std::vector<calc::Tiler> e) { return calc::Tiler::tuple(std::move(e)); }
inline calc::Tiler keep() { return calc::Tiler::underscore(); }
inline std::int64_t size_of(calc::Layout const& l) { return calc::size(l).value; }
inline std::int64_t size_of_mode(calc::Layout const& l, int i) { return calc::size(calc::mode(l, i)).value; }

// ---- atoms (their layouts are read from the templated traits in tiled_atoms.cpp) ----------------

struct MmaAtomInfo {
  std::string name;
  std::string text;  // print(MMA_Atom<Op>{})
  calc::Layout thr_id, a_tv, b_tv, c_tv;
  std::array<std::int64_t, 3> mnk{};
};

struct CopyAtomInfo {
  std::string name;
  int value_bits = 0;
  std::string text;  // print(Copy_Atom<Op, T>{})
  calc::Layout thr_id, src, dst, ref;
};

// Every MMA atom tessel has (and UniversalFMA<float>), and every (copy atom, element width) pair
// that makes sense: a single-thread atom moves a whole number of elements; ldmatrix/stmatrix move
// 8-, 16- or 32-bit elements, their transposing forms 16-bit ones only.
std::vector<MmaAtomInfo> const& mma_atoms();
std::vector<CopyAtomInfo> const& copy_atoms();

inline MmaAtomInfo const& find_mma_atom(std::string const& name) {
  std::string known;
  for (auto const& a : mma_atoms()) {
    if (a.name == name) return a;
    known += (known.empty() ? "" : ", ") + a.name;
  }
  throw UsageError("unknown MMA atom '" + name + "'; known: " + known);
}

// Element type names accepted by --type, and their widths.
inline int value_bits_of(std::string const& type) {
  static std::map<std::string, int> const bits = {{"int8", 8},   {"uint8", 8},  {"half", 16},   {"fp16", 16},
                                                  {"bf16", 16},  {"half_t", 16}, {"bfloat16_t", 16}, {"float", 32},
                                                  {"fp32", 32},  {"tf32", 32},  {"int32", 32}};
  auto it = bits.find(type);
  if (it == bits.end()) throw UsageError("unknown --type '" + type + "'; known: int8, half, bf16, float, tf32, int32");
  return it->second;
}

inline CopyAtomInfo const& find_copy_atom(std::string const& name, int value_bits) {
  std::string known;
  bool name_found = false;
  for (auto const& a : copy_atoms()) {
    if (a.name == name) {
      name_found = true;
      if (a.value_bits == value_bits) return a;
    }
    if (known.find(a.name) == std::string::npos) known += (known.empty() ? "" : ", ") + a.name;
  }
  if (name_found) {
    throw UsageError(name + " cannot move " + std::to_string(value_bits) +
                     "-bit elements (its width is not a multiple of the element's, or it transposes 16-bit elements)");
  }
  throw UsageError("unknown copy atom '" + name + "'; known: " + known);
}

// ---- TiledMMA ---------------------------------------------------------------------------------

struct MmaTiling {
  MmaAtomInfo atom;
  calc::Layout vmnk;                 // ThrLayoutVMNK
  std::array<std::int64_t, 3> tile;  // the permutation extents (tile_size<I>)
  bool permuted = false;             // a --tile was given (else the permutation prints as (_,_,_))

  std::int64_t threads() const { return size_of(vmnk); }

  // (M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...))) -- tiled_mma.hpp thrfrg.
  calc::Layout thrfrg(calc::Layout const& l, int p0, int p1, int t0, int t1, calc::Layout const& atom_tv) const {
    auto permuted_l = calc::logical_divide(
        l, tt({calc::Tiler::integer(calc::static_int(tile[p0])), calc::Tiler::integer(calc::static_int(tile[p1]))}));
    auto atoms = calc::zipped_divide(permuted_l, tt({tl(calc::make_layout(sint(atom.mnk[p0]))),
                                                     tl(calc::make_layout(sint(atom.mnk[p1])))}));
    auto tv = calc::composition(atoms, tt({tl(atom_tv), keep()}));
    auto thr_tile = tt({keep(), tt({tl(calc::make_layout(sint(size_of_mode(vmnk, t0)))),
                                    tl(calc::make_layout(sint(size_of_mode(vmnk, t1))))})});
    return calc::zipped_divide(tv, thr_tile);
  }

  calc::Layout layout_c_tv() const {
    auto ref = calc::make_layout(stuple({sint(tile[0]), sint(tile[1])}));
    return calc::composition(thrfrg(ref, 0, 1, 1, 2, atom.c_tv), tt({tl(calc::right_inverse(vmnk)), keep()}));
  }
  calc::Layout layout_a_tv() const {
    auto ref = calc::make_layout(stuple({sint(tile[0]), sint(tile[2])}));
    auto mn = calc::make_layout(stuple({sint(size_of_mode(vmnk, 1)), sint(size_of_mode(vmnk, 2))}),
                                stuple({sint(1), sint(0)}));
    auto atile = tt({keep(), tt({tl(mn), keep()})});
    auto x = calc::composition(thrfrg(ref, 0, 2, 1, 3, atom.a_tv), tt({atile, keep()}));
    return calc::composition(x, tt({tl(calc::right_inverse(vmnk)), keep()}));
  }
  calc::Layout layout_b_tv() const {
    auto ref = calc::make_layout(stuple({sint(tile[1]), sint(tile[2])}));
    auto mn = calc::make_layout(stuple({sint(size_of_mode(vmnk, 1)), sint(size_of_mode(vmnk, 2))}),
                                stuple({sint(0), sint(1)}));
    auto btile = tt({keep(), tt({tl(mn), keep()})});
    auto x = calc::composition(thrfrg(ref, 1, 2, 2, 3, atom.b_tv), tt({btile, keep()}));
    return calc::composition(x, tt({tl(calc::right_inverse(vmnk)), keep()}));
  }

  // print(tiled_mma), as CuTe writes it.
  std::string text() const {
    std::string perm = permuted ? "(_" + std::to_string(tile[0]) + ",_" + std::to_string(tile[1]) + ",_" +
                                      std::to_string(tile[2]) + ")"
                                : "(_,_,_)";
    return "TiledMMA\n  ThrLayoutVMNK:  " + calc::to_string(vmnk) + "\n  PermutationMNK: " + perm + "\n" + atom.text;
  }
};

// atoms: the atom grid (M,N,K); row_major: number the atoms row-major (as GenRowMajor);
// tile: the permutation extents, or none for atom extent x atoms.
inline MmaTiling make_mma_tiling(std::string const& atom_name, std::array<std::int64_t, 3> atoms, bool row_major,
                                 std::optional<std::array<std::int64_t, 3>> tile) {
  MmaTiling m;
  m.atom = find_mma_atom(atom_name);
  for (auto a : atoms) {
    if (a < 1 || a > 64) throw UsageError("--atoms: each extent must be between 1 and 64");
  }
  auto atom_layout = calc::make_layout(stuple({sint(atoms[0]), sint(atoms[1]), sint(atoms[2])}),
                                       row_major ? calc::Major::right : calc::Major::left);
  m.vmnk = calc::tiled_product(m.atom.thr_id, tl(atom_layout));
  char const* names = "MNK";
  for (int i = 0; i < 3; ++i) {
    std::int64_t const core = m.atom.mnk[i] * atoms[i];
    if (tile) {
      std::int64_t const t = (*tile)[i];
      if (t < core || t % core != 0) {
        throw UsageError(std::string("--tile: the ") + names[i] + " extent " + std::to_string(t) +
                         " must be a multiple of atom extent x atoms = " + std::to_string(core));
      }
      m.tile[i] = t;
    } else {
      m.tile[i] = core;
    }
  }
  m.permuted = tile.has_value();
  if (m.tile[0] * m.tile[1] + m.tile[0] * m.tile[2] + m.tile[1] * m.tile[2] > 65536) {
    throw UsageError("the tile is too large to draw (at most 65536 cells in the A, B and C panels together)");
  }
  return m;
}

// ---- TiledCopy --------------------------------------------------------------------------------

struct CopyTiling {
  CopyAtomInfo atom;
  calc::Layout tv;        // TiledLayout_TV
  calc::IntTuple tiler;   // Tiler_MN

  std::int64_t rows() const { return calc::product(tiler.mode(0)).value; }
  std::int64_t cols() const { return tiler.rank() > 1 ? calc::product(tiler.mode(1)).value : 1; }

  // ((TileM,TileN),(RestM,RestN)) -> ((thr,val),(RestM,RestN)) -- tiled_copy.hpp tile2thrfrg.
  calc::Layout tile2thrfrg(calc::Layout const& l, calc::Layout const& ref2trg) const {
    auto atom_tv = calc::zipped_divide(
        tv, calc::Tiler::of_int_tuple(stuple({sint(size_of_mode(atom.ref, 0)), sint(size_of_mode(atom.ref, 1))})));
    auto trg = calc::composition(atom_tv, tt({tl(ref2trg), keep()}));
    calc::Layout zipped{calc::zip(trg.shape.mode(0), trg.shape.mode(1)), calc::zip(trg.stride.mode(0), trg.stride.mode(1))};
    auto thrval2mn = calc::coalesce(zipped, stuple({sint(1), stuple({sint(1), sint(1)})}));
    auto t = calc::composition(l, tt({tl(thrval2mn), keep()}));
    auto u = calc::IntTuple::underscore();
    return calc::slice(t, stuple({stuple({u, u}), u}));
  }
  calc::Layout layout_tv(calc::Layout const& side) const {
    auto ref = calc::make_layout(stuple({tiler, sint(1)}));
    auto l = tile2thrfrg(ref, calc::composition(calc::right_inverse(atom.ref), side));
    auto u = calc::IntTuple::underscore();
    return calc::slice(l, stuple({u, u, calc::IntTuple::leaf(calc::static_int(0))}));
  }
  calc::Layout layout_s_tv() const { return layout_tv(atom.src); }
  calc::Layout layout_d_tv() const { return layout_tv(atom.dst); }

  std::string text() const {
    return "TiledCopy\n  Tiler_MN:       " + calc::to_string(tiler) + "\n  TiledLayout_TV: " + calc::to_string(tv) +
           "\n" + atom.text;
  }
};

inline void check_copy_threads(CopyTiling const& c) {
  std::int64_t const atom_thr = size_of_mode(c.atom.ref, 0), atom_val = size_of_mode(c.atom.ref, 1);
  if (size_of_mode(c.tv, 0) % atom_thr != 0) {
    throw UsageError(c.atom.name + " is executed by " + std::to_string(atom_thr) + " threads together; the tiling has " +
                     std::to_string(size_of_mode(c.tv, 0)) + " threads");
  }
  if (size_of_mode(c.tv, 1) % atom_val != 0) {
    throw UsageError(c.atom.name + " moves " + std::to_string(atom_val) + " values per thread; the tiling gives each thread " +
                     std::to_string(size_of_mode(c.tv, 1)) + " (make --val a multiple)");
  }
}

// make_tiled_copy(atom, thr_layout, val_layout).
inline CopyTiling make_copy_tiling(CopyAtomInfo const& atom, calc::Layout const& thr, calc::Layout const& val) {
  CopyTiling c;
  c.atom = atom;
  auto layout_mn = calc::raked_product(thr, val);
  c.tv = calc::composition(calc::right_inverse(layout_mn),
                           calc::make_layout(stuple({sint(size_of(thr)), sint(size_of(val))})));
  std::vector<calc::IntTuple> t;
  for (int i = 0; i < layout_mn.shape.rank(); ++i) t.push_back(calc::IntTuple::leaf(calc::product(layout_mn.shape.mode(i))));
  c.tiler = stuple(t);
  check_copy_threads(c);
  return c;
}

// make_tiled_copy_A/B/C(atom, tiled_mma).
inline CopyTiling make_copy_tiling_for_mma(CopyAtomInfo const& atom, MmaTiling const& mma, char operand) {
  CopyTiling c;
  c.atom = atom;
  switch (operand) {
    case 'A': c.tv = mma.layout_a_tv(), c.tiler = stuple({sint(mma.tile[0]), sint(mma.tile[2])}); break;
    case 'B': c.tv = mma.layout_b_tv(), c.tiler = stuple({sint(mma.tile[1]), sint(mma.tile[2])}); break;
    case 'C': c.tv = mma.layout_c_tv(), c.tiler = stuple({sint(mma.tile[0]), sint(mma.tile[1])}); break;
    default: throw UsageError("--operand is A, B or C");
  }
  check_copy_threads(c);
  return c;
}

// ---- pictures ---------------------------------------------------------------------------------

inline std::string mma_svg(MmaTiling const& m) {
  std::vector<calc::svg::Panel> panels;
  panels.push_back(calc::svg::tv_panel(m.layout_a_tv(), m.tile[0], m.tile[2],
                                       "A (M=" + std::to_string(m.tile[0]) + " x K=" + std::to_string(m.tile[2]) + ")"));
  panels.push_back(calc::svg::tv_panel(m.layout_b_tv(), m.tile[1], m.tile[2],
                                       "B (N=" + std::to_string(m.tile[1]) + " x K=" + std::to_string(m.tile[2]) + ")"));
  panels.push_back(calc::svg::tv_panel(m.layout_c_tv(), m.tile[0], m.tile[1],
                                       "C (M=" + std::to_string(m.tile[0]) + " x N=" + std::to_string(m.tile[1]) + ")"));
  return calc::svg::render(panels);
}

inline std::string copy_svg(CopyTiling const& c) {
  std::vector<calc::svg::Panel> panels;
  std::string const dims = " (" + std::to_string(c.rows()) + " x " + std::to_string(c.cols()) + ")";
  panels.push_back(calc::svg::tv_panel(c.layout_s_tv(), c.rows(), c.cols(), "source" + dims));
  panels.push_back(calc::svg::tv_panel(c.layout_d_tv(), c.rows(), c.cols(), "destination" + dims));
  return calc::svg::render(panels);
}

// "2x2x1" -> {2,2,1}; "8x16" -> {8,16}.
inline std::vector<std::int64_t> parse_extents(std::string const& s, std::size_t n, char const* option) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t x = s.find('x', pos);
    std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6) {
      throw UsageError(std::string(option) + " takes " + std::to_string(n) + " positive integers like " +
                       (n == 3 ? "2x2x1" : "8x16") + ", got '" + s + "'");
    }
    out.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  if (out.size() != n) {
    throw UsageError(std::string(option) + " takes " + std::to_string(n) + " extents (" + (n == 3 ? "MxNxK" : "MxN") +
                     "), got '" + s + "'");
  }
  for (auto v : out) {
    if (v < 1) throw UsageError(std::string(option) + ": extents must be >= 1, got '" + s + "'");
  }
  return out;
}

}  // namespace tessel::cli::tiled
