// tessel/arch/arch_config.hpp -- which PTX the current compilation pass may emit.
//
// The arch/ structs are declared for every compilation (host, any device arch) so that atom
// traits and tiled layouts can be used on the host. Their PTX is emitted only in the device pass
// for an architecture that has the instruction; anywhere else calling them stops the program with
// a message naming the instruction and the architecture it needs (a device trap, or abort on the
// host) -- never a silent no-op.
//   TESSEL_ARCH_SM75: ldmatrix          TESSEL_ARCH_SM80: cp.async, mma.sync m16n8k{8,16,32}
//   TESSEL_ARCH_SM90: stmatrix, mbarrier tx-counts, TMA (cp.async.bulk.tensor), clusters
//   TESSEL_ARCH_SM90A: wgmma, setmaxnreg (the arch-specific sm_90a target only)
#pragma once

#include <tessel/config.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 750)
#define TESSEL_ARCH_SM75 1
#endif
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define TESSEL_ARCH_SM80 1
#endif
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define TESSEL_ARCH_SM90 1
#endif
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TESSEL_ARCH_SM90A 1
#endif

namespace tessel::detail {

// Called where an instruction is not available in this compilation pass.
[[noreturn]] TESSEL_HOST_DEVICE inline void arch_unavailable(char const* what) {
#if defined(__CUDA_ARCH__)
  printf("tessel: %s is not available on this GPU architecture (sm_%d)\n", what, __CUDA_ARCH__ / 10);
  asm volatile("trap;");
  while (true) {
  }
#else
  std::fprintf(stderr, "tessel: %s runs only in device code compiled for a GPU that has it\n", what);
  std::abort();
#endif
}

// A generic pointer to shared memory as the 32-bit shared-window address PTX expects.
TESSEL_DEVICE inline std::uint32_t smem_address(void const* p) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  (void)p;
  return 0;
#endif
}

}  // namespace tessel::detail
