// tessel/numeric/half.hpp -- half_t: IEEE binary16, usable on the host and the device.
//
// Stored as 16 bits; arithmetic goes through float (as CuTe's half_t does on the host). Converting
// from float rounds to nearest even. In CUDA code it converts to and from __half.
//   half_t(1.5f) + half_t(2) == half_t(3.5f)      half_t::bitcast(0x3c00) == half_t(1)
#pragma once

#include <tessel/config.hpp>
#include <tessel/numeric/float_bits.hpp>
#include <tessel/numeric/float_ops.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstdint>
#include <ostream>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace tessel {

struct alignas(2) half_t : detail::float_ops<half_t> {
  std::uint16_t storage;

  half_t() = default;
  TESSEL_HOST_DEVICE constexpr explicit half_t(float f) : storage(detail::float_to_half_bits(f)) {}
  TESSEL_HOST_DEVICE constexpr explicit half_t(double d) : half_t(float(d)) {}
  TESSEL_HOST_DEVICE constexpr explicit half_t(int i) : half_t(float(i)) {}
  TESSEL_HOST_DEVICE constexpr explicit operator float() const { return detail::half_bits_to_float(storage); }
  TESSEL_HOST_DEVICE constexpr explicit operator double() const { return double(float(*this)); }
  TESSEL_HOST_DEVICE constexpr explicit operator int() const { return int(float(*this)); }

  TESSEL_HOST_DEVICE static constexpr half_t bitcast(std::uint16_t bits) {
    half_t h{};
    h.storage = bits;
    return h;
  }
  TESSEL_HOST_DEVICE constexpr std::uint16_t raw() const { return storage; }

#if defined(__CUDACC__)
  TESSEL_HOST_DEVICE explicit half_t(__half const& h) : storage(__half_raw(h).x) {}
  TESSEL_HOST_DEVICE explicit operator __half() const {
    __half_raw r;
    r.x = storage;
    return __half(r);
  }
#endif
};

}  // namespace tessel
