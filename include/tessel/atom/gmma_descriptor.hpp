// tessel/atom/gmma_descriptor.hpp -- the 64-bit shared-memory matrix descriptor a wgmma reads an
// operand through, made from the operand's layout.
//
// Bits (PTX ISA, "Matrix Descriptor Format"), each byte quantity stored as (x & 0x3FFFF) >> 4:
//   0-13  start address     16-29  leading-dimension byte offset (LBO)
//   32-45 stride-dimension byte offset (SBO)     49-51  base offset     62-63  LayoutType
// What LBO and SBO are depends on the arrangement (atom/gmma_smem_layout.hpp). With E-byte
// elements, T = 16 / E, W the swizzle width in bytes, the operand (MN x K) must be, in bytes from
// its first element (the PTX ISA's canonical layouts):
//   K-major  interleave  (mn%8)*16  + (mn/8)*SBO + (k%T)*E + (k/T)*LBO     LBO: next 16 bytes of K
//            swizzled    (mn%8)*W   + (mn/8)*SBO + k*E      (K*E <= W)      LBO: unused
//   MN-major interleave  (mn%T)*E   + (mn/T)*SBO + (k%8)*16 + (k/8)*LBO     SBO: next 16 bytes of MN
//            swizzled    (mn%(W/E))*E + (mn/(W/E))*LBO + (k%8)*W + (k/8)*SBO
// So SBO steps 8 rows (K-major) or 8 k (MN-major, swizzled); for MN-major swizzled operands LBO
// is the step from one swizzle atom to the next along MN (unused when MN fits one atom, W/E
// elements), and for MN-major interleave the roles swap: SBO steps the 16-byte core matrices
// along MN, LBO the groups of 8 k. An offset the instruction never uses is encoded as 1 (16
// bytes), as the PTX ISA says for the K-major swizzled LBO. The swizzle is applied by the
// hardware to the addresses it forms, exactly as the layout's Swizzle does to offsets, when the
// tensor's base is aligned to the swizzle pattern (8 rows: 1024 / 512 / 256 bytes; 16 for
// interleave); then the base offset is 0, which is all this header produces.
//
//   make_gmma_desc<Major, T>(layout, base)  layout: one instruction's operand, (MN, K) -> element
//       offset (Sw o offset o L, or L; a rank-1 layout whose mode is (MN, K) also, as partition_A
//       slices give); base: the shared-memory byte address the layout's offsets count from.
//       Start address = base + E * (offset + L(0,0)).
//   make_gmma_desc<Major>(tensor)           the same from a shared-memory tensor, in device code (the
//       shared-window address of its data pointer).
//   gmma_descriptor_layout<Major, T>(layout)  the layout-only part: LayoutType, LBO, SBO, or the
//       first rule the layout breaks (DescError) and where.
//   GMMA::DescriptorFields, encode(fields), decode(desc): the bit fields, in bytes.
// A static layout is checked at compile time (one static_assert per rule); a run-time one on the
// host (AlgebraError). The base's alignment is checked on the host.
//   e.g. K-major SW128 bf16, the kernel's (128,64) stage sliced to warpgroup 1, k-slice 2:
//        Sw<3,3,3> o 4128 o ((_64,_16)):((_64,_1)) at base 0x1000 -> start 0x1000 + 2*4128 = 0x3040,
//        LBO 16 (unused), SBO 1024, LayoutType B128:
//        desc = 0x304 | 1 << 16 | 64 << 32 | 1 << 62 = 0x4000004000010304
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/config.hpp>
#include <tessel/core/check.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::GMMA {

// The descriptor's fields, byte quantities in bytes.
struct DescriptorFields {
  std::uint32_t start_address = 0;
  std::uint32_t leading_byte_offset = 16;
  std::uint32_t stride_byte_offset = 16;
  std::uint32_t base_offset = 0;  // 3 bits
  LayoutType layout_type = LayoutType::INTERLEAVE;
};

