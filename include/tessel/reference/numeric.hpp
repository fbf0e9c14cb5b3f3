// tessel/reference/numeric.hpp -- fp16 and bf16 bit patterns <-> float on the host, without CUDA.
//
// Round-to-nearest-even, with infinities, NaN and subnormals handled, so host references and
// test data generators agree bit for bit with the device's __float2half_rn / __float2bfloat16_rn.
#pragma once

#include <tessel/config.hpp>

#include <cstdint>
#include <cstring>

namespace tessel::reference {

TESSEL_HOST_DEVICE inline float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
TESSEL_HOST_DEVICE inline std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// bf16: the top 16 bits of an fp32.
TESSEL_HOST_DEVICE inline float bf16_to_float(std::uint16_t h) { return bits_to_float(std::uint32_t(h) << 16); }
TESSEL_HOST_DEVICE inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                               // round to nearest even
  return std::uint16_t(u >> 16);
}

// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
TESSEL_HOST_DEVICE inline float f16_to_float(std::uint16_t h) {
  std::uint32_t const sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    // subnormal: value = man * 2^-24
    float const v = float(man) * (1.0f / 16777216.0f);
    return (sign ? -v : v);
  }
  return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}
TESSEL_HOST_DEVICE inline std::uint16_t float_to_f16(float f) {
  std::uint32_t const u = float_to_bits(f);
  std::uint16_t const sign = std::uint16_t((u >> 16) & 0x8000u);
  std::uint32_t const abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return std::uint16_t(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {                                       // below 2^-14: subnormal or zero
    if (abs < 0x33000000u) return sign;                          // below 2^-25: rounds to 0
    std::uint32_t const exp = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
    std::uint32_t const shift = 126u - exp;                      // 14 + (127 - exp) - 1 ... aligns to 2^-24 units
    std::uint32_t const q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1);
    std::uint32_t const r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return std::uint16_t(sign | r);
  }
  std::uint32_t const r = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even at bit 13
  return std::uint16_t(sign | ((r - 0x38000000u) >> 13));
}

}  // namespace tessel::reference
