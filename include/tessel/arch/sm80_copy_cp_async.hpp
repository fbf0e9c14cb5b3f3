// tessel/arch/sm80_copy_cp_async.hpp -- cp.async: global -> shared without passing registers (sm_80).
//
// SM80_CP_ASYNC_CACHEALWAYS<S,D>   cp.async.ca, 4, 8 or 16 bytes, cached in L1 and L2
// SM80_CP_ASYNC_CACHEGLOBAL<S,D>   cp.async.cg, 16 bytes, cached in L2 only
// The _ZFILL variants take a predicate: false copies zero bytes from global memory and fills the
// destination with zeros (src-size 0), so out-of-bounds elements arrive as 0 and nothing is read.
// The copies are asynchronous: cp_async_fence() closes a group, cp_async_wait<N>() waits until at
// most N groups are in flight (then __syncthreads() before other threads read the data), or
// cp_async_mbarrier_arrive_noinc(bar) makes an mbarrier's arrival wait for them instead.
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

namespace detail {
template <class S, class D>
inline constexpr bool cp_async_size_ok = sizeof(S) == sizeof(D) && (sizeof(S) == 4 || sizeof(S) == 8 || sizeof(S) == 16);
}

template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEALWAYS {
  static_assert(detail::cp_async_size_ok<S, D>, "cp.async.ca copies 4, 8 or 16 bytes; S and D must have that size");
  using SRegisters = S[1];
  using DRegisters = D[1];

  TESSEL_HOST_DEVICE static void copy(S const& gmem_src, D& smem_dst) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(detail::smem_address(&smem_dst)),
                 "l"(&gmem_src), "n"(int(sizeof(S))));
#else
    (void)gmem_src, (void)smem_dst;
    detail::arch_unavailable("cp.async (SM80_CP_ASYNC_CACHEALWAYS, needs sm_80)");
#endif
  }
};

template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEGLOBAL {
  static_assert(sizeof(S) == 16 && sizeof(D) == 16, "cp.async.cg copies exactly 16 bytes; use a 128-bit S and D");
  using SRegisters = S[1];
  using DRegisters = D[1];

  TESSEL_HOST_DEVICE static void copy(S const& gmem_src, D& smem_dst) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(detail::smem_address(&smem_dst)),
                 "l"(&gmem_src), "n"(int(sizeof(S))));
#else
    (void)gmem_src, (void)smem_dst;
    detail::arch_unavailable("cp.async (SM80_CP_ASYNC_CACHEGLOBAL, needs sm_80)");
#endif
  }
};

template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEALWAYS_ZFILL {
  static_assert(detail::cp_async_size_ok<S, D>, "cp.async.ca copies 4, 8 or 16 bytes; S and D must have that size");
  using SRegisters = S[1];
  using DRegisters = D[1];

  TESSEL_HOST_DEVICE static void copy(S const& gmem_src, D& smem_dst, bool pred) {
#if defined(TESSEL_ARCH_SM80)
    int const src_size = pred ? int(sizeof(S)) : 0;
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(detail::smem_address(&smem_dst)),
                 "l"(&gmem_src), "n"(int(sizeof(S))), "r"(src_size));
#else
    (void)gmem_src, (void)smem_dst, (void)pred;
    detail::arch_unavailable("cp.async (SM80_CP_ASYNC_CACHEALWAYS_ZFILL, needs sm_80)");
#endif
  }
};

template <class S, class D = S>
struct SM80_CP_ASYNC_CACHEGLOBAL_ZFILL {
  static_assert(sizeof(S) == 16 && sizeof(D) == 16, "cp.async.cg copies exactly 16 bytes; use a 128-bit S and D");
  using SRegisters = S[1];
  using DRegisters = D[1];

  TESSEL_HOST_DEVICE static void copy(S const& gmem_src, D& smem_dst, bool pred) {
#if defined(TESSEL_ARCH_SM80)
    int const src_size = pred ? int(sizeof(S)) : 0;
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(detail::smem_address(&smem_dst)),
                 "l"(&gmem_src), "n"(int(sizeof(S))), "r"(src_size));
#else
    (void)gmem_src, (void)smem_dst, (void)pred;
    detail::arch_unavailable("cp.async (SM80_CP_ASYNC_CACHEGLOBAL_ZFILL, needs sm_80)");
#endif
  }
};

// Close the current group of cp.async copies (a no-op where cp.async does not exist).
TESSEL_HOST_DEVICE inline void cp_async_fence() {
#if defined(TESSEL_ARCH_SM80)
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Arrive on the mbarrier at `bar` (shared memory) once every cp.async this thread issued so far has
// landed, without raising the barrier's expected count (.noinc: the barrier's initial count
// includes this arrival). cp.async.mbarrier.arrive.noinc.shared::cta.b64.
TESSEL_HOST_DEVICE inline void cp_async_mbarrier_arrive_noinc(std::uint64_t* bar) {
#if defined(TESSEL_ARCH_SM80)
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(detail::smem_address(bar)) : "memory");
#else
  (void)bar;
  detail::arch_unavailable("cp.async.mbarrier.arrive (needs sm_80)");
#endif
}

// Wait until at most N groups of this thread's cp.async copies are still in flight.
template <int N>
TESSEL_HOST_DEVICE inline void cp_async_wait() {
  static_assert(N >= 0, "cp_async_wait<N>: N counts groups still allowed in flight, N >= 0");
#if defined(TESSEL_ARCH_SM80)
  if constexpr (N == 0) {
    asm volatile("cp.async.wait_all;\n" ::);
  } else {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
  }
#endif
}

}  // namespace tessel
