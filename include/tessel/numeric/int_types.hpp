// tessel/numeric/int_types.hpp -- sizeof_bits, uint128_t and uint_bit_t<N>: the register-sized
// integer types that copies move data in.
//
//   sizeof_bits_v<half_t> == 16      uint_bit_t<128> == uint128_t      sizeof(uint128_t) == 16
// uint128_t is a plain 16-byte, 16-byte-aligned bag of bits (no arithmetic): a 128-bit load or
// store through a uint128_t pointer compiles to one vector instruction on the device.
#pragma once

#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

template <class T>
struct sizeof_bits {
  static constexpr int value = int(sizeof(T) * 8);
};
template <class T>
struct sizeof_bits<T const> : sizeof_bits<T> {};
template <class T>
struct sizeof_bits<T volatile> : sizeof_bits<T> {};
template <class T>
struct sizeof_bits<T const volatile> : sizeof_bits<T> {};
template <class T>
inline constexpr int sizeof_bits_v = sizeof_bits<T>::value;

struct alignas(16) uint128_t {
  std::uint64_t lo;
  std::uint64_t hi;
  TESSEL_HOST_DEVICE constexpr bool operator==(uint128_t const& o) const { return lo == o.lo && hi == o.hi; }
};

namespace detail {
template <int Bits>
struct uint_bit;
template <>
struct uint_bit<8> {
  using type = std::uint8_t;
};
template <>
struct uint_bit<16> {
  using type = std::uint16_t;
};
template <>
struct uint_bit<32> {
  using type = std::uint32_t;
};
template <>
struct uint_bit<64> {
  using type = std::uint64_t;
};
template <>
struct uint_bit<128> {
  using type = uint128_t;
};
}  // namespace detail

// The unsigned integer of exactly Bits bits (8, 16, 32, 64 or 128).
template <int Bits>
using uint_bit_t = typename detail::uint_bit<Bits>::type;

}  // namespace tessel
