// tessel/numeric/float_ops.hpp -- the arithmetic of a narrow float type, computed through float.
//
// A narrow float type T (half_t, bfloat16_t, float_e4m3_t, float_e5m2_t) derives from
// float_ops<T> to get + - * / (rounded back to T), compound assignment, comparisons, sign flip
// and stream output. T provides explicit T(float), explicit operator float(), a `storage`
// member and T::bitcast(storage).
#pragma once

#include <tessel/config.hpp>

#include <ostream>

namespace tessel::detail {

template <class T>
struct float_ops {
  // clang-format off
  friend TESSEL_HOST_DEVICE constexpr T operator+(T a, T b) { return T(float(a) + float(b)); }
  friend TESSEL_HOST_DEVICE constexpr T operator-(T a, T b) { return T(float(a) - float(b)); }
  friend TESSEL_HOST_DEVICE constexpr T operator*(T a, T b) { return T(float(a) * float(b)); }
  friend TESSEL_HOST_DEVICE constexpr T operator/(T a, T b) { return T(float(a) / float(b)); }
  friend TESSEL_HOST_DEVICE constexpr T& operator+=(T& a, T b) { return a = a + b; }
  friend TESSEL_HOST_DEVICE constexpr T& operator-=(T& a, T b) { return a = a - b; }
  friend TESSEL_HOST_DEVICE constexpr T& operator*=(T& a, T b) { return a = a * b; }
  friend TESSEL_HOST_DEVICE constexpr bool operator==(T a, T b) { return float(a) == float(b); }
  friend TESSEL_HOST_DEVICE constexpr bool operator!=(T a, T b) { return float(a) != float(b); }
  friend TESSEL_HOST_DEVICE constexpr bool operator<(T a, T b) { return float(a) < float(b); }
  friend TESSEL_HOST_DEVICE constexpr bool operator>(T a, T b) { return float(a) > float(b); }
  friend TESSEL_HOST_DEVICE constexpr bool operator<=(T a, T b) { return float(a) <= float(b); }
  friend TESSEL_HOST_DEVICE constexpr bool operator>=(T a, T b) { return float(a) >= float(b); }
  // clang-format on

  // Negation flips the sign bit (exact, NaN payloads included).
  friend TESSEL_HOST_DEVICE constexpr T operator-(T a) {
    using Bits = decltype(a.storage);
    return T::bitcast(Bits(a.storage ^ (Bits(1) << (8 * sizeof(Bits) - 1))));
  }

  friend std::ostream& operator<<(std::ostream& os, T x) { return os << float(x); }
};

}  // namespace tessel::detail
