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
// An MN-major operand (imm-trans-a / imm-trans-b = 1; 16-bit types only) is described by
// wgmma_desc_mn_major_sw128 below.
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
// for the first k-slice; +32 bytes per further 32-byte k-slice). Encoded by hand from the PTX
// ISA: the GEMM kernels take theirs from the atom/ vocabulary (descriptor fragments of
// Sm90OperandTile's stage layouts), and the tests hold the vocabulary to these bits
// (sm90_gmma_descriptor_test, sm90_atoms_test).
TESSEL_DEVICE inline std::uint64_t wgmma_desc_k_major_sw128(void const* smem) {
  std::uint64_t const addr = detail::smem_address(smem);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

// An MN-major, 128-byte-swizzled operand tile whose first chunk starts at `smem` (1024-byte aligned).
//
// What the PTX ISA says (section 9.7.15.5.1.2 "Shared Memory Matrix Layout" and its
// subsections "Leading Dimension Byte Offset", "Stride Dimension Byte Offset" and "Canonical
// Layouts"; docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-canonical-layouts,
// read in the PTX 9.1 text): in units of 128-bit groups (T = 8 elements of 16 bits) the
// 128-byte-swizzle MN-major atom is 8 x 8, i.e. 64 MN-elements (128 contiguous bytes) by 8
// K-rows, 1024 bytes; the canonical layout is, in elements, ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO))
// under the 128-byte swizzle -- MN index i + 8j + 64c sits at i + 8j + c * LBO, K index r + 8q
// at 64r + q * SBO. For MN-major swizzled layouts the two offsets swap roles against K-major:
//   leading-dimension byte offset  "from the first (swizzle-byte-size/16) rows to the next" --
//                                  from one 64-element MN chunk to the next (for K-major it is
//                                  unused);
//   stride-dimension byte offset   "from the first 8 columns to the next 8 columns" -- from one
//                                  group of 8 K-rows to the next (1024 bytes when the rows are
//                                  packed at 128 bytes; for K-major: the next 8 MN-rows).
// So a TMA box of 64 MN-elements x TileK K-rows written with CU_TENSOR_MAP_SWIZZLE_128B (K-row r
// at 128r bytes, its 16-byte chunks permuted by r % 8) is exactly that layout with SBO = 1024,
// and boxes for consecutive 64-element MN chunks placed `chunk_bytes` apart give LBO =
// chunk_bytes: an m64 A reads one chunk, an n256 B spans four. The k-th 16-deep slice of K is
// 16 K-rows = two atoms = 2048 bytes further: the start address advances by 2048 (+128 in the
// descriptor's 16-byte units), which keeps it 1024-byte aligned, so the base offset stays 0.
TESSEL_DEVICE inline std::uint64_t wgmma_desc_mn_major_sw128(void const* smem, std::uint32_t chunk_bytes) {
  std::uint64_t const addr = detail::smem_address(smem);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t((chunk_bytes & 0x3FFFF) >> 4) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}

// `desc` with its start address moved `units` 16-byte units on: a 32-bit add of the low word (a
// shared-memory start address stays below 2^18 bytes, so nothing carries out of its field).
TESSEL_HOST_DEVICE constexpr std::uint64_t wgmma_desc_advance(std::uint64_t desc, std::uint32_t units) {
  return (desc & 0xFFFFFFFF00000000ull) | std::uint32_t(std::uint32_t(desc) + units);
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
