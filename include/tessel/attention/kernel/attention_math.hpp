// tessel/attention/kernel/attention_math.hpp -- the per-thread arithmetic the attention kernels
// (sm_80 and sm_90a) share: fast exp2 and tanh, rounding two floats into one 16-bit pair, and the
// reductions over the four threads of a quad that hold one row of an MMA accumulator, and the byte
// offsets of the 128-byte swizzle that the sm_90a kernels stage tiles in.
#pragma once

#include <tessel/config.hpp>
#include <tessel/epilogue/activation.hpp>
#include <tessel/layout/swizzle.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel {

namespace detail {

// The hardware's 2^x and tanh approximations (ex2.approx.ftz, tanh.approx), which the GEMM and
// convolution epilogues use too.
TESSEL_DEVICE inline float attention_exp2(float x) { return tessel::detail::exp2_fast(x); }
TESSEL_DEVICE inline float attention_tanh(float x) { return tessel::detail::tanh_fast(x); }

// The softmax input z of a score t = <q, k> -- softcap * tanh(t * softcap_scale) under a softcap
// (softcap > 0), -t for a negative scale (negate), t otherwise -- and dz/dt (1 - tanh^2 under the
// softcap, else 1), which every gradient through the score carries.
TESSEL_DEVICE inline float attention_score_z(float t, float softcap, float softcap_scale, bool negate, float& dzdt) {
  dzdt = 1.0f;
  if (softcap > 0.0f) {
    float const th = attention_tanh(t * softcap_scale);
    dzdt = 1.0f - th * th;
    return softcap * th;
  }
  return negate ? -t : t;
}

// Two floats rounded to nearest into one register of two 16-bit elements (lo in the low half).
template <class Element>
TESSEL_DEVICE inline std::uint32_t attention_pack2(float lo, float hi) {
  std::uint32_t r;
  if constexpr (std::is_same_v<Element, bfloat16_t>) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  }
  return r;
}

// x, as a value the compiler cannot see through (it is not hoisted out of the loop that asks).
TESSEL_DEVICE inline int opaque(int x) {
  asm volatile("" : "+r"(x));
  return x;
}

// Registers the compiler may not move across this point (a wgmma operand or accumulator in 32-bit
// words: kept in place while an asynchronous wgmma reads it).
template <int N>
TESSEL_DEVICE void wgmma_fence_operand(std::uint32_t (&r)[N]) {
  TESSEL_UNROLL
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Byte offset of element (row, col), of `bytes` bytes, in a tile of 128-byte rows in the 128-byte
// swizzle (the tile 1024-byte aligned): the 16-byte chunk index XOR row % 8. This is
// Swizzle<3,4,3> of row * 128 + col * bytes, written per field: the whole-offset form compiles to
// about 100 more PTX instructions in the sm_90a backward (the address math of its dS^T and dQ stores).
TESSEL_HOST_DEVICE constexpr int sw128_offset(int row, int col, int bytes = 2) {
  return row * 128 + ((((col * bytes) >> 4) ^ (row & 7)) << 4) + ((col * bytes) & 15);
}
static_assert(sw128_offset(9, 37) == Swizzle<3, 4, 3>::apply(9 * 128 + 37 * 2) &&
              sw128_offset(14, 29, 4) == Swizzle<3, 4, 3>::apply(14 * 128 + 29 * 4));

TESSEL_DEVICE inline float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
TESSEL_DEVICE inline float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

}  // namespace detail

}  // namespace tessel::kernel
