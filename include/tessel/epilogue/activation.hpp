// tessel/epilogue/activation.hpp -- the activations a fused epilogue applies last, as formulas:
// one vocabulary and one implementation for every kernel family (GEMM, convolution) and for the
// fp64 references.
//
//   none        z
//   relu        max(z, 0); NaN stays NaN, -0 becomes +0
//   gelu        0.5 z (1 + erf(z / sqrt(2)))                               the exact (erf) form, torch's default
//   gelu_tanh   0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))            torch's approximate="tanh"
//   silu        z / (1 + exp(-z))
//   e.g.  activate(Activation::relu, -2.0) == 0.0, activate(Activation::gelu, 1.0) == 0.8413447460685429
// The enumerators' values are the C ABI's (tessel_activation): gelu_tanh is 2 because the
// convolution's GELU, the first one tessel had, is the tanh form (ConvActivation::gelu maps to it).
//
// activate<float> is what kernels run for an fp32 result (erff, tanhf, expf: the accurate library
// functions, since the result is judged against an fp64 reference), activate<double> what the
// references run. activate_fast_as is what a kernel runs before rounding to a 16-bit type, where
// 4-11 instructions a value instead of 24-27 keep a GEMM's fused epilogue short (it runs on every
// element of D with the tensor cores idle):
//   gelu_tanh  tanh.approx.f32 (relative error <= 2^-10.99, PTX ISA)      |error| <= 2.5e-4 |z|
//   silu       z sigma(z) = 0.5 z (1 + tanh(z / 2)), tanh.approx.f32      |error| <= 2.5e-4 |z|
//   gelu       z Phi(z): 1 - Phi(|z|) = 2^-p(|z|), p the degree-7 fit of -log2(erfc(t / sqrt 2) / 2)
//              on [0, 5.5] below (increasing on [0, inf): Phi -> 1 and 0 in the tails), ex2.approx
//                                                                          |error| <= 2.2e-6 |z|
//   relu       exact
// Each is below half a unit in the last place of bf16 (2^-9) and about half of fp16's (2^-11), of
// the error scale |z| the GEMM checks use (tests/host/gemm_validate_test.cpp measures them). On
// the host (tests) tanh and exp2 stand in for the approximate instructions.
// activation_slope bounds |act'(z)| over all z (the exact GELU peaks at 1.1289 near z = 1.41, the
// tanh form at 1.1289 too, SiLU at 1.0998 near z = 2.4): an error e in z moves act(z) by at most
// slope * e, which the correctness checks use. Plain C++ (host and device).
#pragma once

#include <tessel/config.hpp>

#include <cmath>
#include <type_traits>

namespace tessel {

enum class Activation : int { none = 0, relu = 1, gelu_tanh = 2, silu = 3, gelu = 4 };

constexpr char const* to_string(Activation a) {
  switch (a) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
  }
  return "?";
}

// a is one of the enumerators (a value cast from an int may not be).
constexpr bool is_activation(Activation a) {
  return a == Activation::none || a == Activation::relu || a == Activation::gelu || a == Activation::gelu_tanh ||
         a == Activation::silu;
}

// One activation as a compile-time value, for code that applies it to many values after one
// branch on the run-time enumerator (a kernel's epilogue: the branch outside the unrolled loop).
template <Activation A, class T>
TESSEL_HOST_DEVICE inline T activate_as(T z) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "activate: float (kernels) or double (references)");
  constexpr bool F = std::is_same_v<T, float>;
  if constexpr (A == Activation::relu) {
    return z > T(0) ? z : (z == z ? T(0) : z);  // NaN stays NaN
  } else if constexpr (A == Activation::gelu) {
    T const kRsqrt2 = T(0.70710678118654752440);
    if constexpr (F) {
      return T(0.5) * z * (T(1) + erff(kRsqrt2 * z));
    } else {
      return T(0.5) * z * (T(1) + erf(kRsqrt2 * z));
    }
  } else if constexpr (A == Activation::gelu_tanh) {
    T const kSqrt2OverPi = T(0.79788456080286535588);
    T const inner = kSqrt2OverPi * (z + T(0.044715) * z * z * z);
    if constexpr (F) {
      return T(0.5) * z * (T(1) + tanhf(inner));
    } else {
      return T(0.5) * z * (T(1) + tanh(inner));
    }
  } else if constexpr (A == Activation::silu) {
    if constexpr (F) {
      return z / (T(1) + expf(-z));
    } else {
      return z / (T(1) + exp(-z));
    }
  } else {
    return z;
  }
}

namespace detail {

// tanh(x), by the hardware's approximation on the device (sm_75+).
TESSEL_HOST_DEVICE inline float tanh_fast(float x) {
#if defined(__CUDA_ARCH__)
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(x));
  return t;
#else
  return std::tanh(x);
#endif
}

// 2^x, likewise.
TESSEL_HOST_DEVICE inline float exp2_fast(float x) {
#if defined(__CUDA_ARCH__)
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x));
  return e;
#else
  return std::exp2(x);
#endif
}

// p(t) ~ -log2(erfc(t / sqrt 2) / 2) = -log2(1 - Phi(t)) on [0, 5.5]: a least-squares fit on
// Chebyshev nodes (max |2^-p - (1 - Phi)| = 2.1e-6 there, at t = 0); increasing for every t >= 0.
TESSEL_HOST_DEVICE inline float gelu_tail_log2(float t) {
  float p = 1.92122384e-06f;
  p = p * t - 6.32882869e-05f;
  p = p * t + 0.000943419237f;
  p = p * t - 0.00855626611f;
  p = p * t + 0.0540522708f;
  p = p * t + 0.458381796f;
  p = p * t + 1.15127833f;
  return p * t + 0.999993856f;
}

}  // namespace detail

// The activations a kernel runs before rounding to a 16-bit type (file comment).
template <Activation A>
TESSEL_HOST_DEVICE inline float activate_fast_as(float z) {
  if constexpr (A == Activation::gelu_tanh) {
    float const u = 0.7978845608028654f * (z + 0.044715f * z * z * z);
    return 0.5f * z * (1.0f + detail::tanh_fast(u));
  } else if constexpr (A == Activation::silu) {
    float const h = 0.5f * z;
    return h + h * detail::tanh_fast(h);
  } else if constexpr (A == Activation::gelu) {
    float const tail = detail::exp2_fast(-detail::gelu_tail_log2(z < 0.0f ? -z : z));  // 1 - Phi(|z|)
    return z * (z >= 0.0f ? 1.0f - tail : tail);
  } else {
    return activate_as<A>(z);
  }
}

template <class T>
TESSEL_HOST_DEVICE inline T activate(Activation a, T z) {
  switch (a) {
    case Activation::relu: return activate_as<Activation::relu>(z);
    case Activation::gelu: return activate_as<Activation::gelu>(z);
    case Activation::gelu_tanh: return activate_as<Activation::gelu_tanh>(z);
    case Activation::silu: return activate_as<Activation::silu>(z);
    case Activation::none: break;
  }
  return z;
}

// An upper bound on |act'(z)| over every z (see the file comment).
TESSEL_HOST_DEVICE constexpr double activation_slope(Activation a) {
  return a == Activation::gelu || a == Activation::gelu_tanh ? 1.13 : a == Activation::silu ? 1.10 : 1.0;
}

}  // namespace tessel
