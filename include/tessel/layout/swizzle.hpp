// tessel/layout/swizzle.hpp -- Swizzle<B,M,S>: an XOR permutation of offsets.
//
// Sw<B,M,S>(x) = x ^ ((x & Y) >> S)  with  Y = ((1<<B) - 1) << (M + max(0,S)).
// It XORs the B bits that sit S positions above bit M into the B bits at M (a negative S
// reverses the direction). Within any aligned block of 2^(M + B + |S|) offsets it is a
// bijection, so a shared-memory tile can be stored permuted to spread a warp's accesses over
// the banks.
//   Pre:  B >= 0, M >= 0, |S| >= B (the source and target bit fields must not overlap).
//   e.g.  Sw<3,3,3>(100) == 108      Sw<3,0,-5>(149) == 53
// A static offset gives a static result.
#pragma once

#include <tessel/config.hpp>
#include <tessel/core/integral.hpp>
#include <tessel/core/print.hpp>

#include <ostream>

namespace tessel {

template <int B, int M, int S>
struct Swizzle {
  static_assert(B >= 0, "Swizzle<B,M,S>: the number of XORed bits B must be >= 0");
  static_assert(M >= 0, "Swizzle<B,M,S>: the base bit M must be >= 0");
  static_assert((S < 0 ? -S : S) >= B,
                "Swizzle<B,M,S>: |S| must be >= B, or the XORed bit fields overlap and the map is "
                "not a permutation. Raise |S| or lower B.");

  static constexpr int num_bits = B;
  static constexpr int num_base = M;
  static constexpr int num_shft = S;

  // The bits that are read (yyy) and the bits they are XORed into (zzz).
  static constexpr long long bit_msk = (1LL << B) - 1;
  static constexpr long long yyy_msk = bit_msk << (M + (S > 0 ? S : 0));
  static constexpr long long zzz_msk = bit_msk << (M - (S < 0 ? S : 0));

  template <class Offset>
  TESSEL_HOST_DEVICE static constexpr auto apply(Offset const& x) {
    if constexpr (S >= 0) {
      return x ^ ((x & Offset(yyy_msk)) >> S);
    } else {
      return x ^ ((x & Offset(yyy_msk)) << -S);
    }
  }

  template <class Offset>
    requires is_integral_v<Offset>
  TESSEL_HOST_DEVICE constexpr auto operator()(Offset const& x) const {
    if constexpr (is_c<Offset>::value) {
      return C<apply(Offset::value)>{};
    } else {
      return apply(x);
    }
  }

  template <int B2, int M2, int S2>
  TESSEL_HOST_DEVICE constexpr bool operator==(Swizzle<B2, M2, S2>) const {
    return B == B2 && M == M2 && S == S2;
  }
};

template <class T>
struct is_swizzle : std::false_type {};
template <int B, int M, int S>
struct is_swizzle<Swizzle<B, M, S>> : std::true_type {};
template <class T>
inline constexpr bool is_swizzle_v = is_swizzle<std::remove_cvref_t<T>>::value;

template <class Sink, int B, int M, int S>
TESSEL_HOST_DEVICE void format(Sink& sink, Swizzle<B, M, S>) {
  sink.text("Sw<");
  sink.integer(B);
  sink.text(",");
  sink.integer(M);
  sink.text(",");
  sink.integer(S);
  sink.text(">");
}

template <int B, int M, int S>
std::ostream& operator<<(std::ostream& os, Swizzle<B, M, S> const& s) {
  OstreamSink sink{&os};
  format(sink, s);
  return os;
}

}  // namespace tessel
