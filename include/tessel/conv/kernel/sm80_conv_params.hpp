// tessel/conv/kernel/sm80_conv_params.hpp -- what the sm_80 convolution kernels receive: one
// convolution pass (fprop, dgrad or wgrad), 2-D or 3-D, grouped, with a fused epilogue.
//
// Tensors are channels-last: activations x [n][d][h][w][c], outputs y [n][z][p][q][k], filters
// w [k][t][r][s][c / groups]. A 2-D problem is the 3-D one with d = t = z = 1, pad_d = 0 and
// stride_d = dilation_d = 1. Every pass writes
//   out = act(alpha * acc + beta * residual + bias)
// in the input dtype, acc the fp32 sum of products; residual (when not null) has out's shape and
// strides, bias (when not null) one fp32 value per output channel of out. The host side
// (conv/conv_validate.hpp) checks the rules below before a kernel sees the params.
//   e.g. fprop of a 3x3 pad-1 layer, N=2, 56x56, C=K=64: n=2, d=t=z=1, h=w=p=q=56, r=s=3,
//        pad_h=pad_w=1, x_stride = {56*56*64, 56*56*64, 56*64, 64}, w_stride_k = 576.
#pragma once

#include <tessel/conv/operator.hpp>
#include <tessel/epilogue/activation.hpp>

namespace tessel::kernel {

// The activation applied last in the epilogue (tessel/epilogue/activation.hpp); the host maps the
// convolution's GELU to its tanh form, Activation::gelu_tanh (conv_arguments.hpp, activation_of).
using ConvActivation = Activation;

struct Sm80ConvParams {
  conv::Operator op;                 // tessel/conv/operator.hpp
  // Extents. A 2-D problem has d = t = z = 1, pad_d = 0, stride_d = dilation_d = 1.
  int n, d, h, w, c;                 // activations x [n][d][h][w][c]; c = all channels
  int k;                             // output channels of y (all groups)
  int t, r, s;                       // filter window
  int z, p, q;                       // output extents: y [n][z][p][q][k]
  int pad_d, pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, dilation_h, dilation_w;
  int groups;                        // c % groups == 0 and k % groups == 0; filters w [k][t][r][s][c / groups]
  // Element strides; the channel dimension is contiguous.
  long long x_stride[4];             // of x (and dx): n, d, h, w
  long long y_stride[4];             // of y (and dy): n, z, p, q
  long long w_stride_k;              // between filters (>= t*r*s*c/groups); the taps of one filter are dense
  void const* x;                     // fprop, wgrad: activations x
  void const* filter;                // fprop, dgrad: filters w (not `w`: that name is the width above)
  void const* y;                     // dgrad, wgrad: output gradient dy
  void* out;                         // fprop: y; dgrad: dx (x's shape and strides); wgrad: dw (w's shape, strides)
  void const* residual;              // nullptr or the shape and strides of out: out = act(alpha*acc + beta*residual + bias)
  float const* bias;                 // nullptr or fp32 per output channel of out (fprop: k, dgrad: c); wgrad ignores it
  float alpha, beta;
  ConvActivation activation;
};

}  // namespace tessel::kernel