TESSEL_HOST_DEVICE constexpr std::uint64_t encode(DescriptorFields const& f) {
  auto const field = [](std::uint32_t bytes) { return std::uint64_t((bytes & 0x3FFFFu) >> 4); };
  return field(f.start_address) | field(f.leading_byte_offset) << 16 | field(f.stride_byte_offset) << 32 |
         std::uint64_t(f.base_offset & 7u) << 49 | std::uint64_t(f.layout_type) << 62;
}
TESSEL_HOST_DEVICE constexpr DescriptorFields decode(std::uint64_t d) {
  DescriptorFields f;
  f.start_address = std::uint32_t(d & 0x3FFF) << 4;
  f.leading_byte_offset = std::uint32_t((d >> 16) & 0x3FFF) << 4;
  f.stride_byte_offset = std::uint32_t((d >> 32) & 0x3FFF) << 4;
  f.base_offset = std::uint32_t((d >> 49) & 7);
  f.layout_type = LayoutType(std::uint8_t((d >> 62) & 3));
  return f;
}

// The first rule an operand layout breaks.
enum class DescError {
  none,
  swizzle,         // the Swizzle is not a wgmma one for this element size
  canonical,       // an element is not where the descriptor would read it
  offset_align,    // LBO or SBO is not a multiple of 16 bytes (or negative)
  offset_range,    // LBO or SBO is 2^18 bytes or more
  base_align,      // the base address is not aligned to the swizzle pattern
};

TESSEL_HOST_DEVICE constexpr char const* to_string(DescError e) {
  switch (e) {
    case DescError::none: return "none";
    case DescError::swizzle:
      return "the layout's Swizzle is not a wgmma swizzle for this element size (Sw<B,log2(16/bytes),3>, B 0..3)";
    case DescError::canonical:
      return "the layout is not a canonical wgmma operand layout for this major-ness and swizzle "
             "(an element is not where the descriptor reads it)";
    case DescError::offset_align: return "the layout's leading/stride byte offset is not a non-negative multiple of 16";
    case DescError::offset_range: return "the layout's leading/stride byte offset does not fit the descriptor (< 2^18 bytes)";
    case DescError::base_align:
      return "the shared-memory base is not aligned to the swizzle pattern (8 rows: 1024, 512, 256 bytes; 16 for interleave)";
  }
  return "?";
}

// The layout-only part of a descriptor.
struct DescriptorLayout {
  LayoutType layout_type = LayoutType::INTERLEAVE;
  std::uint32_t leading_byte_offset = 16;
  std::uint32_t stride_byte_offset = 16;
  DescError error = DescError::none;
  int bad_mn = -1, bad_k = -1;  // the first element out of place (DescError::canonical)
};

