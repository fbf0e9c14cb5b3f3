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
// The copies themselves, of any rank, are the ops of sm90_copy_tma_ops.hpp (SM90_TMA_LOAD,
// _MULTICAST, _IM2COL, SM90_TMA_STORE, ...), which every kernel and the copy atoms issue; here:
//   l2_cache_policy        createpolicy.fractional: an L2 eviction priority for a hinted load
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

// An L2 eviction priority for every line a hinted copy touches (createpolicy.fractional, fraction
// 1.0), as the 64-bit policy operand of a hinted load (SM90_TMA_LOAD::copy(..., policy));
// L2Priority::none gives 0 (use the plain copy).
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
