// tessel/gemm/kernel/sm90_gemm_prologue.hpp -- how every sm_90a GEMM CTA starts, whatever its
// schedule (cooperative: kernel/sm90_gemm_warpspecialized.hpp, ping-pong: kernel/sm90_gemm_pingpong.hpp).
//
//   1. Its SharedStorage sits at the first 1024-byte aligned address of the dynamic shared memory
//      (of the shared-window address: the 128-byte swizzle pattern repeats every 1024 bytes).
//   2. One thread initialises the pipeline's barriers (`consumer_arrivals` free a stage) and the
//      barriers C's TMA loads complete on (a SharedStorage with c_full), and prefetches the
//      operands' tensor maps.
//   3. The CTA meets -- the whole cluster, when there is one: a peer's multicast must not reach
//      barriers that are not initialised yet.
//   4. It waits for the kernel ahead of it in the stream (programmatic dependent launch: the GEMM
//      may start while the operand staging finishes, and touches no global memory before it has).
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>

#include <cstdint>

namespace tessel::kernel::detail {

// `thread`: the thread's index in the CTA (threadIdx.x; only a kernel reads it).
template <class SharedStorage, int ClusterSize>
TESSEL_DEVICE SharedStorage& sm90_cta_prologue(char* smem_raw, Sm90GemmParams const& p, int thread, int consumer_arrivals) {
  std::uint32_t const misalign = tessel::detail::smem_address(smem_raw) & 1023u;
  auto& s = *reinterpret_cast<SharedStorage*>(smem_raw + ((1024u - misalign) & 1023u));
  if (thread == 0) {
    if constexpr (requires(SharedStorage& t) { t.c_full; }) {
      for (std::uint64_t& c_full : s.c_full) mbarrier_init(&c_full, 1);  // (pipeline.init fences them too)
    }
    s.pipeline.init(consumer_arrivals);
    tma_prefetch_descriptor(&p.tma_a);
    tma_prefetch_descriptor(&p.tma_b);
  }
  if constexpr (ClusterSize > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  grid_dependency_wait();
  return s;
}

}  // namespace tessel::kernel::detail
