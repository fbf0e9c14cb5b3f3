// tessel/arch/sm75_copy_ldmatrix.hpp -- ldmatrix: a warp loads 8x8 b16 matrices from shared memory.
//
// Each of the 32 threads gives the address of one 16-byte row (threads 0-7 rows of matrix 0,
// 8-15 of matrix 1, ...; the x1/x2 forms read only the first 8/16 addresses). Thread t then
// holds, of matrix j, row t/4, columns 2*(t%4) and 2*(t%4)+1 in its register j (non-transposed,
// _N), or column t/4, rows 2*(t%4) and 2*(t%4)+1 (transposed, _T).
//   SM75_U32x1_LDSM_N  ldmatrix.x1        SM75_U16x2_LDSM_T  ldmatrix.x1.trans
//   SM75_U32x2_LDSM_N  ldmatrix.x2        SM75_U16x4_LDSM_T  ldmatrix.x2.trans
//   SM75_U32x4_LDSM_N  ldmatrix.x4        SM75_U16x8_LDSM_T  ldmatrix.x4.trans
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstdint>

namespace tessel {

struct SM75_U32x1_LDSM_N {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[1];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];\n" : "=r"(d0) : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0;
    detail::arch_unavailable("ldmatrix (SM75_U32x1_LDSM_N, needs sm_75)");
#endif
  }
};

struct SM75_U32x2_LDSM_N {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[2];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0, std::uint32_t& d1) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0, (void)d1;
    detail::arch_unavailable("ldmatrix (SM75_U32x2_LDSM_N, needs sm_75)");
#endif
  }
};

struct SM75_U32x4_LDSM_N {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[4];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0, std::uint32_t& d1,
                                      std::uint32_t& d2, std::uint32_t& d3) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0, (void)d1, (void)d2, (void)d3;
    detail::arch_unavailable("ldmatrix (SM75_U32x4_LDSM_N, needs sm_75)");
#endif
  }
};

struct SM75_U16x2_LDSM_T {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[1];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x1.trans.m8n8.shared.b16 {%0}, [%1];\n"
                 : "=r"(d0)
                 : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0;
    detail::arch_unavailable("ldmatrix (SM75_U16x2_LDSM_T, needs sm_75)");
#endif
  }
};

struct SM75_U16x4_LDSM_T {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[2];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0, std::uint32_t& d1) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x2.trans.m8n8.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0, (void)d1;
    detail::arch_unavailable("ldmatrix (SM75_U16x4_LDSM_T, needs sm_75)");
#endif
  }
};

struct SM75_U16x8_LDSM_T {
  using SRegisters = uint128_t[1];
  using DRegisters = std::uint32_t[4];
  TESSEL_HOST_DEVICE static void copy(uint128_t const& smem_src, std::uint32_t& d0, std::uint32_t& d1,
                                      std::uint32_t& d2, std::uint32_t& d3) {
#if defined(TESSEL_ARCH_SM75)
    asm volatile("ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(detail::smem_address(&smem_src)));
#else
    (void)smem_src, (void)d0, (void)d1, (void)d2, (void)d3;
    detail::arch_unavailable("ldmatrix (SM75_U16x8_LDSM_T, needs sm_75)");
#endif
  }
};

}  // namespace tessel
