// tessel/arch/universal_fma.hpp -- the one-thread multiply-add any processor can do.
//
// UniversalFMA<D,A,B,C>: d = a * b + c computed in C's type, stored as D. It is the MMA "atom"
// of the SIMT kernels (one thread, one element of each operand: shape 1x1x1).
#pragma once

#include <tessel/config.hpp>

namespace tessel {

template <class D, class A = D, class B = A, class C = D>
struct UniversalFMA {
  using DRegisters = D[1];
  using ARegisters = A[1];
  using BRegisters = B[1];
  using CRegisters = C[1];

  TESSEL_HOST_DEVICE static constexpr void fma(D& d, A const& a, B const& b, C const& c) {
    d = static_cast<D>(static_cast<C>(a) * static_cast<C>(b) + c);
  }
};

}  // namespace tessel
