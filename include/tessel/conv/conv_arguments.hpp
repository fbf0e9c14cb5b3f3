// tessel/conv/conv_arguments.hpp -- the problem a convolution call describes.
//
// Tensors (channels last, the channel dimension contiguous; a 2-D problem is the 3-D one with
// d = t = z = 1, pad_d = 0, stride_d = dilation_d = 1):
//   x  activations  [n][d][h][w][c]              its own strides between n, d, h and w
//   w  filters      [k][t][r][s][c / groups]     a stride between filters; a filter's taps dense
//   y  outputs      [n][z][p][q][k]              its own strides between n, z, p and q
// with the output extents of conv2d_problem_size.hpp / conv3d_problem_size.hpp (one formula):
//   p = floor((h + 2*pad_h - (dilation_h*(r-1) + 1)) / stride_h) + 1      (z from d, t; q from w, s)
// Channel group g (0 <= g < groups) connects input channels [g*c/groups, (g+1)*c/groups) to output
// channels [g*k/groups, (g+1)*k/groups); groups == c == k is depthwise.
//
// The three passes (cross-correlation, as cuDNN and PyTorch compute it), for output channel kk of
// group g = kk / (k/groups) and input channel cc = g*(c/groups) + ci:
//   fprop  y [n,z,p,q,kk]   = sum_{t,r,s,ci}   x[n, z*sd-pd+t*dd, p*sh-ph+r*dh, q*sw-pw+s*dw, cc] * w[kk,t,r,s,ci]
//   dgrad  dx[n,d,h,w,cc]   = sum_{t,r,s,kk in g} dy[n,z,p,q,kk] * w[kk,t,r,s,ci]
//                             over the (z,p,q) with z*sd-pd+t*dd = d, p*sh-ph+r*dh = h, q*sw-pw+s*dw = w
//   wgrad  dw[kk,t,r,s,ci]  = sum_{n,z,p,q}    dy[n,z,p,q,kk] * x[n, z*sd-pd+t*dd, ..., cc]
// (taps that fall in the padding read 0). Each pass writes its output `out` through an epilogue:
//   out = act(alpha * acc + beta * residual + bias)
// residual optional (null: no term; it has out's shape and strides), bias optional (fp32, one per
// output channel of out: k for fprop, c for dgrad; wgrad takes none), act none, ReLU, GELU (tanh
// form, conv_activation.hpp) or SiLU. alpha = 0 reads neither input, beta = 0 reads no residual.
//
// Which tensor is the output: fprop writes y, dgrad writes dx (x's shape and strides), wgrad
// writes dw (w's shape and strides); `out` points at it and that tensor's own `ptr` is not read.
// The dgrad inputs are dy (in y) and w; the wgrad inputs x and dy (in y).
//
// dtypes: x, w, y, out and residual share one dtype, bf16 or fp16; accumulation is fp32.
// Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/conv/conv3d_problem_size.hpp>
#include <tessel/conv/operator.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/gemm_coord.hpp>
#include <tessel/epilogue/activation.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace tessel {

// The epilogue's activation; GELU is the tanh form (conv_activation.hpp has the formulas).
enum class ConvActivation { none, relu, gelu, silu };

// The shared activation (tessel/epilogue/activation.hpp) a ConvActivation names: its GELU is the
// tanh form, Activation::gelu_tanh. An unknown value maps to itself (conv_validate refuses it).
constexpr Activation activation_of(ConvActivation a) {
  switch (a) {
    case ConvActivation::none: return Activation::none;
    case ConvActivation::relu: return Activation::relu;
    case ConvActivation::gelu: return Activation::gelu_tanh;
    case ConvActivation::silu: return Activation::silu;
  }
  return static_cast<Activation>(static_cast<int>(a));
}

constexpr char const* to_string(ConvActivation a) {
  switch (a) {
    case ConvActivation::none: return "none";
    case ConvActivation::relu: return "relu";
    case ConvActivation::gelu: return "gelu";
    case ConvActivation::silu: return "silu";
  }
  return "?";
}

// Activations or outputs [n][d][h][w][c] (or [n][z][p][q][k]): the pointer and the element
// strides of the four outer dimensions, channels contiguous.
struct ConvTensor {
  void const* ptr = nullptr;
  std::int64_t stride_n = 0, stride_d = 0, stride_h = 0, stride_w = 0;
};

// Filters [k][t][r][s][c / groups]: the pointer and the element stride between filters (at least
// t*r*s*c/groups); the taps of one filter are dense.
struct ConvFilter {
  void const* ptr = nullptr;
  std::int64_t stride_k = 0;
};

