// tessel/conv/conv_activation.hpp -- the activations of the convolution epilogue, as formulas.
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

#include <cmath>

namespace tessel {

template <class T>
TESSEL_HOST_DEVICE inline T conv_activate(ConvActivation a, T z) {
  switch (a) {
    case ConvActivation::none: return z;
    case ConvActivation::relu: return z < T(0) ? T(0) : z;
    case ConvActivation::gelu: {
      T const kSqrt2OverPi = T(0.79788456080286535588);
      return T(0.5) * z * (T(1) + tanh(kSqrt2OverPi * (z + T(0.044715) * z * z * z)));
    }
    case ConvActivation::silu: return z / (T(1) + exp(-z));
  }
  return z;
}

// An upper bound on |act'(z)| over every z (see the file comment).
TESSEL_HOST_DEVICE constexpr double conv_activation_slope(ConvActivation a) {
  return a == ConvActivation::gelu ? 1.13 : a == ConvActivation::silu ? 1.10 : 1.0;
}

}  // namespace tessel
