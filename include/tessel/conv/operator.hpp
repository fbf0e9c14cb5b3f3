// tessel/conv/operator.hpp -- which convolution pass an implicit GEMM computes.
//
// With activations x (NHWC), filters w (KRSC) and outputs y (NPQK):
//   kFprop  forward propagation     y  = conv(x, w)
//   kDgrad  data gradient           dx = conv_transpose(dy, w)
//   kWgrad  weight gradient         dw = correlation of x with dy
// implicit_gemm_problem_size (conv/implicit_gemm_problem_size.hpp) gives each one's GEMM extents.
#pragma once

namespace tessel::conv {

// Operator: the convolution pass computed as an implicit GEMM.
enum class Operator { kFprop, kDgrad, kWgrad };

// The operator's name as the CLI and reports spell it: "fprop", "dgrad", "wgrad".
constexpr char const* to_string(Operator op) {
  switch (op) {
    case Operator::kFprop: return "fprop";
    case Operator::kDgrad: return "dgrad";
    case Operator::kWgrad: return "wgrad";
  }
  return "unknown";
}

}  // namespace tessel::conv
