// tessel/numeric/float8.hpp -- float_e4m3_t and float_e5m2_t: the OCP 8-bit floats, usable on
// the host and the device.
//
//   e4m3: 1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities; S.1111.111 is NaN, so
//         the largest finite value is 0x7e = 448 and the smallest subnormal 2^-9.
//   e5m2: 1 sign, 5 exponent (bias 15), 2 mantissa bits, IEEE-like: exponent 11111 with
//         mantissa 0 is +-inf, otherwise NaN. Largest finite 0x7b = 57344, smallest 2^-16.
//
// To float (and double): exact. From float: round to nearest, ties to even, with NVIDIA's
// `cvt.rn.satfinite` semantics (the only fp8 conversion PTX has, and what cuda_fp8.h's
// __NV_SATFINITE does on the host): a finite value beyond the largest finite one, and +-inf,
// become +-max finite (448 / 57344); NaN becomes the canonical NaN 0x7f; tiny values round to
// +-0 keeping their sign. Arithmetic goes through float and rounds back the same way.
//   float_e4m3_t(1.0f).raw() == 0x38     float(float_e4m3_t(500.0f)) == 448.0f
//   float_e5m2_t(1.0f).raw() == 0x3c     float(float_e5m2_t::bitcast(0x7c)) == +inf
// Plain C++ (integer arithmetic only): the same bits on the host and on the device.
#pragma once

#include <tessel/config.hpp>
#include <tessel/numeric/float_bits.hpp>
#include <tessel/numeric/float_ops.hpp>

#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_fp8.h>
#endif

namespace tessel {

namespace detail {

// An 8-bit float format: Exp exponent bits, Man mantissa bits, the exponent bias, and whether
// the top exponent holds inf/NaN (IEEE-like, e5m2) or only the all-ones code is NaN (e4m3).
template <int Exp, int Man, int Bias, bool Ieee>
struct Fp8Format {
  static constexpr int kExpBits = Exp, kManBits = Man, kBias = Bias;
  static constexpr bool kHasInf = Ieee;
  static constexpr std::uint8_t kMaxFinite =
      Ieee ? std::uint8_t((((1u << Exp) - 2u) << Man) | ((1u << Man) - 1u)) : std::uint8_t(0x7e);
  static constexpr std::uint8_t kNaN = 0x7f;  // canonical (what conversions produce)

  // Exact: every fp8 value is a float.
  static TESSEL_HOST_DEVICE constexpr float to_float(std::uint8_t b) {
    std::uint32_t const sign = std::uint32_t(b & 0x80u) << 24;
    std::uint32_t const e = (b >> Man) & ((1u << Exp) - 1u);
    std::uint32_t const m = b & ((1u << Man) - 1u);
    if constexpr (Ieee) {
      if (e == (1u << Exp) - 1u) return bits_float(sign | 0x7f800000u | (m ? 0x400000u : 0u));
    } else {
      if ((b & 0x7fu) == 0x7fu) return bits_float(sign | 0x7fc00000u);
    }
    if (e == 0) {  // subnormal: m * 2^(1 - Bias - Man), a normal float scale
      float const v = float(m) * bits_float(std::uint32_t(127 + 1 - Bias - Man) << 23);
      return sign ? -v : v;
    }
    return bits_float(sign | ((e - Bias + 127u) << 23) | (m << (23 - Man)));
  }

  // Round to nearest even, saturating to the largest finite value (cvt.rn.satfinite).
  static TESSEL_HOST_DEVICE constexpr std::uint8_t from_float(float f) {
    std::uint32_t const x = float_bits(f);
    std::uint32_t const sign = (x >> 24) & 0x80u;
    std::uint32_t const abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return kNaN;
    if (abs == 0x7f800000u) return std::uint8_t(sign | kMaxFinite);
    int const fe = int(abs >> 23) - 127 + Bias;  // the fp8 biased exponent, if normal
    std::uint32_t const sig = (abs & 0x7fffffu) | (abs >> 23 ? 0x800000u : 0u);
    // Keep (Man + 1) significant bits for a normal result; fewer for a subnormal one.
    int const shift = (23 - Man) + (fe >= 1 ? 0 : 1 - fe);
    if (shift > 24) return std::uint8_t(sign);  // below half the smallest subnormal: +-0
    std::uint32_t q = sig >> shift;
    std::uint32_t const rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // a carry rolls into the exponent
    // q holds the implicit bit for normals: code = ((fe - 1) << Man) + q (q < 2^(Man+1)).
    std::uint32_t const code = fe >= 1 ? (std::uint32_t(fe - 1) << Man) + q : q;
    return std::uint8_t(sign | (code > kMaxFinite ? kMaxFinite : code));
  }
};

using Fp8E4M3 = Fp8Format<4, 3, 7, false>;
using Fp8E5M2 = Fp8Format<5, 2, 15, true>;

#if defined(__CUDACC__)
template <class Format>
struct cuda_fp8_of;
template <>
struct cuda_fp8_of<Fp8E4M3> {
  using type = __nv_fp8_e4m3;
};
template <>
struct cuda_fp8_of<Fp8E5M2> {
  using type = __nv_fp8_e5m2;
};
#endif

}  // namespace detail

// An 8-bit float of `Format`: storage, exact widening, rounding from float (see the file
// comment), arithmetic through float (float_ops). Converting from double goes through float,
// which is exact enough: float keeps more than 2 * 4 + 2 significant bits, so the double
// rounding is innocuous.
template <class Format>
struct alignas(1) float8_t : detail::float_ops<float8_t<Format>> {
  using format = Format;
  std::uint8_t storage;

  float8_t() = default;
  TESSEL_HOST_DEVICE constexpr explicit float8_t(float f) : storage(Format::from_float(f)) {}
  TESSEL_HOST_DEVICE constexpr explicit float8_t(double d) : float8_t(float(d)) {}
  TESSEL_HOST_DEVICE constexpr explicit float8_t(int i) : float8_t(float(i)) {}
  TESSEL_HOST_DEVICE constexpr explicit operator float() const { return Format::to_float(storage); }
  TESSEL_HOST_DEVICE constexpr explicit operator double() const { return double(Format::to_float(storage)); }
  TESSEL_HOST_DEVICE constexpr explicit operator int() const { return int(Format::to_float(storage)); }

  TESSEL_HOST_DEVICE static constexpr float8_t bitcast(std::uint8_t bits) {
    float8_t x{};
    x.storage = bits;
    return x;
  }
  TESSEL_HOST_DEVICE constexpr std::uint8_t raw() const { return storage; }

#if defined(__CUDACC__)
  // cuda_fp8.h's type of the same format (__nv_fp8_e4m3 / __nv_fp8_e5m2), bit for bit.
  using cuda_type = typename detail::cuda_fp8_of<Format>::type;
  TESSEL_HOST_DEVICE explicit float8_t(cuda_type x) : storage(x.__x) {}
  TESSEL_HOST_DEVICE explicit operator cuda_type() const {
    cuda_type r;
    r.__x = storage;
    return r;
  }
#endif
};

using float_e4m3_t = float8_t<detail::Fp8E4M3>;
using float_e5m2_t = float8_t<detail::Fp8E5M2>;

}  // namespace tessel
