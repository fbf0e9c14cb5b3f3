// tessel/arch/sm90_mbarrier.hpp -- mbarrier: the shared-memory barrier TMA and pipelines complete on.
//
// An mbarrier is 8 bytes of shared memory holding a phase bit, a pending-arrival count and (on
// sm_90) a pending transaction byte count. A phase completes when every expected thread has
// arrived and every expected byte has landed; the phase bit then flips and the count resets.
// Waiters name the parity of the phase they wait for: a barrier starts in phase 0, so waiting on
// parity 0 blocks until the first phase completes, while waiting on parity 1 returns at once
// (the "phase before the first" counts as complete) -- which is how a producer sees empty
// buffers at the start of a pipeline.
//   mbarrier_init              mbarrier.init.shared::cta.b64
//   mbarrier_init_fence        fence.mbarrier_init.release.cluster (before other CTAs or the
//                              async proxy use a freshly initialised barrier)
//   mbarrier_arrive            mbarrier.arrive.shared::cta.b64
//   mbarrier_arrive_expect_tx  mbarrier.arrive.expect_tx.shared::cta.b64 (arrive, and expect bytes)
//   mbarrier_arrive_cluster    mapa + mbarrier.arrive.shared::cluster.b64 (the same barrier in
//                              CTA `cta_rank` of the cluster; the default CTA-scope release: a
//                              .release.cluster arrive costs a GPU-wide memory barrier per call,
//                              which halved the 2x1-cluster GEMM's speed)
//   mbarrier_try_wait          mbarrier.try_wait.parity.shared::cta.b64 (bounded wait, true once
//                              the phase of that parity completed)
//   mbarrier_wait              try_wait until it succeeds
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

TESSEL_DEVICE inline void mbarrier_init(std::uint64_t* bar, int arrivals) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(detail::smem_address(bar)), "r"(arrivals));
#else
  (void)bar, (void)arrivals;
  detail::arch_unavailable("mbarrier.init with transaction counts (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void mbarrier_init_fence() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#else
  detail::arch_unavailable("fence.mbarrier_init (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void mbarrier_arrive(std::uint64_t* bar) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(detail::smem_address(bar)) : "memory");
#else
  (void)bar;
  detail::arch_unavailable("mbarrier.arrive (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(detail::smem_address(bar)), "r"(bytes)
               : "memory");
#else
  (void)bar, (void)bytes;
  detail::arch_unavailable("mbarrier.arrive.expect_tx (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void mbarrier_arrive_cluster(std::uint64_t* bar, std::uint32_t cta_rank) {
#if defined(TESSEL_ARCH_SM90)
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(detail::smem_address(bar)),
      "r"(cta_rank)
      : "memory");
#else
  (void)bar, (void)cta_rank;
  detail::arch_unavailable("mbarrier.arrive on a cluster peer (needs sm_90)");
#endif
}

TESSEL_DEVICE inline bool mbarrier_try_wait(std::uint64_t* bar, std::uint32_t parity) {
#if defined(TESSEL_ARCH_SM90)
  std::uint32_t done = 0;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(detail::smem_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
#else
  (void)bar, (void)parity;
  detail::arch_unavailable("mbarrier.try_wait.parity (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

}  // namespace tessel
