// tessel/atom/copy_traits_sm90_tma.hpp -- TMA copies as copy atoms that carry their tensor map.
//
// One TMA copy is issued by one thread and moves one whole box: ThrID _1:_0, and the source and
// destination layouts are one value of NumBits bits, (_1,NumBits):(_0,_1) -- the box's bytes,
// counted as a Copy_Atom<..., T> counts them (NumBits / bits(T) values). The traits hold the
// TmaDescriptor (made on the host: runtime/tma_descriptor.hpp, make_tma_copy).
//   Copy_Traits<SM90_TMA_LOAD, Int<NumBits>>             .with(bar) -> the executable load
//   Copy_Traits<SM90_TMA_LOAD_MULTICAST, Int<NumBits>>   .with(bar, cta_mask) -> the executable load
//   Copy_Traits<SM90_TMA_STORE, Int<NumBits>>            executable as it is
// The executable forms copy(smem, c0, c1, ...) issue the instruction with the box coordinates in
// the tensor map's dimension order (innermost first: TmaEncodeArgs::mode_of_dim says which mode
// of the global tensor each is), as many as the tensor map has dimensions; smem is the box's
// shared-memory address, aligned to its swizzle pattern. A load completes on `bar` (the caller
// arms it with expect_tx(box bytes) = NumBits / 8); a store joins the thread's bulk group.
// The descriptor must be read from a kernel parameter (or global memory): pass the atom as a
// __grid_constant__ parameter, or give with(...) the parameter's own descriptor.
//   e.g. Copy_Atom<Copy_Traits<SM90_TMA_LOAD, Int<131072>>, bfloat16_t>   (a 128x64 bf16 box)
//        prints ThrID _1:_0, ValLayoutSrc (_1,_8192):(_0,_1), ValueType 16b
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/atom/copy_traits.hpp>
#include <tessel/config.hpp>
#include <tessel/layout.hpp>

#include <cstdint>

namespace tessel {

// The executable forms (what with() returns).
struct SM90_TMA_LOAD_OP : SM90_TMA_LOAD {};
struct SM90_TMA_LOAD_MULTICAST_OP : SM90_TMA_LOAD_MULTICAST {};

namespace detail {
template <class NumBits>
struct tma_box_traits {
  static_assert(is_static_v<NumBits>, "TMA copy traits: the box size in bits is a static Int<>");
  using ThrID = Layout<_1>;
  using SrcLayout = Layout<Shape<_1, NumBits>>;
  using DstLayout = Layout<Shape<_1, NumBits>>;
  using RefLayout = SrcLayout;
  static constexpr std::uint32_t box_bytes = std::uint32_t(NumBits::value / 8);
};
}  // namespace detail

template <class NumBits>
struct Copy_Traits<SM90_TMA_LOAD_OP, NumBits> : detail::tma_box_traits<NumBits> {
  TmaDescriptor const* desc = nullptr;
  std::uint64_t* bar = nullptr;

  template <class... Coords>
  TESSEL_DEVICE void copy(void* smem, Coords... c) const {
    int const coords[] = {int(c)...};
    SM90_TMA_LOAD::copy(desc, bar, smem, coords);
  }
};

template <class NumBits>
struct Copy_Traits<SM90_TMA_LOAD_MULTICAST_OP, NumBits> : detail::tma_box_traits<NumBits> {
  TmaDescriptor const* desc = nullptr;
  std::uint64_t* bar = nullptr;
  std::uint16_t mask = 0;

  template <class... Coords>
  TESSEL_DEVICE void copy(void* smem, Coords... c) const {
    int const coords[] = {int(c)...};
    SM90_TMA_LOAD_MULTICAST::copy(desc, bar, mask, smem, coords);
  }
};

template <class NumBits>
struct Copy_Traits<SM90_TMA_LOAD, NumBits> : detail::tma_box_traits<NumBits> {
  TmaDescriptor tma_desc{};

  TESSEL_HOST_DEVICE constexpr TmaDescriptor const* get_tma_descriptor() const { return &tma_desc; }
  // The load completing on `bar`, reading `desc` (by default this atom's own descriptor).
  TESSEL_HOST_DEVICE constexpr Copy_Traits<SM90_TMA_LOAD_OP, NumBits> with(std::uint64_t& bar) const {
    return {{}, &tma_desc, &bar};
  }
  TESSEL_HOST_DEVICE constexpr Copy_Traits<SM90_TMA_LOAD_OP, NumBits> with(TmaDescriptor const* desc,
                                                                           std::uint64_t& bar) const {
    return {{}, desc, &bar};
  }
};

template <class NumBits>
struct Copy_Traits<SM90_TMA_LOAD_MULTICAST, NumBits> : detail::tma_box_traits<NumBits> {
  TmaDescriptor tma_desc{};

  TESSEL_HOST_DEVICE constexpr TmaDescriptor const* get_tma_descriptor() const { return &tma_desc; }
  // The load landing in every CTA of `cta_mask` (bit r: cluster rank r), each completing on its
  // own mbarrier at the offset of `bar`.
  TESSEL_HOST_DEVICE constexpr Copy_Traits<SM90_TMA_LOAD_MULTICAST_OP, NumBits> with(std::uint64_t& bar,
                                                                                     std::uint16_t cta_mask) const {
    return {{}, &tma_desc, &bar, cta_mask};
  }
  TESSEL_HOST_DEVICE constexpr Copy_Traits<SM90_TMA_LOAD_MULTICAST_OP, NumBits> with(
      TmaDescriptor const* desc, std::uint64_t& bar, std::uint16_t cta_mask) const {
    return {{}, desc, &bar, cta_mask};
  }
};

template <class NumBits>
struct Copy_Traits<SM90_TMA_STORE, NumBits> : detail::tma_box_traits<NumBits> {
  TmaDescriptor tma_desc{};

  TESSEL_HOST_DEVICE constexpr TmaDescriptor const* get_tma_descriptor() const { return &tma_desc; }
  // Box at `smem` to the global tensor at the coordinates (after fence_proxy_async_shared and a
  // barrier when threads wrote smem; then tma_store_commit / tma_store_wait).
  template <class... Coords>
  TESSEL_DEVICE void copy(void const* smem, Coords... c) const {
    int const coords[] = {int(c)...};
    SM90_TMA_STORE::copy(&tma_desc, smem, coords);
  }
};

}  // namespace tessel
