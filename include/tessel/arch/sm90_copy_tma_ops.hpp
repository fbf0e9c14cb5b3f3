// tessel/arch/sm90_copy_tma_ops.hpp -- TMA tensor copies of any rank (1 to 5), as the ops the
// copy atoms of atom/copy_traits_sm90_tma.hpp call.
//
// Coordinates are in the tensor map's dimension order (innermost first), one int per dimension;
// `smem` is the box's shared-memory address (aligned to the swizzle pattern), `bar` the mbarrier
// the load completes on (complete_tx: its bytes count down the barrier's expected transactions).
//   SM90_TMA_LOAD::copy<R>(desc, bar, smem, c)              cp.async.bulk.tensor.Rd.shared::cluster.global.tile
//                                                            .mbarrier::complete_tx::bytes
//   SM90_TMA_LOAD::copy<R>(desc, bar, smem, c, policy)      ... .L2::cache_hint: the lines read carry an L2
//                                                            eviction priority (policy: l2_cache_policy)
//   SM90_TMA_LOAD_MULTICAST::copy<R>(desc, bar, mask, smem, c[, policy])   ... .multicast::cluster: the box lands at
//                                                            the same offset in every CTA of `mask`, each on
//                                                            its own barrier at the same offset
//   SM90_TMA_LOAD_IM2COL::copy<R>(desc, bar, smem, c, off)  ... .global.im2col...: a column of pixels of an
//                                                            im2col tensor map (runtime/tma_descriptor.hpp),
//                                                            R of 3 to 5; c = (channel, w[, h[, d]], n) of
//                                                            the first pixel, off = the R - 2 filter-tap
//                                                            offsets (w first) added to every pixel read
//   SM90_TMA_STORE::copy<R>(desc, smem, c)                  cp.async.bulk.tensor.Rd.global.shared::cta.bulk_group
//   SM90_TMA_REDUCE_ADD::copy<R>(desc, smem, c)             cp.reduce.async.bulk.tensor.Rd.global.shared::cta.add
//                                                            .tile.bulk_group: the box is added element-wise to
//                                                            the tensor in L2 (no thread waits on it; several
//                                                            CTAs may add to one box), elements outside not written
//   SM90_BULK_COPY_G2S::copy(bar, smem, gmem, bytes)        cp.async.bulk.shared::cluster.global.mbarrier
//                                                            ::complete_tx::bytes: contiguous bytes, no tensor
//                                                            map (addresses 16-byte aligned, bytes a multiple of 16)
// (arch/sm90_copy_tma.hpp has the descriptor type, the L2 cache policy a hinted load carries, and the
// bulk-group commit/wait and proxy fence a store needs.)
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

struct SM90_TMA_LOAD {
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, std::uint64_t* bar, void* smem, int const (&c)[R]) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_LOAD: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const dst = detail::smem_address(smem), mbar = detail::smem_address(bar);
    if constexpr (R == 1) {
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)bar, (void)smem, (void)c;
    detail::arch_unavailable("cp.async.bulk.tensor (SM90_TMA_LOAD, needs sm_90)");
#endif
  }
  // The same with .L2::cache_hint: the lines read carry `policy` (l2_cache_policy, sm90_copy_tma.hpp).
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, std::uint64_t* bar, void* smem, int const (&c)[R],
                                 std::uint64_t policy) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_LOAD: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const dst = detail::smem_address(smem), mbar = detail::smem_address(bar);
    if constexpr (R == 1) {
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "l"(policy), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4, %5}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "l"(policy), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4, %5, %6}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4, %5, %6, %7}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)bar, (void)smem, (void)c, (void)policy;
    detail::arch_unavailable("cp.async.bulk.tensor (SM90_TMA_LOAD, needs sm_90)");
#endif
  }
};

struct SM90_TMA_LOAD_MULTICAST {
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, std::uint64_t* bar, std::uint16_t mask, void* smem,
                                 int const (&c)[R]) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_LOAD_MULTICAST: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const dst = detail::smem_address(smem), mbar = detail::smem_address(bar);
    if constexpr (R == 1) {
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6, %7}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)bar, (void)mask, (void)smem, (void)c;
    detail::arch_unavailable("cp.async.bulk.tensor multicast (SM90_TMA_LOAD_MULTICAST, needs sm_90)");
