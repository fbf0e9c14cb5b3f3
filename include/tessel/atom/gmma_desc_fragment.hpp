// tessel/atom/gmma_desc_fragment.hpp -- a wgmma's shared-memory operand as a tensor of descriptors
// (its "fragment"), so a mainloop issues SS wgmmas the way the sm80 path issues mma.sync: partition
// the stage with a TiledMMA, take the fragment, and call gemm on its k-slices.
//
//   Tensor tCsA = thr_mma.partition_A(sA);           // (MMA,MMA_M,MMA_K) elements of the stage
//   Tensor tCrA = thr_mma.partition_fragment_A(sA);  // (_1,MMA_M,MMA_K) descriptors
//   gemm(mma, tCrA(_, _, k), tCrB(_, _, k), tCrC);   // one wgmma per (m, n) of the k-slice
//
// Position (0, m, k) of the fragment is make_gmma_desc of the slice tCsA(_, m, k): the slices
// share their (MN, K) layout, so each one's descriptor is the first one's with the start address
// moved by the slice's offset in the stage's unswizzled element offsets (the hardware applies the
// swizzle to the addresses it forms). DescriptorIterator<T> carries that first descriptor; moving
// it n elements is a 32-bit add of n * sizeof(T) / 16 to the descriptor's low word
// (wgmma_desc_advance), so every step between slices must be a whole number of 16-byte units
// (a static_assert for static layouts, a check on the host otherwise).
//   e.g. bf16, a (64, 64) K-major SW128 stage at shared address 0x1000, an m64n64k16 TiledMMA:
//        tCrA is (_1,_1,_4):(_0,_0,_16); tCrA(0, 0, 2) = the descriptor of 0x1000 + 2 * 32 bytes
//        = 0x4000004000010104 (start 0x104 in 16-byte units, SBO 1024, 128-byte swizzle)
//
// make_gmma_desc_fragment<Major, T>(partition_layout, base)  the fragment of a partition whose
//     offsets count from shared-memory byte address `base` (host tests);
// make_gmma_desc_fragment<Major>(partition)                   the same from a shared-memory tensor:
//     its address in the shared window in device code, the pointer's own low bits on the host.
// A partition is (MMA, rest...): mode 0 one instruction's (MN, K) operand, the rest any modes
// (MMA_M or MMA_N, MMA_K, a pipeline's stages, ...), all kept in the fragment.
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/config.hpp>
#include <tessel/core/check.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::GMMA {

// The descriptors of one operand's slices: position n is the descriptor `desc` describes,
// moved n elements of T on.
template <class T>
struct DescriptorIterator {
  using iterator_tag = void;
  std::uint64_t desc;

  TESSEL_HOST_DEVICE constexpr std::uint64_t operator*() const { return desc; }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr DescriptorIterator operator+(Index const& n) const {
    return {wgmma_desc_advance(desc, std::uint32_t(static_cast<long long>(n) * long(sizeof_bits_v<T> / 8) / 16))};
  }
  template <class Index>
  TESSEL_HOST_DEVICE constexpr std::uint64_t operator[](Index const& n) const {
    return *(*this + n);
  }
};

namespace detail {

// The partition's layout without its swizzle and offset (those are in the first descriptor).
template <class L>
TESSEL_HOST_DEVICE constexpr auto partition_outer(L const& l) {
  return tessel::GMMA::detail::composed_parts<L>::outer(l);
}

// (MMA, rest...) -> (_1, rest...): one descriptor per slice.
template <class Outer>
TESSEL_HOST_DEVICE constexpr auto fragment_layout(Outer const& outer) {
  static_assert(Outer::rank >= 2, "make_gmma_desc_fragment: expects a TiledMMA partition (MMA, MMA_MN, MMA_K, ...)");
  return make_layout(replace<0>(outer.shape(), Int<1>{}), replace<0>(outer.stride(), Int<0>{}));
}

// Whether every step of the fragment's modes is a whole number of 16-byte units.
template <int ElemBytes, class Stride>
TESSEL_HOST_DEVICE constexpr bool whole_units(Stride const& s) {
  if constexpr (is_tuple_v<Stride>) {
    bool ok = true;
    for_each(s, [&](auto const& x) { ok = ok && whole_units<ElemBytes>(x); });
    return ok;
  } else {
    return static_cast<long long>(s) * ElemBytes % 16 == 0;
  }
}

// The slice (_, 0, 0, ...) of a rank-R partition.
template <int R>
TESSEL_HOST_DEVICE constexpr auto first_slice_coord() {
  return prepend(repeat_tuple<R - 1>(Int<0>{}), Underscore{});
}

}  // namespace detail

template <Major MajorMode, class T, class PartitionLayout>
TESSEL_HOST_DEVICE constexpr auto make_gmma_desc_fragment(PartitionLayout const& partition, std::uint32_t base) {
  auto const outer = detail::partition_outer(partition);  // (MMA,rest...)
  auto const frag = detail::fragment_layout(outer);       // (_1,rest...)
  constexpr int E = sizeof_bits_v<T> / 8;
  if constexpr (is_static_v<decltype(frag.stride())>) {
    static_assert(detail::whole_units<E>(decltype(frag.stride()){}),
                  "make_gmma_desc_fragment: a step between the partition's instruction slices is not a multiple of "
                  "16 bytes; wgmma descriptors address shared memory in 16-byte units (tile the stage from a "
                  "GMMA::Layout_*_Atom)");
  } else {
    TESSEL_ALGEBRA_REQUIRE(detail::whole_units<E>(frag.stride()),
                           "make_gmma_desc_fragment: a step between the partition's instruction slices is not a "
                           "multiple of 16 bytes");
  }
  auto const first = partition(detail::first_slice_coord<PartitionLayout::rank>());  // (MMA)
  DescriptorIterator<T> const it{make_gmma_desc<MajorMode, T>(first, base)};
  return make_tensor(it, frag);
}

template <Major MajorMode, class Engine, class PartitionLayout>
TESSEL_HOST_DEVICE auto make_gmma_desc_fragment(Tensor<Engine, PartitionLayout> const& partition) {
  using T = std::remove_cv_t<typename Engine::element_type>;
  void const* const p = raw_pointer(partition.data());
#if defined(__CUDA_ARCH__)
  std::uint32_t const base = tessel::detail::smem_address(p);
#else
  std::uint32_t const base = std::uint32_t(reinterpret_cast<std::uintptr_t>(p));
#endif
  return make_gmma_desc_fragment<MajorMode, T>(partition.layout(), base);
}

}  // namespace tessel::GMMA