// Knobs for the tests and A/B measurements; the defaults are the library's choices.
struct ConvOptions {
  // sm_90a implicit GEMM: a call that is a lean build's case runs that build (GemmOptions::lean_builds;
  // false: the general builds, which every call can run).
  bool lean_builds = true;
  // wgrad: the sum over output pixels in this many slices instead of the library's count (0: the
  // library's; at most kConvMaxWgradSlices, and never more than the sum has k-tiles) -- the sm_90a
  // implicit GEMM's and the sm_80 kernels' K slices, the GEMM's split-K for a 1x1 wgrad that is one
  // GEMM; a strided 1x1 wgrad keeps its own batch of slices. The A/B knob for the slice rules
  // (tessel conv --tune slices=N). Any count gives the same sum up to fp32 rounding; a given
  // count, the same bits every run.
  int wgrad_slices = 0;
};

// The most slices ConvOptions::wgrad_slices may ask for.
inline constexpr int kConvMaxWgradSlices = 4096;

struct ConvArguments {
  conv::Operator op = conv::Operator::kFprop;
  int spatial_dims = 2;                    // 2 (NHWC, KRSC) or 3 (NDHWC, KTRSC)
  std::int64_t n = 1, d = 1, h = 1, w = 1, c = 1;  // activations
  std::int64_t k = 1;                      // output channels (all groups)
  std::int64_t t = 1, r = 1, s = 1;        // filter window
  std::int64_t pad_d = 0, pad_h = 0, pad_w = 0;
  std::int64_t stride_d = 1, stride_h = 1, stride_w = 1;
  std::int64_t dilation_d = 1, dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  DType dtype = DType::bf16;

  ConvTensor x;                            // activations (dx for dgrad: only its strides)
  ConvFilter filter;                       // filters (dw for wgrad: only its stride)
  ConvTensor y;                            // outputs (dy for dgrad and wgrad)
  void* out = nullptr;                     // y (fprop), dx (dgrad) or dw (wgrad)

  float alpha = 1.0f, beta = 0.0f;
  void const* residual = nullptr;          // optional: out's shape, strides and dtype
  float const* bias = nullptr;             // optional: fp32 per output channel of out (not wgrad)
  ConvActivation activation = ConvActivation::none;

  // A registry name (`tessel list`), or nullptr / "auto" for the library's choice.
  char const* kernel = nullptr;

  // Scratch for the calls that take some (conv_workspace_size, tessel/conv/conv.hpp: a wgrad whose
  // reduction is split, a 1x1 GEMM that stages an operand, the padded route's channel-padded
  // copies): nullptr takes it from the library's
  // stream-ordered pool on the call's stream; otherwise `workspace_bytes` bytes the caller owns,
  // 256-byte aligned, at least conv_workspace_size's answer, untouched by other work until the
  // call's stream has passed it.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;

  ConvOptions options;
};

// The output extents (z, p, q) by Conv3dProblemSize's formula (a 2-D problem is the 3-D one with
// d = t = 1), whatever n, c and k are. Throws conv::ProblemSizeError, naming the rule, for extents
// that describe no convolution (conv_validate() turns that into its Status).
struct ConvOutputExtents {
  std::int64_t z = 0, p = 0, q = 0;
};
inline ConvOutputExtents conv_output_extents(ConvArguments const& a) {
  conv::Conv3dProblemSize const ps(1, a.d, a.h, a.w, 1, 1, a.t, a.r, a.s, a.pad_d, a.pad_h, a.pad_w, a.stride_d,
                                   a.stride_h, a.stride_w, a.dilation_d, a.dilation_h, a.dilation_w);
  return {ps.Z, ps.P, ps.Q};
}

// One group's implicit GEMM (implicit_gemm_problem_size.hpp's table with c/groups input and
// k/groups output channels): fprop (n*z*p*q, k/g, t*r*s*c/g), dgrad (n*d*h*w, c/g, k/g*t*r*s),
// wgrad (k/g, t*r*s*c/g, n*z*p*q). Pre: conv_validate(a) passed and groups divide c and k.
inline GemmCoord conv_group_gemm(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  std::int64_t const cg = a.c / a.groups, kg = a.k / a.groups;
  std::int64_t const taps = a.t * a.r * a.s;
  switch (a.op) {
    case conv::Operator::kFprop: return GemmCoord(a.n * e.z * e.p * e.q, kg, taps * cg);
    case conv::Operator::kDgrad: return GemmCoord(a.n * a.d * a.h * a.w, cg, kg * taps);
    case conv::Operator::kWgrad: return GemmCoord(kg, taps * cg, a.n * e.z * e.p * e.q);
  }
  return GemmCoord();
}

// The convolution's FLOPs, 2 per multiply-add of its definition: 2 * n*z*p*q * k * t*r*s * c/groups,
// the same for all three passes (fprop's and wgrad's implicit GEMMs, summed over the groups; dgrad's
// implicit GEMM of n*d*h*w rows would also count the taps that meet no output pixel, 4x as many
// at stride 2). cuDNN's and PyTorch's benchmarks count it so (anchors/README.md).
inline double conv_flops(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  return 2.0 * double(a.n) * double(e.z) * double(e.p) * double(e.q) * double(a.k) * double(a.t * a.r * a.s) *
         double(a.c / a.groups);
}

