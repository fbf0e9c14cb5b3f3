// tessel/numeric/float_bits.hpp -- float <-> bits, and the round-to-nearest-even narrowings that
// half_t, bfloat16_t and tfloat32_t are built from. Pure integer arithmetic: the same results on
// the host and on the device.
//
//   float_to_half_bits(1.0f) == 0x3c00     float_to_bf16_bits(1.0f) == 0x3f80
//   round_to_tf32(1.0f + 0x1p-11f) == 1.0f (ties to even)
#pragma once

#include <tessel/config.hpp>

#include <bit>
#include <cstdint>

namespace tessel::detail {

TESSEL_HOST_DEVICE constexpr std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
TESSEL_HOST_DEVICE constexpr float bits_float(std::uint32_t u) { return std::bit_cast<float>(u); }

// IEEE binary16, round to nearest even; NaN stays NaN, overflow goes to infinity.
TESSEL_HOST_DEVICE constexpr std::uint16_t float_to_half_bits(float f) {
  std::uint32_t const x = float_bits(f);
  std::uint32_t const sign = (x >> 16) & 0x8000u;
  std::uint32_t const exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xffu) return std::uint16_t(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  int const e = int(exp) - 127 + 15;
  if (e >= 31) return std::uint16_t(sign | 0x7c00u);
  if (e <= 0) {  // a half subnormal (or zero)
    if (e < -10) return std::uint16_t(sign);
    mant |= 0x800000u;
    int const shift = 14 - e;
    std::uint32_t h = mant >> shift;
    std::uint32_t const rem = mant & ((1u << shift) - 1u);
    std::uint32_t const tie = 1u << (shift - 1);
    if (rem > tie || (rem == tie && (h & 1u))) ++h;
    return std::uint16_t(sign | h);
  }
  std::uint32_t h = (std::uint32_t(e) << 10) | (mant >> 13);
  std::uint32_t const rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry rolls into the exponent
  return std::uint16_t(sign | h);
}

TESSEL_HOST_DEVICE constexpr float half_bits_to_float(std::uint16_t h) {
  std::uint32_t const sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t const exp = (h >> 10) & 0x1fu;
  std::uint32_t const mant = h & 0x3ffu;
  if (exp == 0) {
    float const v = float(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

// bfloat16 (the top half of a float), round to nearest even; NaN stays a quiet NaN.
TESSEL_HOST_DEVICE constexpr std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t const x = float_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return std::uint16_t((x >> 16) | 0x40u);
  return std::uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

TESSEL_HOST_DEVICE constexpr float bf16_bits_to_float(std::uint16_t b) { return bits_float(std::uint32_t(b) << 16); }

// TF32: a float with the low 13 mantissa bits cleared, rounded to nearest even.
TESSEL_HOST_DEVICE constexpr float round_to_tf32(float f) {
  std::uint32_t const x = float_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u) return f;  // inf and NaN pass through
  return bits_float((x + 0xfffu + ((x >> 13) & 1u)) & 0xffffe000u);
}

}  // namespace tessel::detail
