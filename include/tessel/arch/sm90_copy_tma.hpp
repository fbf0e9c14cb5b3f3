// tessel/arch/sm90_copy_tma.hpp -- TMA: the tensor memory accelerator's bulk tensor copies.
//
// A TmaDescriptor (the driver's CUtensorMap, 128 opaque bytes made on the host by
// cuTensorMapEncodeTiled; runtime/tma_descriptor.hpp) describes a tensor in global memory -- up to 5
// dimensions, strides multiples of 16 bytes -- the box one copy moves, and the shared-memory
// swizzle. One thread issues a copy of a whole box by coordinates (innermost first); elements
// outside the tensor read as zero and are not written. Loads complete on an mbarrier
// (complete_tx: the bytes count down the barrier's expected transaction count); stores are
// tracked by bulk groups. Kernels take descriptors as __grid_constant__ parameters so that their
// address is a parameter-space address the TMA unit can read.
//   tma_load_3d            cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//   tma_load_3d_multicast  the same, .multicast::cluster: one read lands in every CTA of cta_mask
//                          (same shared offset, each CTA's own mbarrier)
//   ..._hint variants      the same with .L2::cache_hint: the lines read carry an L2 eviction
//                          priority made by l2_cache_policy (createpolicy.fractional)
//   tma_store_3d           cp.async.bulk.tensor.3d.global.shared::cta.bulk_group
//   tma_store_commit       cp.async.bulk.commit_group
//   tma_store_wait_read<N> cp.async.bulk.wait_group.read N (shared source reusable)
//   tma_store_wait<N>      cp.async.bulk.wait_group N (writes done)
//   tma_prefetch_descriptor  prefetch.tensormap
//   fence_proxy_async_shared fence.proxy.async.shared::cta: ordinary shared-memory writes become
//                          visible to the async proxy (TMA stores, wgmma) after a barrier
//   fence_proxy_async_global fence.proxy.async.global: orders this thread's global-memory accesses
//                          through the async proxy (TMA stores, reductions) with its generic ones
//                          (a flag raised after a completed TMA reduction, or awaited before one)
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// The 128-byte tensor map, as kernels receive it (layout-compatible with CUtensorMap).
struct alignas(64) TmaDescriptor {
  std::uint64_t opaque[16];
};

TESSEL_DEVICE inline void tma_load_3d(TmaDescriptor const* desc, std::uint64_t* bar, void* smem_dst, int c0, int c1,
                                      int c2) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(detail::smem_address(smem_dst)),
      "l"(desc), "r"(c0), "r"(c1), "r"(c2), "r"(detail::smem_address(bar))
      : "memory");
#else
  (void)desc, (void)bar, (void)smem_dst, (void)c0, (void)c1, (void)c2;
  detail::arch_unavailable("cp.async.bulk.tensor (TMA load, needs sm_90)");
#endif
}

TESSEL_DEVICE inline void tma_load_3d_multicast(TmaDescriptor const* desc, std::uint64_t* bar, void* smem_dst,
                                                std::uint16_t cta_mask, int c0, int c1, int c2) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(detail::smem_address(smem_dst)),
      "l"(desc), "r"(detail::smem_address(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
#else
  (void)desc, (void)bar, (void)smem_dst, (void)cta_mask, (void)c0, (void)c1, (void)c2;
  detail::arch_unavailable("cp.async.bulk.tensor multicast (TMA load, needs sm_90)");
#endif
}

// An L2 eviction priority for every line a hinted copy touches (createpolicy.fractional, fraction
// 1.0), as the 64-bit policy operand of the _hint copies; L2Priority::none gives 0 (use the plain copy).
enum class L2Priority : int { none = 0, evict_first = 1, evict_last = 2 };
TESSEL_DEVICE inline std::uint64_t l2_cache_policy(L2Priority priority) {
  std::uint64_t policy = 0;
#if defined(TESSEL_ARCH_SM90)
  if (priority == L2Priority::evict_first) {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  } else if (priority == L2Priority::evict_last) {
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  }
#else
  (void)priority;
#endif
  return policy;
}

TESSEL_DEVICE inline void tma_load_3d_hint(TmaDescriptor const* desc, std::uint64_t* bar, void* smem_dst, int c0, int c1,
                                           int c2, std::uint64_t policy) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
      "[%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(detail::smem_address(smem_dst)),
      "l"(desc), "r"(c0), "r"(c1), "r"(c2), "r"(detail::smem_address(bar)), "l"(policy)
      : "memory");
#else
  (void)desc, (void)bar, (void)smem_dst, (void)c0, (void)c1, (void)c2, (void)policy;
  detail::arch_unavailable("cp.async.bulk.tensor (TMA load, needs sm_90)");
#endif
}

TESSEL_DEVICE inline void tma_load_3d_multicast_hint(TmaDescriptor const* desc, std::uint64_t* bar, void* smem_dst,
                                                     std::uint16_t cta_mask, int c0, int c1, int c2, std::uint64_t policy) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%3, %4, %5}], [%2], %6, %7;\n" ::"r"(detail::smem_address(smem_dst)),
      "l"(desc), "r"(detail::smem_address(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask), "l"(policy)
      : "memory");
#else
  (void)desc, (void)bar, (void)smem_dst, (void)cta_mask, (void)c0, (void)c1, (void)c2, (void)policy;
  detail::arch_unavailable("cp.async.bulk.tensor multicast (TMA load, needs sm_90)");
#endif
}

TESSEL_DEVICE inline void tma_store_3d(TmaDescriptor const* desc, void const* smem_src, int c0, int c1, int c2) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(desc),
               "r"(detail::smem_address(smem_src)), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
#else
  (void)desc, (void)smem_src, (void)c0, (void)c1, (void)c2;
  detail::arch_unavailable("cp.async.bulk.tensor (TMA store, needs sm_90)");
#endif
}

TESSEL_DEVICE inline void tma_store_commit() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

template <int Pending>
TESSEL_DEVICE void tma_store_wait_read() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
#endif
}

template <int Pending>
TESSEL_DEVICE void tma_store_wait() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

TESSEL_DEVICE inline void tma_prefetch_descriptor(TmaDescriptor const* desc) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(desc) : "memory");
#else
  (void)desc;
#endif
}

TESSEL_DEVICE inline void fence_proxy_async_shared() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

TESSEL_DEVICE inline void fence_proxy_async_global() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
#endif
}

}  // namespace tessel