// Which of the three tensors: x [n][d][h][w][c], the filters [k][t][r][s][c/groups], y [n][z][p][q][k].
enum class ConvOperand { x, filter, y };

// The elements a buffer for that tensor must hold under a's strides: the offset of its last
// element + 1 (0 when it is empty). Pre: conv_validate(a) passed.
inline std::int64_t conv_tensor_span(ConvArguments const& a, ConvOperand which) {
  ConvOutputExtents const e = conv_output_extents(a);
  if (which == ConvOperand::filter) {
    std::int64_t const per = a.t * a.r * a.s * (a.c / a.groups);
    return a.k == 0 || per == 0 ? 0 : (a.k - 1) * a.filter.stride_k + per;
  }
  bool const is_x = which == ConvOperand::x;
  ConvTensor const& t = is_x ? a.x : a.y;
  std::int64_t const ext[4] = {a.n, is_x ? a.d : e.z, is_x ? a.h : e.p, is_x ? a.w : e.q};
  std::int64_t const ch = is_x ? a.c : a.k;
  if (ch == 0 || ext[0] == 0) return 0;
  return (ext[0] - 1) * t.stride_n + (ext[1] - 1) * t.stride_d + (ext[2] - 1) * t.stride_h + (ext[3] - 1) * t.stride_w +
         ch;
}

// The tensor the pass writes: y (fprop), x (dgrad: dx), the filters (wgrad: dw).
constexpr ConvOperand conv_output_operand(conv::Operator op) {
  return op == conv::Operator::kFprop ? ConvOperand::y : op == conv::Operator::kDgrad ? ConvOperand::x : ConvOperand::filter;
}

// A packed 3-D problem: x [n][d][h][w][c], w [k][t][r][s][c/groups], y [n][z][p][q][k] contiguous,
// with pad, stride and dilation as {d, h, w}. Pointers unset. Extents that describe no convolution
// (conv_validate refuses them) leave y's strides as if z, p and q were 1.
inline ConvArguments make_packed_conv3d(conv::Operator op, std::int64_t n, std::int64_t d, std::int64_t h,
                                        std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t t,
                                        std::int64_t r, std::int64_t s, std::array<std::int64_t, 3> pad = {0, 0, 0},
                                        std::array<std::int64_t, 3> stride = {1, 1, 1},
                                        std::array<std::int64_t, 3> dilation = {1, 1, 1}, std::int64_t groups = 1,
                                        DType dtype = DType::bf16) {
  ConvArguments a;
  a.op = op, a.spatial_dims = 3;
  a.n = n, a.d = d, a.h = h, a.w = w, a.c = c, a.k = k, a.t = t, a.r = r, a.s = s;
  a.pad_d = pad[0], a.pad_h = pad[1], a.pad_w = pad[2];
  a.stride_d = stride[0], a.stride_h = stride[1], a.stride_w = stride[2];
  a.dilation_d = dilation[0], a.dilation_h = dilation[1], a.dilation_w = dilation[2];
  a.groups = groups, a.dtype = dtype;
  ConvOutputExtents e{1, 1, 1};
  try {
    e = conv_output_extents(a);
  } catch (conv::ProblemSizeError const&) {
  }
  a.x.stride_w = c, a.x.stride_h = w * c, a.x.stride_d = h * w * c, a.x.stride_n = d * h * w * c;
  a.y.stride_w = k, a.y.stride_h = e.q * k, a.y.stride_d = e.p * e.q * k, a.y.stride_n = e.z * e.p * e.q * k;
  a.filter.stride_k = t * r * s * (groups >= 1 ? c / groups : c);
  return a;
}

// A packed 2-D problem: x [n][h][w][c], w [k][r][s][c/groups], y [n][p][q][k] contiguous, with
// pad, stride and dilation as {h, w}. Pointers unset.
//   e.g.  make_packed_conv2d(conv::Operator::kFprop, 128, 56, 56, 64, 64, 3, 3, {1, 1}): y is
//         [128][56][56][64], y.stride_n == 56*56*64
inline ConvArguments make_packed_conv2d(conv::Operator op, std::int64_t n, std::int64_t h, std::int64_t w,
                                        std::int64_t c, std::int64_t k, std::int64_t r, std::int64_t s,
                                        std::array<std::int64_t, 2> pad = {0, 0},
                                        std::array<std::int64_t, 2> stride = {1, 1},
                                        std::array<std::int64_t, 2> dilation = {1, 1}, std::int64_t groups = 1,
                                        DType dtype = DType::bf16) {
  ConvArguments a = make_packed_conv3d(op, n, 1, h, w, c, k, 1, r, s, {0, pad[0], pad[1]}, {1, stride[0], stride[1]},
                                       {1, dilation[0], dilation[1]}, groups, dtype);
  a.spatial_dims = 2;
  return a;
}

}  // namespace tessel
