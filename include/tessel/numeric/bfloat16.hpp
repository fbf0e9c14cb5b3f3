// tessel/numeric/bfloat16.hpp -- bfloat16_t: the top 16 bits of a float, usable on the host and
// the device.
//
// Arithmetic goes through float; converting from float rounds to nearest even. In CUDA code it
// converts to and from __nv_bfloat16.
//   bfloat16_t(1.0f).raw() == 0x3f80      float(bfloat16_t(3.0f)) == 3.0f
#pragma once

#include <tessel/config.hpp>
#include <tessel/numeric/float_bits.hpp>
#include <tessel/numeric/float_ops.hpp>
#include <tessel/numeric/int_types.hpp>

#include <cstdint>
#include <ostream>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#endif

namespace tessel {

struct alignas(2) bfloat16_t : detail::float_ops<bfloat16_t> {
  std::uint16_t storage;

  bfloat16_t() = default;
  TESSEL_HOST_DEVICE constexpr explicit bfloat16_t(float f) : storage(detail::float_to_bf16_bits(f)) {}
  TESSEL_HOST_DEVICE constexpr explicit bfloat16_t(double d) : bfloat16_t(float(d)) {}
  TESSEL_HOST_DEVICE constexpr explicit bfloat16_t(int i) : bfloat16_t(float(i)) {}
  TESSEL_HOST_DEVICE constexpr explicit operator float() const { return detail::bf16_bits_to_float(storage); }
  TESSEL_HOST_DEVICE constexpr explicit operator double() const { return double(float(*this)); }
  TESSEL_HOST_DEVICE constexpr explicit operator int() const { return int(float(*this)); }

  TESSEL_HOST_DEVICE static constexpr bfloat16_t bitcast(std::uint16_t bits) {
    bfloat16_t b{};
    b.storage = bits;
    return b;
  }
  TESSEL_HOST_DEVICE constexpr std::uint16_t raw() const { return storage; }

#if defined(__CUDACC__)
  TESSEL_HOST_DEVICE explicit bfloat16_t(__nv_bfloat16 const& b) : storage(__nv_bfloat16_raw(b).x) {}
  TESSEL_HOST_DEVICE explicit operator __nv_bfloat16() const {
    __nv_bfloat16_raw r;
    r.x = storage;
    return __nv_bfloat16(r);
  }
#endif
};

}  // namespace tessel
