// tessel/conv/conv_validate.hpp -- the argument rules of the convolution host API.
//
// Like the GEMM API (DESIGN.md section 7): a batch n = 0, or c = 0 or k = 0 channels, is accepted.
// When out is empty (fprop: n or k is 0; dgrad: n or c; wgrad: k or c) the call touches no memory;
// when the sum is empty (fprop: c = 0; dgrad: k = 0; wgrad: n = 0) or alpha = 0, out =
// act(beta * residual + bias) and neither input is read. Rejected, each with a reason that starts
// with the argument's name and states the rule:
//   invalid_argument
//     op or activation not an enumerator; spatial_dims not 2 or 3; a 2-D problem with d, t != 1,
//     pad_d != 0 or stride_d, dilation_d != 1; n, c or k negative; an image or filter extent
//     (d, h, w, t, r, s) below 1; a negative padding; a stride or dilation below 1; groups below 1;
//     c or k not divisible by groups; a dilated filter larger than the padded input (an empty
//     output, by conv3d_problem_size.hpp's formula); a dtype other than bf16 or fp16; a
//     non-finite alpha or beta; beta != 0 with no residual; a bias for wgrad; a negative stride;
//     strides under which two elements of x, y or the filters overlap (the filters: stride_k below
//     t*r*s*c/groups); a pointer not aligned to its element (2 bytes; bias 4); a null input that is
//     read, a null out that is written; an element offset (or its byte offset) above 2^63; a
//     workspace not 256-byte aligned.
//   not_supported
//     an extent, padding, stride, dilation or groups above 2^31 - 1, or an implicit-GEMM extent
//     (conv_group_gemm) above it: the kernels index them with 32-bit integers.
// A dimension of extent 1 may have any (non-negative) stride. Plain C++ and no CUDA calls, so a
// bad call is refused on any machine, GPU or not.
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/problem_size_error.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessel {

// The largest extent, and implicit-GEMM extent, the kernels index (32-bit signed integers).
inline constexpr std::int64_t kConvMaxExtent = 0x7fffffffLL;

// True when out has no element (fprop: n or k is 0; dgrad: n or c; wgrad: k or c).
constexpr bool conv_output_is_empty(ConvArguments const& a) {
  switch (a.op) {
    case conv::Operator::kFprop: return a.n == 0 || a.k == 0;
    case conv::Operator::kDgrad: return a.n == 0 || a.c == 0;
    case conv::Operator::kWgrad: return a.k == 0 || a.c == 0;
  }
  return true;
}

// True when each output element's sum has no term (fprop: c = 0; dgrad: k = 0; wgrad: n = 0).
constexpr bool conv_sum_is_empty(ConvArguments const& a) {
  switch (a.op) {
    case conv::Operator::kFprop: return a.c == 0;
    case conv::Operator::kDgrad: return a.k == 0;
    case conv::Operator::kWgrad: return a.n == 0;
  }
  return true;
}

// True when the inputs are read: out has elements, their sums terms, and alpha != 0.
constexpr bool conv_reads_inputs(ConvArguments const& a) {
  return !conv_output_is_empty(a) && !conv_sum_is_empty(a) && a.alpha != 0.0f;
}

// The names the passes give their tensors: {output, first input, second input}.
struct ConvRoles {
  char const* out;      // "y", "dx", "dw"
  char const* in_a;     // the argument of the first input ("x" or "y")
  char const* in_b;     // the second ("filter" or "y")
};
constexpr ConvRoles conv_roles(conv::Operator op) {
  switch (op) {
    case conv::Operator::kFprop: return {"y", "x", "filter"};
    case conv::Operator::kDgrad: return {"dx", "y", "filter"};
    case conv::Operator::kWgrad: return {"dw", "x", "y"};
  }
  return {"?", "?", "?"};
}

namespace detail {

inline Status conv_invalid(std::string why) { return Status::error(StatusCode::invalid_argument, std::move(why)); }
inline std::string conv_num(std::int64_t v) { return std::to_string(v); }
inline std::string conv_num(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

// One of x or y: [n][d][h][w][ch] with the channels contiguous. Refuses a negative stride, and
// strides under which two elements overlap: ordered by stride, every dimension of extent > 1 must
// step past everything the smaller-strided ones (and the channels) span. Also the 64-bit offset
// of the last element. Nothing to check when the tensor is empty.
inline Status conv_check_tensor(char const* name, ConvTensor const& t, std::int64_t const (&extent)[4], std::int64_t ch,
                                std::size_t elem_bytes) {
  struct Dim {
    char const* field;
    char const* extent_name;
    std::int64_t extent, stride;
  };
  // Innermost first, so that of two equal strides the outer dimension is named.
  Dim dims[4] = {{"stride_w", "w", extent[3], t.stride_w},
                 {"stride_h", "h", extent[2], t.stride_h},
                 {"stride_d", "d", extent[1], t.stride_d},
                 {"stride_n", "n", extent[0], t.stride_n}};
  for (Dim const& d : dims)
    if (d.stride < 0)
      return conv_invalid(std::string(name) + "." + d.field + ": " + conv_num(d.stride) + " is negative; strides must be >= 0");
  if (ch == 0 || extent[0] == 0 || extent[1] == 0 || extent[2] == 0 || extent[3] == 0) return Status::success();
  std::stable_sort(dims, dims + 4, [](Dim const& a, Dim const& b) { return a.stride < b.stride; });
  std::int64_t span = ch;  // elements covered by the channels and the dimensions checked so far
  std::string inside = "c";
  for (Dim const& d : dims) {
    if (d.extent == 1) continue;
    if (d.stride < span)
      return conv_invalid(std::string(name) + "." + d.field + ": " + conv_num(d.stride) + " is below " + conv_num(span) +
                          ", the elements that " + inside + " span; elements of " + name + " must not overlap");
    std::int64_t step = 0;
    if (__builtin_mul_overflow(d.extent - 1, d.stride, &step) || __builtin_add_overflow(span, step, &span))
      return conv_invalid(std::string(name) + ": the offset of its last element overflows 64 bits");
    inside += std::string(", ") + d.extent_name;
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(span, std::int64_t(elem_bytes), &bytes))
    return conv_invalid(std::string(name) + ": the byte offset of its last element overflows 64 bits");
  return Status::success();
}

inline Status conv_check_aligned(char const* name, void const* p, std::size_t bytes, char const* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0)
    return conv_invalid(std::string(name) + ": the pointer is not " + std::to_string(bytes) + "-byte aligned (" + what +
                        " elements)");
  return Status::success();
}

// The extents and steps of one spatial dimension.
struct ConvSpatial {
  char const *in, *filter, *out, *pad_name, *stride_name, *dilation_name;
  std::int64_t in_extent, filter_extent, pad, stride, dilation;
};

}  // namespace detail

// Every argument rule of the convolution host API (see the file comment). No CUDA calls.
inline Status conv_validate(ConvArguments const& a) {
  using detail::conv_invalid;
  using detail::conv_num;
  if (a.op != conv::Operator::kFprop && a.op != conv::Operator::kDgrad && a.op != conv::Operator::kWgrad)
    return conv_invalid("op: " + conv_num(std::int64_t(a.op)) + " is not one of kFprop, kDgrad, kWgrad");
  if (a.spatial_dims != 2 && a.spatial_dims != 3)
    return conv_invalid("spatial_dims: " + conv_num(std::int64_t(a.spatial_dims)) + " is not 2 (NHWC) or 3 (NDHWC)");
  if (a.spatial_dims == 2) {
    struct Fixed {
      char const* name;
      std::int64_t v, want;
    };
    for (Fixed f : {Fixed{"d", a.d, 1}, Fixed{"t", a.t, 1}, Fixed{"pad_d", a.pad_d, 0}, Fixed{"stride_d", a.stride_d, 1},
                    Fixed{"dilation_d", a.dilation_d, 1}})
      if (f.v != f.want)
        return conv_invalid(std::string(f.name) + ": " + conv_num(f.v) + " in a 2-D problem, which has d = t = 1, pad_d = 0 "
                            "and stride_d = dilation_d = 1 (set spatial_dims = 3 for a 3-D one)");
  }

  struct Size {
    char const* name;
    std::int64_t v;
  };
  for (Size s : {Size{"n", a.n}, Size{"c", a.c}, Size{"k", a.k}})
    if (s.v < 0) return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) + " is negative; sizes must be >= 0");
  for (Size s : {Size{"d", a.d}, Size{"h", a.h}, Size{"w", a.w}})
    if (s.v < 1)
      return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) +
                          " must be >= 1 (an image has at least one pixel; n = 0 is the empty batch)");
  for (Size s : {Size{"t", a.t}, Size{"r", a.r}, Size{"s", a.s}})
    if (s.v < 1) return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) + " must be >= 1 (a filter has at least one tap)");
  for (Size s : {Size{"pad_d", a.pad_d}, Size{"pad_h", a.pad_h}, Size{"pad_w", a.pad_w}})
    if (s.v < 0) return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) + " is negative; padding must be >= 0");
  for (Size s : {Size{"stride_d", a.stride_d}, Size{"stride_h", a.stride_h}, Size{"stride_w", a.stride_w}})
    if (s.v < 1) return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) + " must be >= 1");
  for (Size s : {Size{"dilation_d", a.dilation_d}, Size{"dilation_h", a.dilation_h}, Size{"dilation_w", a.dilation_w}})
    if (s.v < 1) return conv_invalid(std::string(s.name) + ": " + conv_num(s.v) + " must be >= 1 (1 means no dilation)");
  if (a.groups < 1) return conv_invalid("groups: " + conv_num(a.groups) + " must be >= 1 (1: an ordinary convolution)");

  // The kernels' 32-bit indices; checked before any product of extents is formed.
  for (Size s : {Size{"n", a.n}, Size{"d", a.d}, Size{"h", a.h}, Size{"w", a.w}, Size{"c", a.c}, Size{"k", a.k},
                 Size{"t", a.t}, Size{"r", a.r}, Size{"s", a.s}, Size{"pad_d", a.pad_d}, Size{"pad_h", a.pad_h},
                 Size{"pad_w", a.pad_w}, Size{"stride_d", a.stride_d}, Size{"stride_h", a.stride_h},
                 Size{"stride_w", a.stride_w}, Size{"dilation_d", a.dilation_d}, Size{"dilation_h", a.dilation_h},
                 Size{"dilation_w", a.dilation_w}, Size{"groups", a.groups}})
    if (s.v > kConvMaxExtent)
      return Status::error(StatusCode::not_supported, std::string(s.name) + ": " + conv_num(s.v) +
                                                          " is above 2^31 - 1, the largest the kernels index");

  if (a.c % a.groups != 0)
    return conv_invalid("c: " + conv_num(a.c) + " is not divisible by groups " + conv_num(a.groups) +
                        "; each group takes c/groups input channels");
  if (a.k % a.groups != 0)
    return conv_invalid("k: " + conv_num(a.k) + " is not divisible by groups " + conv_num(a.groups) +
                        "; each group makes k/groups output channels");

  // The output extents by conv3d_problem_size.hpp's formula; with the rules above checked, only an
  // empty output can fail, and its message then opens with the filter extent's name.
  detail::ConvSpatial const dims[3] = {
      {"d", "t", "z", "pad_d", "stride_d", "dilation_d", a.d, a.t, a.pad_d, a.stride_d, a.dilation_d},
      {"h", "r", "p", "pad_h", "stride_h", "dilation_h", a.h, a.r, a.pad_h, a.stride_h, a.dilation_h},
      {"w", "s", "q", "pad_w", "stride_w", "dilation_w", a.w, a.s, a.pad_w, a.stride_w, a.dilation_w}};
  for (detail::ConvSpatial const& d : dims) {
    try {
      (void)conv::detail::output_extent(d.filter, d.in, d.filter, d.out, d.in_extent, d.filter_extent, d.pad, d.stride,
                                        d.dilation);
    } catch (conv::ProblemSizeError const& e) {
      return conv_invalid(e.what());
    }
  }
  ConvOutputExtents const e = conv_output_extents(a);

  // The implicit GEMM of one group, in 32-bit extents (products checked for overflow first).
  std::int64_t const cg = a.c / a.groups, kg = a.k / a.groups;
  auto product = [](std::initializer_list<std::int64_t> xs) {
    std::int64_t r = 1;
    for (std::int64_t x : xs)
      if (__builtin_mul_overflow(r, x, &r)) return std::int64_t(-1);
    return r;
  };
  std::int64_t const taps = product({a.t, a.r, a.s});
  std::int64_t const npq = product({a.n, e.z, e.p, e.q}), ndhw = product({a.n, a.d, a.h, a.w});
  // Each names the argument a reason blames first.
  struct Extent {
    char const* arg;
    char const* what;
    std::int64_t v;
  };
  Extent const npq_e{"n", "n*z*p*q", npq}, ndhw_e{"n", "n*d*h*w", ndhw};
  Extent const trsc{"c", "t*r*s*c/groups", product({taps, cg})}, ktrs{"k", "k/groups*t*r*s", product({taps, kg})};
  Extent const gemm[2] = {a.op == conv::Operator::kDgrad ? ndhw_e : npq_e, a.op == conv::Operator::kDgrad ? ktrs : trsc};
  for (Extent const& g : gemm)
    if (g.v < 0 || g.v > kConvMaxExtent)
      return Status::error(StatusCode::not_supported,
                           std::string(g.arg) + ": the implicit GEMM extent " + g.what +
                               (g.v < 0 ? std::string(" overflows 64 bits") : " = " + conv_num(g.v)) +
                               " is above 2^31 - 1, the largest the kernels index");

  if (a.dtype != DType::bf16 && a.dtype != DType::f16)
    return conv_invalid(std::string("dtype: ") + to_string(a.dtype) +
                        " is not supported; x, filter, y, out and residual are bf16 or fp16");
  if (a.activation != ConvActivation::none && a.activation != ConvActivation::relu &&
      a.activation != ConvActivation::gelu && a.activation != ConvActivation::silu)
    return conv_invalid("activation: " + conv_num(std::int64_t(a.activation)) + " is not one of none, relu, gelu, silu");
  if (!std::isfinite(a.alpha)) return conv_invalid("alpha: " + conv_num(a.alpha) + " is not finite");
  if (!std::isfinite(a.beta)) return conv_invalid("beta: " + conv_num(a.beta) + " is not finite");
  if (a.beta != 0.0f && a.residual == nullptr)
    return conv_invalid("beta: " + conv_num(a.beta) + " with no residual; pass residual (out's shape and strides) or beta = 0");
  if (a.op == conv::Operator::kWgrad && a.bias != nullptr)
    return conv_invalid("bias: wgrad takes none (dw = act(alpha * acc + beta * residual)); pass null");
  if (a.options.wgrad_slices < 0 || a.options.wgrad_slices > kConvMaxWgradSlices)
    return conv_invalid("options.wgrad_slices: " + conv_num(std::int64_t(a.options.wgrad_slices)) + " is not in 0.." +
                        conv_num(std::int64_t(kConvMaxWgradSlices)) + " (0: the library's count)");
  if (a.options.wgrad_slices != 0 && a.op != conv::Operator::kWgrad)
    return conv_invalid("options.wgrad_slices: " + conv_num(std::int64_t(a.options.wgrad_slices)) +
                        " on a forward or data-gradient pass; only the weight gradient's sum over pixels is split (0 here)");

  // Strides: x [n][d][h][w][c], y [n][z][p][q][k], filters [k][t*r*s*c/groups].
  std::size_t const eb = size_of(a.dtype);
  std::int64_t const x_extent[4] = {a.n, a.d, a.h, a.w};
  std::int64_t const y_extent[4] = {a.n, e.z, e.p, e.q};
  if (Status s = detail::conv_check_tensor("x", a.x, x_extent, a.c, eb); !s) return s;
  if (Status s = detail::conv_check_tensor("y", a.y, y_extent, a.k, eb); !s) return s;
  std::int64_t const filter_elems = taps * cg;
  if (a.filter.stride_k < 0)
    return conv_invalid("filter.stride_k: " + conv_num(a.filter.stride_k) + " is negative; strides must be >= 0");
  if (a.k > 1 && filter_elems > 0) {
    if (a.filter.stride_k < filter_elems)
      return conv_invalid("filter.stride_k: " + conv_num(a.filter.stride_k) + " is below t*r*s*c/groups = " +
                          conv_num(filter_elems) + ", the elements of one filter; filters must not overlap");
    std::int64_t last = 0, bytes = 0;
    if (__builtin_mul_overflow(a.k - 1, a.filter.stride_k, &last) || __builtin_add_overflow(last, filter_elems, &last) ||
        __builtin_mul_overflow(last, std::int64_t(eb), &bytes))
      return conv_invalid("filter: the byte offset of its last element overflows 64 bits");
  }

  char const* const elem = to_string(a.dtype);
  struct Pointer {
    char const* name;
    void const* p;
  };
  for (Pointer p : {Pointer{"x", a.x.ptr}, Pointer{"filter", a.filter.ptr}, Pointer{"y", a.y.ptr}, Pointer{"out", a.out},
                    Pointer{"residual", a.residual}})
    if (Status s = detail::conv_check_aligned(p.name, p.p, eb, elem); !s) return s;
  if (Status s = detail::conv_check_aligned("bias", a.bias, 4, "fp32"); !s) return s;
  if (reinterpret_cast<std::uintptr_t>(a.workspace) % 256 != 0)
    return conv_invalid("workspace: the caller's scratch must be 256-byte aligned (cudaMalloc's is)");

  ConvRoles const roles = conv_roles(a.op);
  char const* const op_name = conv::to_string(a.op);
  if (conv_reads_inputs(a)) {
    auto pointer_of = [&](std::string const& name) {
      return name == "x" ? a.x.ptr : name == "y" ? a.y.ptr : a.filter.ptr;
    };
    for (char const* in : {roles.in_a, roles.in_b})
      if (pointer_of(in) == nullptr)
        return conv_invalid(std::string(in) + ": null, but " + op_name + " reads it (alpha != 0 and the sums have terms)");
  }
  if (!conv_output_is_empty(a) && a.out == nullptr)
    return conv_invalid(std::string("out: null, but ") + op_name + " writes " + roles.out + " (it has elements)");
  return Status::success();
}

}  // namespace tessel
