// tessel/atom/gmma_smem_layout.hpp -- the shared-memory layouts warpgroup MMAs (wgmma; CuTe says
// GMMA) read their operands from, as swizzle atoms to tile a stage with.
//
// wgmma reads A and B (MN x K) from shared memory in one of eight arrangements (PTX ISA, "Shared
// Memory Matrix Layout"): K-major (K contiguous) or MN-major (M or N contiguous), each without
// swizzle ("interleave": 8 x 16-byte core matrices) or with the 32-, 64- or 128-byte swizzle,
// which permutes the 16-byte chunks of each row of that many bytes. One atom is 8 rows of the
// swizzle width W bytes (16 for interleave); with E-byte elements and T = 16 / E:
//   K-major  atom  (8, W/E):(W/E, 1)    rows are M or N, K runs along the W bytes of a row
//   MN-major atom  (W/E, 8):(1, W/E)    M or N runs along a row, the 8 rows are 8 values of k
// composed with the swizzle of 16-byte chunks within each W-byte row, XORed with the row index
// (address bits 7.. of the byte offset): Swizzle<B, 4, 3> on byte offsets, B = log2(W / 16), so
// on element offsets Swizzle<B, log2(T), 3>. This is also what TMA writes with
// CU_TENSOR_MAP_SWIZZLE_{32,64,128}B for a box whose inner extent is W bytes, so a TMA box and a
// wgmma operand can share one layout.
//   GMMA::Layout_K_SW128_Atom<half_t>     Sw<3,3,3> o _0 o (_8,_64):(_64,_1)      (1024 bytes)
//   GMMA::Layout_MN_SW64_Atom<half_t>     Sw<2,3,3> o _0 o (_32,_8):(_1,_32)      (512 bytes)
//   GMMA::Layout_K_INTER_Atom<uint8_t>    Sw<0,4,3> o _0 o (_8,_16):(_16,_1)      (128 bytes)
// Tile an atom to a stage with tile_to_shape (layout/tile_to_shape.hpp); the descriptor that
// reads it is make_gmma_desc (atom/gmma_descriptor.hpp).
//   GMMA::Major       K, MN (CuTe's names; wgmma's imm-trans bit is 1 for MN)
//   GMMA::LayoutType  INTERLEAVE, B128, B64, B32 (the values are the descriptor's bits 62-63)
//   GMMA::smem_atom<T, Major, LayoutType>, the Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T> aliases
//   GMMA::layout_type_bytes(t)   W: 16, 32, 64, 128
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::GMMA {

enum class Major { K = 0, MN = 1 };

// The swizzle of a wgmma operand; the enumerator values are the descriptor's bits 62-63.
enum class LayoutType : std::uint8_t { INTERLEAVE = 0, B128 = 1, B64 = 2, B32 = 3 };

// The width W of one swizzle row (the interleave's core matrix rows are 16 bytes).
TESSEL_HOST_DEVICE constexpr int layout_type_bytes(LayoutType t) {
  return t == LayoutType::B128 ? 128 : t == LayoutType::B64 ? 64 : t == LayoutType::B32 ? 32 : 16;
}
// log2(W / 16): the B of Swizzle<B, M, 3>.
TESSEL_HOST_DEVICE constexpr int layout_type_bits(LayoutType t) {
  return t == LayoutType::B128 ? 3 : t == LayoutType::B64 ? 2 : t == LayoutType::B32 ? 1 : 0;
}
// The LayoutType whose swizzle XORs `bits` bits (inverse of layout_type_bits).
TESSEL_HOST_DEVICE constexpr LayoutType layout_type_of_bits(int bits) {
  return bits == 3 ? LayoutType::B128 : bits == 2 ? LayoutType::B64 : bits == 1 ? LayoutType::B32 : LayoutType::INTERLEAVE;
}

namespace detail {
TESSEL_HOST_DEVICE constexpr int log2_exact(int x) {
  int r = 0;
  while ((1 << r) < x) ++r;
  return r;
}
}  // namespace detail

// The swizzle of 16-byte chunks for a LayoutType, on offsets counted in elements of ElemBits bits.
template <int ElemBits, LayoutType Type>
using gmma_swizzle = Swizzle<layout_type_bits(Type), detail::log2_exact(128 / ElemBits), 3>;

template <class T, Major MajorMode, LayoutType Type>
struct smem_atom_of {
  static constexpr int bits = sizeof_bits_v<T>;
  static_assert(bits == 8 || bits == 16 || bits == 32,
                "GMMA::smem_atom: wgmma operands are 8-, 16- or 32-bit elements (fp8/int8, f16/bf16, tf32)");
  static constexpr int width = layout_type_bytes(Type) * 8 / bits;  // elements in one swizzle row
  using Row = std::conditional_t<MajorMode == Major::K, Layout<Shape<_8, Int<width>>, Stride<Int<width>, _1>>,
                                 Layout<Shape<Int<width>, _8>, Stride<_1, Int<width>>>>;
  using type = ComposedLayout<gmma_swizzle<bits, Type>, Int<0>, Row>;
};

// One swizzle atom of the operand layout: (MN, K) -> element offset, 8 rows of W bytes.
template <class T, Major MajorMode, LayoutType Type>
using smem_atom = typename smem_atom_of<T, MajorMode, Type>::type;

template <class T>
using Layout_K_INTER_Atom = smem_atom<T, Major::K, LayoutType::INTERLEAVE>;
template <class T>
using Layout_K_SW32_Atom = smem_atom<T, Major::K, LayoutType::B32>;
template <class T>
using Layout_K_SW64_Atom = smem_atom<T, Major::K, LayoutType::B64>;
template <class T>
using Layout_K_SW128_Atom = smem_atom<T, Major::K, LayoutType::B128>;
template <class T>
using Layout_MN_INTER_Atom = smem_atom<T, Major::MN, LayoutType::INTERLEAVE>;
template <class T>
using Layout_MN_SW32_Atom = smem_atom<T, Major::MN, LayoutType::B32>;
template <class T>
using Layout_MN_SW64_Atom = smem_atom<T, Major::MN, LayoutType::B64>;
template <class T>
using Layout_MN_SW128_Atom = smem_atom<T, Major::MN, LayoutType::B128>;

}  // namespace tessel::GMMA
