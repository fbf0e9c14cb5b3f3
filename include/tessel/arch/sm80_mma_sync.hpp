// tessel/arch/sm80_mma_sync.hpp -- mma.sync on sm_80 tensor cores: one warp computes D = A*B + C.
//
// A is MxK row-major ("T"), B is KxN column-major (NxK row-major, "N"), hence _TN. Each thread
// passes its fragment registers in the order the PTX ISA lists them (a0, a1, ... packed two b16
// or four b8 per 32-bit register, the lower-numbered element in the low bits).
//   SM80_16x8x8_F32F16F16F32_TN     mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32
//   SM80_16x8x8_F32BF16BF16F32_TN   mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32
//   SM80_16x8x16_F32F16F16F32_TN    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//   SM80_16x8x16_F32BF16BF16F32_TN  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//   SM80_16x8x8_F32TF32TF32F32_TN   mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//   SM80_16x8x32_S32S8S8S32_TN      mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

struct SM80_16x8x8_F32F16F16F32_TN {
  using DRegisters = float[4];
  using ARegisters = std::uint32_t[2];
  using BRegisters = std::uint32_t[1];
  using CRegisters = float[4];
  TESSEL_HOST_DEVICE static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& b0, float const& c0, float const& c1,
                                     float const& c2, float const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(b0), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)b0, (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x8_F32F16F16F32_TN, needs sm_80)");
#endif
  }
};

struct SM80_16x8x8_F32BF16BF16F32_TN {
  using DRegisters = float[4];
  using ARegisters = std::uint32_t[2];
  using BRegisters = std::uint32_t[1];
  using CRegisters = float[4];
  TESSEL_HOST_DEVICE static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& b0, float const& c0, float const& c1,
                                     float const& c2, float const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(b0), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)b0, (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x8_F32BF16BF16F32_TN, needs sm_80)");
#endif
  }
};

struct SM80_16x8x16_F32F16F16F32_TN {
  using DRegisters = float[4];
  using ARegisters = std::uint32_t[4];
  using BRegisters = std::uint32_t[2];
  using CRegisters = float[4];
  TESSEL_HOST_DEVICE static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& a2, std::uint32_t const& a3,
                                     std::uint32_t const& b0, std::uint32_t const& b1, float const& c0, float const& c1,
                                     float const& c2, float const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x16_F32F16F16F32_TN, needs sm_80)");
#endif
  }
};

struct SM80_16x8x16_F32BF16BF16F32_TN {
  using DRegisters = float[4];
  using ARegisters = std::uint32_t[4];
  using BRegisters = std::uint32_t[2];
  using CRegisters = float[4];
  TESSEL_HOST_DEVICE static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& a2, std::uint32_t const& a3,
                                     std::uint32_t const& b0, std::uint32_t const& b1, float const& c0, float const& c1,
                                     float const& c2, float const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x16_F32BF16BF16F32_TN, needs sm_80)");
#endif
  }
};

struct SM80_16x8x8_F32TF32TF32F32_TN {
  using DRegisters = float[4];
  using ARegisters = std::uint32_t[4];
  using BRegisters = std::uint32_t[2];
  using CRegisters = float[4];
  TESSEL_HOST_DEVICE static void fma(float& d0, float& d1, float& d2, float& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& a2, std::uint32_t const& a3,
                                     std::uint32_t const& b0, std::uint32_t const& b1, float const& c0, float const& c1,
                                     float const& c2, float const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x8_F32TF32TF32F32_TN, needs sm_80)");
#endif
  }
};

struct SM80_16x8x32_S32S8S8S32_TN {
  using DRegisters = std::int32_t[4];
  using ARegisters = std::uint32_t[4];
  using BRegisters = std::uint32_t[2];
  using CRegisters = std::int32_t[4];
  TESSEL_HOST_DEVICE static void fma(std::int32_t& d0, std::int32_t& d1, std::int32_t& d2, std::int32_t& d3, std::uint32_t const& a0,
                                     std::uint32_t const& a1, std::uint32_t const& a2, std::uint32_t const& a3,
                                     std::uint32_t const& b0, std::uint32_t const& b1, std::int32_t const& c0, std::int32_t const& c1,
                                     std::int32_t const& c2, std::int32_t const& c3) {
#if defined(TESSEL_ARCH_SM80)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1), "r"(c2), "r"(c3));
#else
    (void)d0, (void)d1, (void)d2, (void)d3, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
    (void)c0, (void)c1, (void)c2, (void)c3;
    detail::arch_unavailable("mma.sync (SM80_16x8x32_S32S8S8S32_TN, needs sm_80)");
#endif
  }
};

}  // namespace tessel
