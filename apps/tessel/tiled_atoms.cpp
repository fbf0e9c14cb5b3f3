// apps/tessel/tiled_atoms.cpp -- the atom registry of tiled_calc.hpp: every atom's layouts, read
// from the templated traits (printed in CuTe notation and parsed back as run-time layouts).
//
// Kept in one file so that the templates are instantiated once for the CLI (compile time).
#include "tiled_calc.hpp"

#include <tessel/tensor.hpp>

#include <stdexcept>

namespace tessel::cli::tiled {

namespace {

template <class L>
calc::Layout to_calc(L const& l) {
  calc::Value v = calc::parse_literal(tessel::to_string(l));
  if (auto const* layout = std::get_if<calc::Layout>(&v)) return *layout;
  throw std::logic_error("tiled_atoms: not a layout: " + tessel::to_string(l));
}

template <class Op>
MmaAtomInfo mma_atom_info(std::string name) {
  using Atom = MMA_Atom<Op>;
  typename Atom::Shape_MNK shp;
  return MmaAtomInfo{std::move(name),
                     tessel::to_string(Atom{}),
                     to_calc(typename Atom::ThrID{}),
                     to_calc(typename Atom::LayoutA_TV{}),
                     to_calc(typename Atom::LayoutB_TV{}),
                     to_calc(typename Atom::LayoutC_TV{}),
                     {std::int64_t(size<0>(shp)), std::int64_t(size<1>(shp)), std::int64_t(size<2>(shp))}};
}

template <class Op, class T>
CopyAtomInfo copy_atom_info(std::string name) {
  using Atom = Copy_Atom<Op, T>;
  return CopyAtomInfo{std::move(name), sizeof_bits_v<T>, tessel::to_string(Atom{}), to_calc(typename Atom::ThrID{}),
                      to_calc(typename Atom::ValLayoutSrc{}), to_calc(typename Atom::ValLayoutDst{}),
                      to_calc(typename Atom::ValLayoutRef{})};
}

// op_bits 0: any element width; Widths: which of 8/16/32 bits are allowed, as a mask 1/2/4.
template <class Op, int Widths = 7>
void add_copy_atom(std::vector<CopyAtomInfo>& out, std::string const& name, int op_bits) {
  if constexpr ((Widths & 1) != 0) {
    if (op_bits == 0 || op_bits % 8 == 0) out.push_back(copy_atom_info<Op, std::int8_t>(name));
  }
  if constexpr ((Widths & 2) != 0) {
    if (op_bits == 0 || op_bits % 16 == 0) out.push_back(copy_atom_info<Op, half_t>(name));
  }
  if constexpr ((Widths & 4) != 0) {
    if (op_bits == 0 || op_bits % 32 == 0) out.push_back(copy_atom_info<Op, float>(name));
  }
}

}  // namespace

std::vector<MmaAtomInfo> const& mma_atoms() {
  static std::vector<MmaAtomInfo> const atoms = {
      mma_atom_info<SM80_16x8x8_F32F16F16F32_TN>("SM80_16x8x8_F32F16F16F32_TN"),
      mma_atom_info<SM80_16x8x8_F32BF16BF16F32_TN>("SM80_16x8x8_F32BF16BF16F32_TN"),
      mma_atom_info<SM80_16x8x16_F32F16F16F32_TN>("SM80_16x8x16_F32F16F16F32_TN"),
      mma_atom_info<SM80_16x8x16_F32BF16BF16F32_TN>("SM80_16x8x16_F32BF16BF16F32_TN"),
      mma_atom_info<SM80_16x8x8_F32TF32TF32F32_TN>("SM80_16x8x8_F32TF32TF32F32_TN"),
      mma_atom_info<SM80_16x8x32_S32S8S8S32_TN>("SM80_16x8x32_S32S8S8S32_TN"),
      mma_atom_info<UniversalFMA<float>>("UniversalFMA"),
  };
  return atoms;
}

std::vector<CopyAtomInfo> const& copy_atoms() {
  static std::vector<CopyAtomInfo> const atoms = [] {
    std::vector<CopyAtomInfo> v;
    add_copy_atom<UniversalCopy<std::uint8_t>>(v, "UniversalCopy<uint8_t>", 8);
    add_copy_atom<UniversalCopy<std::uint16_t>>(v, "UniversalCopy<uint16_t>", 16);
    add_copy_atom<UniversalCopy<std::uint32_t>>(v, "UniversalCopy<uint32_t>", 32);
    add_copy_atom<UniversalCopy<std::uint64_t>>(v, "UniversalCopy<uint64_t>", 64);
    add_copy_atom<UniversalCopy<uint128_t>>(v, "UniversalCopy<uint128_t>", 128);
    add_copy_atom<AutoVectorizingCopyWithAssumedAlignment<128>>(v, "AutoVectorizingCopyWithAssumedAlignment<128>", 0);
    add_copy_atom<SM80_CP_ASYNC_CACHEALWAYS<std::uint32_t>>(v, "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", 32);
    add_copy_atom<SM80_CP_ASYNC_CACHEALWAYS<std::uint64_t>>(v, "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>", 64);
    add_copy_atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>>(v, "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", 128);
    add_copy_atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>>(v, "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", 128);
    add_copy_atom<SM75_U32x1_LDSM_N>(v, "SM75_U32x1_LDSM_N", 32);
    add_copy_atom<SM75_U32x2_LDSM_N>(v, "SM75_U32x2_LDSM_N", 32);
    add_copy_atom<SM75_U32x4_LDSM_N>(v, "SM75_U32x4_LDSM_N", 32);
    add_copy_atom<SM75_U16x2_LDSM_T, 2>(v, "SM75_U16x2_LDSM_T", 32);
    add_copy_atom<SM75_U16x4_LDSM_T, 2>(v, "SM75_U16x4_LDSM_T", 32);
    add_copy_atom<SM75_U16x8_LDSM_T, 2>(v, "SM75_U16x8_LDSM_T", 32);
    add_copy_atom<SM90_U32x4_STSM_N>(v, "SM90_U32x4_STSM_N", 32);
    return v;
  }();
  return atoms;
}

}  // namespace tessel::cli::tiled
