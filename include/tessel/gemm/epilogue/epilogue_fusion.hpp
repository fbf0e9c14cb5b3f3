// tessel/gemm/epilogue/epilogue_fusion.hpp -- the fused epilogue of the GEMM kernels: what their
// parameters carry, and the device code that applies it to fp32 values.
//
//   v = act(v + bias[index])        v = alpha * acc + beta * C, before the rounding to D's type
//
// index is the kernel's row of D (bias_rows) or its column. Kernels fuse in-kernel only where D is
// 16-bit, with the activations' fast forms (activate_fast_as: errors below the rounding to 16
// bits); an fp32 D is written unfused and finished by one pass over it (fused_epilogue_pass,
// src/gemm/gemm_canonical.hpp) with the accurate forms -- the same arithmetic, bit for bit, as an
// in-kernel epilogue with them. The host (epilogue_fusion_of) turns
// GemmArguments' bias_mode into the kernel's orientation: a column-major D is computed as D^T (a
// per-row bias of D follows the kernel's columns), and a kernel that runs the swapped problem
// turns it once more. One EpilogueFusion per launch: kernels branch on it uniformly, once per
// tile, never per k-tile; `active()` false is the plain GEMM, bit for bit.
//   e.g. D row-major, bias_mode col, act relu:  bias_rows = false, v(i,j) = max(v + bias[j], 0)
//        D col-major, bias_mode col:            bias_rows = true (the kernel's rows are D's columns)
// The struct and epilogue_fusion_of are plain C++ (the adapters compile without nvcc); the device
// functions need nvcc.
#pragma once

#include <tessel/config.hpp>
#include <tessel/epilogue/activation.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace tessel::epilogue {

// The bias vector's element type: D's.
enum class BiasType : std::uint8_t { f32, f16, bf16 };

struct EpilogueFusion {
  void const* bias = nullptr;   // null: no bias
  BiasType bias_type = BiasType::f32;
  bool bias_rows = false;       // bias[row of the kernel's D], else bias[column]
  Activation act = Activation::none;

  TESSEL_HOST_DEVICE constexpr bool active() const { return bias != nullptr || act != Activation::none; }
};

// g's fused epilogue as a kernel sees it: `kernel_transposes` -- the kernel computes the transpose
// of the canonical (row-major) D, as the skinny kernels' swapped problems do.
constexpr EpilogueFusion epilogue_fusion_of(GemmArguments const& g, bool kernel_transposes = false) {
  EpilogueFusion f;
  if (g.bias_mode != BiasMode::none) {
    f.bias = g.bias;
    f.bias_type = g.c_type == DType::f16 ? BiasType::f16 : g.c_type == DType::bf16 ? BiasType::bf16 : BiasType::f32;
    bool const canonical_rows = (g.bias_mode == BiasMode::row) != (g.c_order == MatrixOrder::col_major);
    f.bias_rows = canonical_rows != kernel_transposes;
  }
  f.act = g.activation;
  return f;
}

#if defined(__CUDACC__)

// A 16-bit element of D's type as fp32, exactly: fp16 when `f16`, else bf16 -- both widened and
// one selected, so code that reads many (a tile's C, its bias) has no branch per element.
TESSEL_DEVICE inline float widen16(unsigned short raw, bool f16) {
  float const h = __half2float(__ushort_as_half(raw));
  float const b = __uint_as_float(unsigned(raw) << 16);
  return f16 ? h : b;
}

// bias[i] of a 16-bit D as fp32 (exact): the kernels' in-kernel epilogue.
TESSEL_DEVICE inline float fusion_bias16(EpilogueFusion const& f, std::int64_t i) {
  return widen16(__ldg(static_cast<unsigned short const*>(f.bias) + i), f.bias_type == BiasType::f16);
}

// bias[i] as fp32 (exact).
TESSEL_DEVICE inline float fusion_bias(EpilogueFusion const& f, std::int64_t i) {
  switch (f.bias_type) {
    case BiasType::f16: return __half2float(__ushort_as_half(__ldg(static_cast<unsigned short const*>(f.bias) + i)));
    case BiasType::bf16: return __uint_as_float(unsigned(__ldg(static_cast<unsigned short const*>(f.bias) + i)) << 16);
    case BiasType::f32: break;
  }
  return __ldg(static_cast<float const*>(f.bias) + i);
}

// One activation; Fast: the forms for a result rounded to 16 bits (activate_fast_as), else the
// accurate ones (activate_as).
template <bool Fast, Activation A>
TESSEL_DEVICE inline float fusion_activate_as(float v) {
  if constexpr (Fast) {
    return activate_fast_as<A>(v);
  } else {
    return activate_as<A>(v);
  }
}

// The activation on v[Begin, End), with one branch on it outside the (unrolled) loop.
template <bool Fast, int Begin, int End, int N>
TESSEL_DEVICE void fusion_activate_range(Activation a, float (&v)[N]) {
  static_assert(0 <= Begin && Begin <= End && End <= N, "fusion_activate_range: [Begin, End) must lie in v");
  auto const each = [&](auto act) {
    TESSEL_UNROLL
    for (int i = Begin; i < End; ++i) v[i] = fusion_activate_as<Fast, decltype(act)::value>(v[i]);
  };
  switch (a) {
    case Activation::relu: each(std::integral_constant<Activation, Activation::relu>{}); break;
    case Activation::gelu: each(std::integral_constant<Activation, Activation::gelu>{}); break;
    case Activation::gelu_tanh: each(std::integral_constant<Activation, Activation::gelu_tanh>{}); break;
    case Activation::silu: each(std::integral_constant<Activation, Activation::silu>{}); break;
    case Activation::none: break;
  }
}

// The activation on every value of v.
template <bool Fast, int N>
TESSEL_DEVICE void fusion_activate(Activation a, float (&v)[N]) {
  fusion_activate_range<Fast, 0, N>(a, v);
}

// N consecutive values of one row of the kernel's D, (row, col0 + e) for e < N; `count` of them
// inside D (the bias is not read past it): v = act(v + bias). Fast: a 16-bit D (its bias 16-bit,
// the activations' fast forms).
template <bool Fast, int N>
TESSEL_DEVICE void fusion_apply_row(EpilogueFusion const& f, float (&v)[N], std::int64_t row, std::int64_t col0, int count) {
  auto const bias = [&](std::int64_t i) { return Fast ? fusion_bias16(f, i) : fusion_bias(f, i); };
  if (f.bias != nullptr) {
    if (f.bias_rows) {
      float const b = bias(row);
      TESSEL_UNROLL
      for (int e = 0; e < N; ++e) v[e] += b;
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < N; ++e)
        if (e < count) v[e] += bias(col0 + e);
    }
  }
  fusion_activate<Fast>(f.act, v);
}

// One value at (row, col) of the kernel's D.
template <bool Fast>
TESSEL_DEVICE float fusion_apply(EpilogueFusion const& f, float v, std::int64_t row, std::int64_t col) {
  if (f.bias != nullptr) {
    std::int64_t const i = f.bias_rows ? row : col;
    v += Fast ? fusion_bias16(f, i) : fusion_bias(f, i);
  }
  float r[1] = {v};
  fusion_activate<Fast>(f.act, r);
  return r[0];
}

#endif  // __CUDACC__

}  // namespace tessel::epilogue
