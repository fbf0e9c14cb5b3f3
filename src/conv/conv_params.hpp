// src/conv/conv_params.hpp -- the kernels' view of a validated convolution call: Sm80ConvParams
// (tessel/conv/kernel/sm80_conv_params.hpp) from ConvArguments. Used by the host API (conv.cpp)
// and by the host test of the sm_90a picks (tests/host/conv_sm90_pick_test.cpp).
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>

namespace tessel::detail {

// The kernel's view of a validated call. Each pass gets the pointers it reads and no others;
// beta = 0 passes no residual, so the kernel never reads one the call does not use.
inline kernel::Sm80ConvParams make_params(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  kernel::Sm80ConvParams p{};
  p.op = a.op;
  p.n = int(a.n), p.d = int(a.d), p.h = int(a.h), p.w = int(a.w), p.c = int(a.c), p.k = int(a.k);
  p.t = int(a.t), p.r = int(a.r), p.s = int(a.s);
  p.z = int(e.z), p.p = int(e.p), p.q = int(e.q);
  p.pad_d = int(a.pad_d), p.pad_h = int(a.pad_h), p.pad_w = int(a.pad_w);
  p.stride_d = int(a.stride_d), p.stride_h = int(a.stride_h), p.stride_w = int(a.stride_w);
  p.dilation_d = int(a.dilation_d), p.dilation_h = int(a.dilation_h), p.dilation_w = int(a.dilation_w);
  p.groups = int(a.groups);
  long long const xs[4] = {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w};
  long long const ys[4] = {a.y.stride_n, a.y.stride_d, a.y.stride_h, a.y.stride_w};
  for (int i = 0; i < 4; ++i) p.x_stride[i] = xs[i], p.y_stride[i] = ys[i];
  p.w_stride_k = a.filter.stride_k;
  bool const fprop = a.op == conv::Operator::kFprop, dgrad = a.op == conv::Operator::kDgrad;
  p.x = dgrad ? nullptr : a.x.ptr;
  p.filter = fprop || dgrad ? a.filter.ptr : nullptr;
  p.y = fprop ? nullptr : a.y.ptr;
  p.out = a.out;
  p.residual = a.beta != 0.0f ? a.residual : nullptr;
  p.bias = a.op == conv::Operator::kWgrad ? nullptr : a.bias;
  p.alpha = a.alpha, p.beta = a.beta;
  p.activation = activation_of(a.activation);
  return p;
}

}  // namespace tessel::detail
