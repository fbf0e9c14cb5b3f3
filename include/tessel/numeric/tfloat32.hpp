// tessel/numeric/tfloat32.hpp -- tfloat32_t: a float carrying only TF32's 10 mantissa bits.
//
// Stored as a 32-bit float whose low 13 mantissa bits are zero; converting from float rounds to
// nearest even. It is the value type of the tf32 tensor-core atoms, whose registers hold 32 bits.
//   float(tfloat32_t(1.0f + 0x1p-11f)) == 1.0f + 0x1p-10f
#pragma once

#include <tessel/config.hpp>
#include <tessel/numeric/float_bits.hpp>

#include <cstdint>
#include <ostream>

namespace tessel {

struct alignas(4) tfloat32_t {
  float storage;

  tfloat32_t() = default;
  TESSEL_HOST_DEVICE constexpr explicit tfloat32_t(float f) : storage(detail::round_to_tf32(f)) {}
  TESSEL_HOST_DEVICE constexpr explicit tfloat32_t(double d) : tfloat32_t(float(d)) {}
  TESSEL_HOST_DEVICE constexpr explicit tfloat32_t(int i) : tfloat32_t(float(i)) {}
  TESSEL_HOST_DEVICE constexpr explicit operator float() const { return storage; }
  TESSEL_HOST_DEVICE constexpr explicit operator double() const { return storage; }
  TESSEL_HOST_DEVICE constexpr std::uint32_t raw() const { return detail::float_bits(storage); }
};

// clang-format off
TESSEL_HOST_DEVICE constexpr tfloat32_t operator+(tfloat32_t a, tfloat32_t b) { return tfloat32_t(float(a) + float(b)); }
TESSEL_HOST_DEVICE constexpr tfloat32_t operator-(tfloat32_t a, tfloat32_t b) { return tfloat32_t(float(a) - float(b)); }
TESSEL_HOST_DEVICE constexpr tfloat32_t operator*(tfloat32_t a, tfloat32_t b) { return tfloat32_t(float(a) * float(b)); }
TESSEL_HOST_DEVICE constexpr bool operator==(tfloat32_t a, tfloat32_t b) { return float(a) == float(b); }
TESSEL_HOST_DEVICE constexpr bool operator!=(tfloat32_t a, tfloat32_t b) { return float(a) != float(b); }
// clang-format on

inline std::ostream& operator<<(std::ostream& os, tfloat32_t t) { return os << float(t); }

}  // namespace tessel
