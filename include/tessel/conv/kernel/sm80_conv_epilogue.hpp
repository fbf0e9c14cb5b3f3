// tessel/conv/kernel/sm80_conv_epilogue.hpp -- the convolution epilogue on up to eight (or two)
// consecutive output channels of one output pixel (or filter row):
//   out[e] = act(alpha * acc[e] + beta * residual[e] + bias[channel + e])     e < cols
// in the output's 16-bit type, rounded to nearest even. The residual is read only when it is given
// and beta != 0 (so NaN in an unread residual does not propagate, as in BLAS); a chunk of eight
// inside the tensor, with 16-byte aligned addresses, is one 16-byte load and store, any other
// chunk is read and written element by element.
// Shared by the implicit-GEMM kernels (sm80_implicit_gemm_conv.hpp) and the depthwise kernel.
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/epilogue/activation.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel::detail {

// The activation of the contract (ConvActivation), in fp32 with the accurate library functions
// (tanhf, expf): the result is compared against an fp64 reference (tessel/epilogue/activation.hpp).
TESSEL_DEVICE inline float conv_activate(float v, ConvActivation act) { return activate(act, v); }

template <class Element>
TESSEL_DEVICE inline float conv_to_f32(Element x) {
  return float(x);
}

template <class Element>
TESSEL_DEVICE inline Element conv_from_f32(float x) {
  if constexpr (std::is_same_v<Element, bfloat16_t>) {
    return bfloat16_t(__float2bfloat16_rn(x));
  } else {
    static_assert(std::is_same_v<Element, half_t>, "sm80 conv epilogue: outputs are bfloat16_t or half_t");
    return half_t(__float2half_rn(x));
  }
}

// What the epilogue applies, the same for every chunk of a launch.
struct ConvEpilogueOps {
  float alpha, beta;
  float const* bias;  // nullptr: none
  ConvActivation act;
};

// Up to N outputs: out[e] for e < cols (file comment). residual may be nullptr. channel: the
// bias index of out[0]. vec_out / vec_res: the addresses of a whole chunk are aligned to its size
// (N = 8: one 16-byte access; N = 2, the small-channel kernels' channel pairs: one 32-bit access).
template <class Element, int N>
TESSEL_DEVICE void conv_store_chunk(ConvEpilogueOps const& ops, float const (&acc)[N], Element* out,
                                    Element const* residual, int channel, int cols, bool vec_out, bool vec_res) {
  static_assert(N == 8 || N == 2, "conv_store_chunk: a chunk is 8 channels (16 bytes) or 2 (32 bits)");
  using Word = std::conditional_t<N == 8, uint4, unsigned int>;
  float v[N];
  TESSEL_UNROLL
  for (int e = 0; e < N; ++e) v[e] = ops.alpha * acc[e];
  if (residual != nullptr && ops.beta != 0.0f) {
    if (cols == N && vec_res) {
      alignas(sizeof(Word)) Element r[N];
      *reinterpret_cast<Word*>(r) = __ldg(reinterpret_cast<Word const*>(residual));
      TESSEL_UNROLL
      for (int e = 0; e < N; ++e) v[e] += ops.beta * conv_to_f32(r[e]);
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < N; ++e)
        if (e < cols) v[e] += ops.beta * conv_to_f32(residual[e]);
    }
  }
  if (ops.bias != nullptr) {
    TESSEL_UNROLL
    for (int e = 0; e < N; ++e)
      if (e < cols) v[e] += __ldg(ops.bias + channel + e);
  }
  if (ops.act != ConvActivation::none) {
    TESSEL_UNROLL
    for (int e = 0; e < N; ++e) v[e] = conv_activate(v[e], ops.act);
  }
  if (cols == N && vec_out) {
    alignas(sizeof(Word)) Element o[N];
    TESSEL_UNROLL
    for (int e = 0; e < N; ++e) o[e] = conv_from_f32<Element>(v[e]);
    *reinterpret_cast<Word*>(out) = *reinterpret_cast<Word const*>(o);
  } else {
    TESSEL_UNROLL
    for (int e = 0; e < N; ++e)
      if (e < cols) out[e] = conv_from_f32<Element>(v[e]);
  }
}

}  // namespace tessel::kernel::detail