#endif
  }
  // The same with .L2::cache_hint (`policy`: l2_cache_policy).
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, std::uint64_t* bar, std::uint16_t mask, void* smem,
                                 int const (&c)[R], std::uint64_t policy) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_LOAD_MULTICAST: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const dst = detail::smem_address(smem), mbar = detail::smem_address(bar);
    if constexpr (R == 1) {
      asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%5}], [%2], %3, %4;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "l"(policy), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%5, %6}], [%2], %3, %4;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "l"(policy), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%5, %6, %7}], [%2], %3, %4;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%5, %6, %7, %8}], [%2], %3, %4;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%5, %6, %7, %8, %9}], [%2], %3, %4;"
                   ::"r"(dst), "l"(desc), "r"(mbar), "h"(mask), "l"(policy), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)bar, (void)mask, (void)smem, (void)c, (void)policy;
    detail::arch_unavailable("cp.async.bulk.tensor multicast (SM90_TMA_LOAD_MULTICAST, needs sm_90)");
#endif
  }
};

// An im2col tensor map walks pixelsPerColumn pixels from c through its bounding box (w fastest,
// then h, d and n, each by its traversal stride) and reads each at its position plus `off`: the
// rows of a convolution's activation tile for one filter tap. Reads outside the tensor are zeros.
struct SM90_TMA_LOAD_IM2COL {
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, std::uint64_t* bar, void* smem, int const (&c)[R],
                                 std::uint16_t const (&off)[R - 2]) {
    static_assert(3 <= R && R <= 5, "SM90_TMA_LOAD_IM2COL: an im2col tensor map has 3 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const dst = detail::smem_address(smem), mbar = detail::smem_address(bar);
    if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2], {%6};"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "h"(off[0]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "h"(off[0]), "h"(off[1]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2], {%8, %9, %10};"
                   ::"r"(dst), "l"(desc), "r"(mbar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "h"(off[0]),
                   "h"(off[1]), "h"(off[2]) : "memory");
    }
#else
    (void)desc, (void)bar, (void)smem, (void)c, (void)off;
    detail::arch_unavailable("cp.async.bulk.tensor im2col (SM90_TMA_LOAD_IM2COL, needs sm_90)");
#endif
  }
};

struct SM90_TMA_STORE {
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, void const* smem, int const (&c)[R]) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_STORE: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const src = detail::smem_address(smem);
    if constexpr (R == 1) {
      asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)smem, (void)c;
    detail::arch_unavailable("cp.async.bulk.tensor (SM90_TMA_STORE, needs sm_90)");
#endif
  }
};

struct SM90_TMA_REDUCE_ADD {
  template <int R>
  TESSEL_DEVICE static void copy(TmaDescriptor const* desc, void const* smem, int const (&c)[R]) {
    static_assert(1 <= R && R <= 5, "SM90_TMA_REDUCE_ADD: a tensor map has 1 to 5 dimensions");
#if defined(TESSEL_ARCH_SM90)
    std::uint32_t const src = detail::smem_address(smem);
    if constexpr (R == 1) {
      asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%2}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]) : "memory");
    } else if constexpr (R == 2) {
      asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]) : "memory");
    } else if constexpr (R == 3) {
      asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
    } else if constexpr (R == 4) {
      asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
    } else {
      asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
                   ::"l"(desc), "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
    }
#else
    (void)desc, (void)smem, (void)c;
    detail::arch_unavailable("cp.reduce.async.bulk.tensor (SM90_TMA_REDUCE_ADD, needs sm_90)");
#endif
  }
};

struct SM90_BULK_COPY_G2S {
  TESSEL_DEVICE static void copy(std::uint64_t* bar, void* smem, void const* gmem, std::uint32_t bytes) {
#if defined(TESSEL_ARCH_SM90)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(detail::smem_address(smem)), "l"(gmem), "r"(bytes), "r"(detail::smem_address(bar)) : "memory");
#else
    (void)bar, (void)smem, (void)gmem, (void)bytes;
    detail::arch_unavailable("cp.async.bulk (SM90_BULK_COPY_G2S, needs sm_90)");
#endif
  }
};

}  // namespace tessel