namespace detail {

// The swizzle's LayoutType, or nothing when it is not one of wgmma's for ElemBits-bit elements.
template <int ElemBits, class Swz>
struct swizzle_layout_type {
  static constexpr bool ok = false;
  static constexpr LayoutType type = LayoutType::INTERLEAVE;
};
template <int ElemBits, int B, int M, int S>
struct swizzle_layout_type<ElemBits, Swizzle<B, M, S>> {
  static constexpr bool ok = B == 0 || (B <= 3 && S == 3 && M == GMMA::detail::log2_exact(128 / ElemBits));
  static constexpr LayoutType type = layout_type_of_bits(B);
};

// (MN, K) of an operand layout: a rank-2 layout, or the single (MN, K) mode of a rank-1 slice.
template <class S, class D>
TESSEL_HOST_DEVICE constexpr auto operand_2d(Layout<S, D> const& l) {
  if constexpr (Layout<S, D>::rank == 1) {
    static_assert(rank_v<decltype(shape<0>(l))> == 2,
                  "make_gmma_desc: the operand layout must be (MN, K): rank 2, or rank 1 whose mode is (MN, K)");
    return layout<0>(l);
  } else {
    static_assert(Layout<S, D>::rank == 2, "make_gmma_desc: the operand layout must be (MN, K)");
    return l;
  }
}

// Where the descriptor reads element (mn, k), in bytes from element (0, 0).
TESSEL_HOST_DEVICE constexpr long long canonical_byte(Major major, LayoutType t, int elem_bytes, long long lbo,
                                                      long long sbo, int mn, int k) {
  long long const w = layout_type_bytes(t);  // 16 for interleave
  long long const chunk = 16 / elem_bytes;   // elements in 16 bytes
  if (major == Major::K) {
    if (t == LayoutType::INTERLEAVE) return (mn % 8) * 16 + (mn / 8) * sbo + (k % chunk) * elem_bytes + (k / chunk) * lbo;
    return (mn % 8) * w + (mn / 8) * sbo + (long long)k * elem_bytes;
  }
  if (t == LayoutType::INTERLEAVE) return (mn % chunk) * elem_bytes + (mn / chunk) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  long long const row = w / elem_bytes;
  return (mn % row) * elem_bytes + (mn / row) * lbo + (k % 8) * w + (k / 8) * sbo;
}

// LBO and SBO read off the layout (`at(mn, k)` = element offset), then every element checked.
template <class At>
TESSEL_HOST_DEVICE constexpr DescriptorLayout analyze(At const& at, int extent_mn, int extent_k, int elem_bytes,
                                                      Major major, LayoutType t) {
  DescriptorLayout r;
  r.layout_type = t;
  long long const origin = at(0, 0);
  auto const bytes_at = [&](int mn, int k) { return (at(mn, k) - origin) * elem_bytes; };
  int const chunk = 16 / elem_bytes;
  int const row = layout_type_bytes(t) / elem_bytes;
  // The (mn, k) steps whose byte distance is the LBO and the SBO, or -1 where the instruction's
  // extent never takes that step.
  int lbo_mn = 0, lbo_k = 0, sbo_mn = 0, sbo_k = 0;
  if (major == Major::K) {
    sbo_mn = 8;
    if (t == LayoutType::INTERLEAVE) lbo_k = chunk; else lbo_k = -1;
  } else if (t == LayoutType::INTERLEAVE) {
    sbo_mn = chunk, lbo_k = 8;
  } else {
    lbo_mn = row, sbo_k = 8;
  }
  long long lbo = 16, sbo = 16;
  if (lbo_k >= 0 && lbo_mn < extent_mn && lbo_k < extent_k && (lbo_mn > 0 || lbo_k > 0)) lbo = bytes_at(lbo_mn, lbo_k);
  if (sbo_mn < extent_mn && sbo_k < extent_k && (sbo_mn > 0 || sbo_k > 0)) sbo = bytes_at(sbo_mn, sbo_k);
  auto const offset_error = [](long long v) {
    return v < 0 || v % 16 != 0 ? DescError::offset_align : v >= (1LL << 18) ? DescError::offset_range : DescError::none;
  };
  r.error = offset_error(lbo) != DescError::none ? offset_error(lbo) : offset_error(sbo);
  if (r.error != DescError::none) return r;
  r.leading_byte_offset = std::uint32_t(lbo);
  r.stride_byte_offset = std::uint32_t(sbo);
  for (int k = 0; k < extent_k; ++k) {
    for (int mn = 0; mn < extent_mn; ++mn) {
      if (bytes_at(mn, k) != canonical_byte(major, t, elem_bytes, lbo, sbo, mn, k)) {
        r.error = DescError::canonical;
        r.bad_mn = mn, r.bad_k = k;
        return r;
      }
    }
  }
  return r;
}

template <class L>
struct composed_parts {  // a plain layout: no swizzle, offset 0
  using swizzle = Swizzle<0, 4, 3>;
  TESSEL_HOST_DEVICE static constexpr L const& outer(L const& l) { return l; }
  TESSEL_HOST_DEVICE static constexpr long long offset(L const&) { return 0; }
};
template <class I, class O, class L>
struct composed_parts<ComposedLayout<I, O, L>> {
  static_assert(is_swizzle_v<I>, "make_gmma_desc: the layout must be Swizzle o offset o Layout, or a Layout");
  using swizzle = I;
  TESSEL_HOST_DEVICE static constexpr L const& outer(ComposedLayout<I, O, L> const& l) { return l.layout_b(); }
  TESSEL_HOST_DEVICE static constexpr long long offset(ComposedLayout<I, O, L> const& l) {
    return static_cast<long long>(l.offset());
  }
};

}  // namespace detail

