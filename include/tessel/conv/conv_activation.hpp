// tessel/conv/conv_activation.hpp -- the activations of the convolution epilogue, as formulas:
// ConvActivation's values are Activation's (tessel/epilogue/activation.hpp, shared with the GEMM's
// fused epilogue), the convolution's GELU being the tanh form.
//
//   none   z
//   relu   max(z, 0), NaN kept (as torch.relu)
//   gelu   0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3)))        the tanh form (torch's approximate="tanh")
//   silu   z / (1 + exp(-z))
//   e.g.  conv_activate(ConvActivation::relu, -2.0) == 0.0, conv_activate(ConvActivation::gelu, 0.0) == 0.0
// The references evaluate them in fp64, the epilogue-only path in fp32. conv_activation_slope
// bounds |act'(z)| over all z (GELU's tanh form peaks at 1.1289 near z = 1.4, SiLU at 1.0998 near
// z = 2.4): an error e in z moves act(z) by at most slope * e, which the correctness check uses.
// Plain C++ (host and device).
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/conv_arguments.hpp>
#include <tessel/epilogue/activation.hpp>

namespace tessel {

template <class T>
TESSEL_HOST_DEVICE inline T conv_activate(ConvActivation a, T z) {
  return activate(activation_of(a), z);
}

// An upper bound on |act'(z)| over every z (see the file comment).
TESSEL_HOST_DEVICE constexpr double conv_activation_slope(ConvActivation a) { return activation_slope(activation_of(a)); }

}  // namespace tessel
