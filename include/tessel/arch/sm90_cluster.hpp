// tessel/arch/sm90_cluster.hpp -- thread-block clusters and warpgroup register reallocation.
//
//   cluster_cta_rank      %cluster_ctarank: this CTA's rank in its cluster
//   cluster_arrive        barrier.cluster.arrive.release.aligned (every thread of the CTA)
//   cluster_wait          barrier.cluster.wait.acquire.aligned
//   cluster_sync          arrive then wait: every thread of every CTA of the cluster meets
//   named_barrier_sync(id, n)  bar.sync id, n: the n threads (whole warps, reconverged first) that
//                             name barrier id meet, all at this one instruction
//   named_barrier_meet(id, n)  barrier.sync id, n (not .aligned): the same, reached through
//                             different instructions (two roles meeting)
//   named_barrier_arrive(id, n) barrier.arrive id, n (not .aligned): count this thread towards
//                             barrier id without waiting (one role's signal to threads of another
//                             that wait there with named_barrier_meet); its memory accesses before
//                             are visible to them after their wait
//   warpgroup_index()         threadIdx.x / 128, read from lane 0 so the compiler knows the warp
//                             agrees on it: what is derived from it (a warpgroup's rows, stage
//                             indices, descriptors) stays in uniform registers -- computed per
//                             thread, ptxas moved such values through vector registers
//                             (sm_90a attention forward at D 128: 8% slower)
//   warp_uniform(v)           v read from lane 0, for the same reason: a value each lane computed
//                             alike through a division by a run-time divisor (vector registers)
//   warpgroup_reg_alloc<N>    setmaxnreg.inc.sync.aligned.u32 N (a warpgroup raises its cap)
//   warpgroup_reg_dealloc<N>  setmaxnreg.dec.sync.aligned.u32 N (a warpgroup gives registers back)
//   grid_dependency_wait      griddepcontrol.wait: with programmatic dependent launch, waits
//                             until the grids this one depends on have completed and their
//                             writes are visible (a no-op in a grid launched without it)
//   grid_dependents_launch    griddepcontrol.launch_dependents: this CTA lets a dependent grid
//                             launched with programmatic serialization start (once every CTA of
//                             this grid has said so or exited); both are no-ops before sm_90
// setmaxnreg acts only in a kernel whose register count is capped at entry
// (__launch_bounds__(threads, 1)); N is a multiple of 8 in [24, 256], and the warpgroups'
// caps together must fit the SM's register file.
#pragma once

// A TU compiled once for every architecture (tessel_single_ptx, cmake/TesselArch.cmake) sees the
// lowest architecture's __CUDA_ARCH__ on Hopper too, where griddepcontrol.wait would silently vanish.
#if defined(TESSEL_SINGLE_PTX)
#error "sm90_cluster.hpp has sm_90 paths: compile this TU once per architecture (the per-architecture lists in src/ and tests/CMakeLists.txt)"
#endif

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

TESSEL_DEVICE inline void grid_dependency_wait() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

TESSEL_DEVICE inline void grid_dependents_launch() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

TESSEL_DEVICE inline std::uint32_t cluster_cta_rank() {
#if defined(TESSEL_ARCH_SM90)
  std::uint32_t r = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

TESSEL_DEVICE inline void cluster_arrive() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#else
  detail::arch_unavailable("barrier.cluster.arrive (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void cluster_wait() {
#if defined(TESSEL_ARCH_SM90)
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#else
  detail::arch_unavailable("barrier.cluster.wait (needs sm_90)");
#endif
}

TESSEL_DEVICE inline void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// Barrier 0 is __syncthreads'; kernels number their named barriers from 1.
TESSEL_DEVICE inline void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH__)
  // bar.sync is barrier.sync.aligned: every participating thread executes this same instruction,
  // a warp's threads together; __syncwarp() reconverges a warp that a one-lane branch (a stage
  // release, a TMA store wait) split just before.
  __syncwarp();
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

TESSEL_DEVICE inline int warpgroup_index() {
#if defined(__CUDA_ARCH__)
  return __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
#else
  return 0;
#endif
}

// v as lane 0 of the warp holds it: a value every lane computed alike, but through operations the
// compiler does not prove warp-uniform (a division by a run-time divisor, done in vector
// registers), so that what is derived from it stays in uniform registers. The whole warp calls it.
TESSEL_DEVICE inline int warp_uniform(int v) {
#if defined(__CUDA_ARCH__)
  return __shfl_sync(0xffffffffu, v, 0);
#else
  return v;
#endif
}

// Not .aligned: the arriving and the waiting threads execute different instructions (see
// named_barrier_meet).
TESSEL_DEVICE inline void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("barrier.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

// barrier.sync without .aligned: the participating threads may reach the barrier through
// different instructions (a producer and a consumer role meeting at one named barrier), which
// the .aligned form leaves undefined (compute-sanitizer synccheck: "divergent thread(s) in block").
TESSEL_DEVICE inline void named_barrier_meet(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  (void)id, (void)threads;
#endif
}

template <int Registers>
TESSEL_DEVICE void warpgroup_reg_alloc() {
  static_assert(Registers % 8 == 0 && Registers >= 24 && Registers <= 256,
                "setmaxnreg takes a multiple of 8 in [24, 256] registers per thread");
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

template <int Registers>
TESSEL_DEVICE void warpgroup_reg_dealloc() {
  static_assert(Registers % 8 == 0 && Registers >= 24 && Registers <= 256,
                "setmaxnreg takes a multiple of 8 in [24, 256] registers per thread");
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

}  // namespace tessel
