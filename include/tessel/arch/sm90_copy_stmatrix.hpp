// tessel/arch/sm90_copy_stmatrix.hpp -- stmatrix: a warp stores 8x8 b16 matrices to shared memory.
//
// The mirror of ldmatrix (sm75_copy_ldmatrix.hpp): thread t holds, of matrix j, row t/4, columns
// 2*(t%4) and 2*(t%4)+1 in its register j, and gives the address of one 16-byte row (threads
// 0-7 rows of matrix 0, 8-15 of matrix 1, ...).
//   SM90_U32x4_STSM_N  stmatrix.x4 (four matrices, all 32 addresses used)
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstdint>

namespace tessel {

struct SM90_U32x4_STSM_N {
  using SRegisters = std::uint32_t[4];
  using DRegisters = uint128_t[1];
  TESSEL_HOST_DEVICE static void copy(std::uint32_t const& s0, std::uint32_t const& s1, std::uint32_t const& s2,
                                      std::uint32_t const& s3, uint128_t& smem_dst) {
#if defined(TESSEL_ARCH_SM90)
    asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                     detail::smem_address(&smem_dst)),
                 "r"(s0), "r"(s1), "r"(s2), "r"(s3));
#else
    (void)s0, (void)s1, (void)s2, (void)s3, (void)smem_dst;
    detail::arch_unavailable("stmatrix (SM90_U32x4_STSM_N, needs sm_90)");
#endif
  }
};

}  // namespace tessel
