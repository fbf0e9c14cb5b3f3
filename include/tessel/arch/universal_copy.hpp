// tessel/arch/universal_copy.hpp -- copies any thread can do: one assignment of S to D.
//
// UniversalCopy<S,D>: dst = src, one element of S (a 128-bit S gives one vector load/store).
// AutoVectorizingCopyWithAssumedAlignment<Bits>: no fixed width; the copy algorithm picks the
// widest vector (up to Bits) that the source and destination layouts allow, assuming the data is
// aligned to Bits (the caller's promise). AutoVectorizingCopy is the 128-bit one.
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/config.hpp>
#include <tessel/numeric/int_types.hpp>

namespace tessel {

template <class S, class D = S>
struct UniversalCopy {
  using SRegisters = S[1];
  using DRegisters = D[1];

  TESSEL_HOST_DEVICE static void copy(S const& src, D& dst) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(S) == 16 && sizeof(D) == 16) {
      *reinterpret_cast<uint4*>(&dst) = *reinterpret_cast<uint4 const*>(&src);
      return;
    }
#endif
    dst = static_cast<D>(src);
  }
};

template <int MaxVecBits = 128>
struct AutoVectorizingCopyWithAssumedAlignment {
  static_assert(MaxVecBits == 8 || MaxVecBits == 16 || MaxVecBits == 32 || MaxVecBits == 64 || MaxVecBits == 128,
                "AutoVectorizingCopyWithAssumedAlignment<Bits>: Bits is the widest vector, one of 8, 16, 32, "
                "64 or 128");
};

using AutoVectorizingCopy = AutoVectorizingCopyWithAssumedAlignment<128>;

}  // namespace tessel
