// tessel/conv/implicit_gemm_problem_size.hpp -- a convolution pass as GEMM extents (M, N, K).
//
// An implicit-GEMM convolution never forms the im2col matrix; it walks the convolution as if it
// were a GEMM of these extents:
//            2-D                       3-D
//   fprop    (N*P*Q,  K,      R*S*C)   (N*Z*P*Q,  K,        T*R*S*C)
//   dgrad    (N*H*W,  C,      K*R*S)   (N*D*H*W,  C,        K*T*R*S)
//   wgrad    (K,      R*S*C,  N*P*Q)   (K,        T*R*S*C,  N*Z*P*Q)
//   Pre:  the problem size was accepted by its constructor (so every extent is >= 1).
//   e.g.  fprop of Conv2dProblemSize(1, 56, 56, 64, 128, 3, 3, 1, 1, 2, 2, 1, 1) -> (784, 128, 576)
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/conv2d_problem_size.hpp>
#include <tessel/conv/conv3d_problem_size.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/core/gemm_coord.hpp>

namespace tessel::conv {

// The GEMM extents of a 2-D convolution pass (table above).
TESSEL_HOST_DEVICE constexpr GemmCoord implicit_gemm_problem_size(Operator op, Conv2dProblemSize const& p) {
  switch (op) {
    case Operator::kFprop: return GemmCoord(p.N * p.P * p.Q, p.K, p.R * p.S * p.C);
    case Operator::kDgrad: return GemmCoord(p.N * p.H * p.W, p.C, p.K * p.R * p.S);
    case Operator::kWgrad: return GemmCoord(p.K, p.R * p.S * p.C, p.N * p.P * p.Q);
  }
  return GemmCoord();
}

// The GEMM extents of a 3-D convolution pass (table above).
TESSEL_HOST_DEVICE constexpr GemmCoord implicit_gemm_problem_size(Operator op, Conv3dProblemSize const& p) {
  switch (op) {
    case Operator::kFprop: return GemmCoord(p.N * p.Z * p.P * p.Q, p.K, p.T * p.R * p.S * p.C);
    case Operator::kDgrad: return GemmCoord(p.N * p.D * p.H * p.W, p.C, p.K * p.T * p.R * p.S);
    case Operator::kWgrad: return GemmCoord(p.K, p.T * p.R * p.S * p.C, p.N * p.Z * p.P * p.Q);
  }
  return GemmCoord();
}

}  // namespace tessel::conv