namespace detail {
// The layout-only part for swizzle Swz and outer layout `outer` (the offset does not matter).
template <Major MajorMode, class T, class Swz, class Outer>
TESSEL_HOST_DEVICE constexpr DescriptorLayout descriptor_layout(Outer const& outer) {
  constexpr int bits = sizeof_bits_v<T>;
  static_assert(bits == 8 || bits == 16 || bits == 32, "make_gmma_desc: wgmma operands are 8-, 16- or 32-bit elements");
  using SwzType = swizzle_layout_type<bits, Swz>;
  DescriptorLayout r;
  if (!SwzType::ok) {
    r.error = DescError::swizzle;
    return r;
  }
  auto const op = operand_2d(outer);
  auto const at = [&](int mn, int k) { return static_cast<long long>(op(make_coord(mn, k))); };
  return analyze(at, int(size<0>(op)), int(size<1>(op)), bits / 8, MajorMode, SwzType::type);
}
}  // namespace detail

// The layout-only part of the descriptor of operand `layout` (see the top of the file).
template <Major MajorMode, class T, class AnyLayout>
TESSEL_HOST_DEVICE constexpr DescriptorLayout gmma_descriptor_layout(AnyLayout const& layout) {
  using Parts = detail::composed_parts<AnyLayout>;
  return detail::descriptor_layout<MajorMode, T, typename Parts::swizzle>(Parts::outer(layout));
}

// The descriptor of operand `layout` whose offsets count from shared-memory byte address `base`.
// With a static outer layout (the offset may be a run-time value, as slices have) everything but
// the start address is a compile-time constant.
template <Major MajorMode, class T, class AnyLayout>
TESSEL_HOST_DEVICE constexpr std::uint64_t make_gmma_desc(AnyLayout const& layout, std::uint32_t base) {
  using Parts = detail::composed_parts<AnyLayout>;
  using Outer = std::remove_cvref_t<decltype(Parts::outer(layout))>;
  DescriptorLayout d;
  if constexpr (is_static_v<Outer>) {
    constexpr DescriptorLayout s = detail::descriptor_layout<MajorMode, T, typename Parts::swizzle>(Outer{});
    static_assert(s.error != DescError::swizzle,
                  "make_gmma_desc: the layout's Swizzle is not a wgmma swizzle for this element size; build the "
                  "layout from a GMMA::Layout_*_Atom<T> of the same element type");
    static_assert(s.error != DescError::canonical,
                  "make_gmma_desc: the layout is not one the descriptor can describe for this Major: build it with "
                  "tile_to_shape(GMMA::Layout_<Major>_*_Atom<T>, ...) and pass one instruction's (MN, K) slice");
    static_assert(s.error != DescError::offset_align && s.error != DescError::offset_range,
                  "make_gmma_desc: the step between core matrices or swizzle atoms is not a multiple of 16 bytes "
                  "below 256 KiB");
    d = s;
  } else {
    d = gmma_descriptor_layout<MajorMode, T>(layout);
    TESSEL_ALGEBRA_REQUIRE(d.error == DescError::none, "make_gmma_desc: ", to_string(d.error), " (first bad element mn=",
                           d.bad_mn, ", k=", d.bad_k, ")");
  }
  std::uint32_t const pattern =
      d.layout_type == LayoutType::INTERLEAVE ? 16u : 8u * std::uint32_t(layout_type_bytes(d.layout_type));
  TESSEL_ALGEBRA_REQUIRE(base % pattern == 0, "make_gmma_desc: ", to_string(DescError::base_align), "; base ", base,
                         " is not a multiple of ", pattern);
  auto const op = detail::operand_2d(Parts::outer(layout));
  long long const first = Parts::offset(layout) + static_cast<long long>(op(make_coord(0, 0)));
  DescriptorFields f;
  f.start_address = base + std::uint32_t(first * (sizeof_bits_v<T> / 8));
  f.leading_byte_offset = d.leading_byte_offset;
  f.stride_byte_offset = d.stride_byte_offset;
  f.layout_type = d.layout_type;
  return encode(f);
}

// The descriptor of a shared-memory tensor holding one instruction's operand.
template <Major MajorMode, class Engine, class AnyLayout>
TESSEL_DEVICE std::uint64_t make_gmma_desc(Tensor<Engine, AnyLayout> const& t) {
  using T = std::remove_cv_t<typename Engine::element_type>;
  return make_gmma_desc<MajorMode, T>(t.layout(), tessel::detail::smem_address(raw_pointer(t.data())));
}

}  // namespace tessel::GMMA
