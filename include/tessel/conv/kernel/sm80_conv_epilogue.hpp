// tessel/conv/kernel/sm80_conv_epilogue.hpp -- the convolution epilogue on up to eight consecutive
// output channels of one output pixel (or filter row):
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

// Up to eight outputs: out[e] for e < cols (file comment). residual may be nullptr. channel: the
// bias index of out[0]. vec_out / vec_res: the addresses of a whole chunk are 16-byte aligned.
template <class Element>
TESSEL_DEVICE void conv_store_chunk(ConvEpilogueOps const& ops, float const (&acc)[8], Element* out,
                                    Element const* residual, int channel, int cols, bool vec_out, bool vec_res) {
  float v[8];
  TESSEL_UNROLL
  for (int e = 0; e < 8; ++e) v[e] = ops.alpha * acc[e];
  if (residual != nullptr && ops.beta != 0.0f) {
    if (cols == 8 && vec_res) {
      alignas(16) Element r[8];
      *reinterpret_cast<uint4*>(r) = __ldg(reinterpret_cast<uint4 const*>(residual));
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e) v[e] += ops.beta * conv_to_f32(r[e]);
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e)
        if (e < cols) v[e] += ops.beta * conv_to_f32(residual[e]);
    }
  }
  if (ops.bias != nullptr) {
    TESSEL_UNROLL
    for (int e = 0; e < 8; ++e)
      if (e < cols) v[e] += __ldg(ops.bias + channel + e);
  }
  if (ops.act != ConvActivation::none) {
    TESSEL_UNROLL
    for (int e = 0; e < 8; ++e) v[e] = conv_activate(v[e], ops.act);
  }
  if (cols == 8 && vec_out) {
    alignas(16) Element o[8];
    TESSEL_UNROLL
    for (int e = 0; e < 8; ++e) o[e] = conv_from_f32<Element>(v[e]);
    *reinterpret_cast<uint4*>(out) = *reinterpret_cast<uint4 const*>(o);
  } else {
    TESSEL_UNROLL
    for (int e = 0; e < 8; ++e)
      if (e < cols) out[e] = conv_from_f32<Element>(v[e]);
  }
}

}  // namespace tessel::kernel::detail
