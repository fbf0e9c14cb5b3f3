// tessel/arch/sm90_mma_wgmma.hpp -- warpgroup MMA (wgmma): shared-memory matrix descriptors,
// the async fences, and where each accumulator register lives.
//
// wgmma reads A and B from shared memory through 64-bit descriptors:
//   bits  0-13  start address >> 4            bits 16-29  leading-dimension byte offset >> 4
//   bits 32-45  stride-dimension byte offset >> 4
//   bits 49-51  base offset (0 when the swizzle pattern starts 1024-byte aligned)
//   bits 62-63  swizzle: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
// For a K-major operand in the 128-byte swizzle (what a TMA box of 128-byte rows with
// CU_TENSOR_MAP_SWIZZLE_128B writes): rows of 128 bytes, 8 rows (1024 bytes) per swizzle atom,
// so the stride-dimension offset is 1024 bytes; the leading-dimension offset is unused (one
// instruction's K, 32 bytes, stays inside a row). The k-th 32-byte slice of the rows is the same
// descriptor with the start address advanced by 32 * k bytes: the hardware applies the swizzle
// to the address it forms.
//
// The instructions themselves are in sm90_mma_wgmma_ops.hpp (generated).
//   wgmma_fence            wgmma.fence.sync.aligned: registers and shared memory written before
//                          are visible to the following wgmma
//   wgmma_commit_group     wgmma.commit_group.sync.aligned
//   wgmma_wait_group<N>    wgmma.wait_group.sync.aligned N: at most N groups still in flight
//   wgmma_fence_operand    keeps the compiler from moving accumulator accesses across the above
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// A K-major, 128-byte-swizzled operand tile whose first row starts at `smem` (1024-byte aligned
// for the first k-slice; +32 bytes per further 32-byte k-slice).
TESSEL_DEVICE inline std::uint64_t wgmma_desc_k_major_sw128(void const* smem) {
  std::uint64_t const addr = detail::smem_address(smem);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

TESSEL_DEVICE inline void wgmma_fence() {
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

TESSEL_DEVICE inline void wgmma_commit_group() {
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int Pending>
TESSEL_DEVICE void wgmma_wait_group() {
#if defined(TESSEL_ARCH_SM90A)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

template <int N>
TESSEL_DEVICE void wgmma_fence_operand(float (&d)[N]) {
  TESSEL_UNROLL
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Accumulator register `reg` of thread `thread` (0..127 in the warpgroup) of an m64nN wgmma
// holds element (row, col) of the 64 x N tile: warp w owns rows 16w..16w+15; within it lane l
// owns rows l/4 and l/4 + 8, and the column pair 2*(l%4) of every 8-column block.
struct WgmmaCoord {
  int row, col;
};
TESSEL_HOST_DEVICE constexpr WgmmaCoord wgmma_accumulator_coord(int thread, int reg) {
  int const warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((reg / 2) % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

}  // namespace tessel
