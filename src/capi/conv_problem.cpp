// src/capi/conv_problem.cpp -- a C ABI convolution problem as ConvArguments (conv_problem.hpp).
#include "conv_problem.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <tessel/conv/conv.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>

namespace tessel::capi {

namespace {

bool known_kernel(char const* name) {
  std::string_view const n = name;
  constexpr std::string_view gemm_prefix = "gemm:";
  if (n.substr(0, gemm_prefix.size()) == gemm_prefix) return find_gemm_kernel(n.substr(gemm_prefix.size())) != nullptr;
  for (int i = 0; i < conv_kernel_count(); ++i)
    if (std::string_view(conv_kernel_info(i).name) == n) return true;
  return false;
}

}  // namespace

Refusal conv_arguments_from_problem(tessel_conv_problem const& p, ConvArguments* out) {
  Named const x = named(p.x, "x", "x"), w = named(p.w, "filter", "w"), y = named(p.y, "y", "y");
  Named const res = named(p.residual, "residual", "residual"), bias = named(p.bias, "bias", "bias");
  Named const* const operands[] = {&x, &w, &y};
  Named const* const all[] = {&x, &w, &y, &res, &bias};

  // Presence, ranks and the pass.
  for (Named const* t : all)
    if (t->t->ndim < 0 || t->t->ndim > TESSEL_MAX_DIMS)
      return invalid(t->name + ": ndim " + num(t->t->ndim) + " is outside 0.." + num(TESSEL_MAX_DIMS));
  if (p.op != TESSEL_CONV_FPROP && p.op != TESSEL_CONV_DGRAD && p.op != TESSEL_CONV_WGRAD)
    return invalid("op: " + num(p.op) + " is not a tessel_conv_op (0 fprop, 1 dgrad, 2 wgrad)");
  for (Named const* t : operands)
    if (!t->present())
      return invalid(t->name + ": missing (ndim 0); a convolution needs " + x.name + ", " + w.name + " and " + y.name +
                     " (the pass writes one of them)");
  int const rank = p.x.ndim;
  if (rank != 4 && rank != 5)
    return invalid(x.name + ": has " + num(rank) + (rank == 1 ? " dimension" : " dimensions") +
                   "; convolution activations are 4-D [N, H, W, C] (2-D) or 5-D [N, D, H, W, C] (3-D)");
  bool const three_d = rank == 5;
  if (p.w.ndim != rank)
    return invalid(w.name + ": has " + num(p.w.ndim) + " dimensions, but " + x.name + " has " + num(rank) + "; a " +
                   (three_d ? "3-D convolution's filters are 5-D [K, T, R, S, C/groups]"
                            : "2-D convolution's filters are 4-D [K, R, S, C/groups]"));
  if (p.y.ndim != rank)
    return invalid(y.name + ": has " + num(p.y.ndim) + " dimensions, but " + x.name + " has " + num(rank) + "; a " +
                   (three_d ? "3-D convolution's outputs are 5-D [N, Z, P, Q, K]"
                            : "2-D convolution's outputs are 4-D [N, P, Q, K]"));
  Named const& written = p.op == TESSEL_CONV_FPROP ? y : p.op == TESSEL_CONV_DGRAD ? x : w;
  if (res.present() && p.residual.ndim != rank)
    return invalid(res.name + ": has " + num(p.residual.ndim) + " dimensions; the residual has " + written.name +
                   "'s shape " + written.shape_text());
  if (bias.present() && p.bias.ndim != 1)
    return invalid(bias.name + ": has " + num(p.bias.ndim) + " dimensions; the bias is 1-D, one fp32 per output channel");
  for (Named const* t : all)
    for (int i = 0; i < t->t->ndim; ++i)
      if (t->t->shape[i] < 0)
        return invalid(t->name + ": extent " + num(t->t->shape[i]) + " of dimension " + num(i) + " is negative");

  // Dtypes.
  for (Named const* t : all)
    if (t->present() && !is_tessel_dtype(t->t->dtype))
      return refuse(TESSEL_STATUS_INVALID_DTYPE, t->name + ": dtype " + num(t->t->dtype) + " is not a tessel_dtype");
  if (p.x.dtype != TESSEL_DTYPE_F16 && p.x.dtype != TESSEL_DTYPE_BF16)
    return refuse(TESSEL_STATUS_INVALID_DTYPE,
                  x.name + ": " + dtype_text(p.x.dtype) + " is not supported; convolution takes fp16 and bf16");
  for (Named const* t : {&w, &y, &res})
    if (t->present() && t->t->dtype != p.x.dtype)
      return refuse(TESSEL_STATUS_INVALID_DTYPE, t->name + ": " + dtype_text(t->t->dtype) + " differs from " + x.name +
                                                     "'s " + dtype_text(p.x.dtype) + "; " + x.name + ", " + w.name +
                                                     ", " + y.name + " and the residual share one dtype");
  if (bias.present() && p.bias.dtype != TESSEL_DTYPE_F32)
    return refuse(TESSEL_STATUS_INVALID_DTYPE,
                  bias.name + ": " + dtype_text(p.bias.dtype) + " is not fp32; the bias is fp32");

  // Shapes: x [N, (D,) H, W, C], w [K, (T,) R, S, C/groups], y [N, (Z,) P, Q, K].
  int const c_dim = rank - 1;
  std::int64_t const* X = p.x.shape;
  std::int64_t const* W = p.w.shape;
  std::int64_t const* Y = p.y.shape;
  if (Y[0] != X[0]) return invalid(y.name + ": batch " + num(Y[0]) + " differs from " + x.name + "'s " + num(X[0]));
  if (Y[c_dim] != W[0])
    return invalid(y.name + ": has " + num(Y[c_dim]) + " channels, but " + w.name + " has " + num(W[0]) +
                   " filters; the output channels are the K filters");
  if (p.groups >= 1 && X[c_dim] % p.groups == 0 && W[c_dim] * p.groups != X[c_dim])
    return invalid(w.name + ": has " + num(W[c_dim]) + " channels per filter, but " + x.name + " has " + num(X[c_dim]) +
                   " channels in " + num(p.groups) + (p.groups == 1 ? " group" : " groups") +
                   " (" + w.name + " is [K, " + (three_d ? "T, " : "") + "R, S, C/groups])");

  ConvArguments a;
  a.op = p.op == TESSEL_CONV_FPROP ? conv::Operator::kFprop
         : p.op == TESSEL_CONV_DGRAD ? conv::Operator::kDgrad
                                     : conv::Operator::kWgrad;
  a.spatial_dims = three_d ? 3 : 2;
  int const sp = three_d ? 1 : 0;  // the first of H, W (x) or R, S (w) is dimension 1 + sp
  a.n = X[0], a.d = three_d ? X[1] : 1, a.h = X[1 + sp], a.w = X[2 + sp], a.c = X[c_dim];
  a.k = W[0], a.t = three_d ? W[1] : 1, a.r = W[1 + sp], a.s = W[2 + sp];
  a.pad_d = p.pad_d, a.pad_h = p.pad_h, a.pad_w = p.pad_w;
  a.stride_d = p.stride_d, a.stride_h = p.stride_h, a.stride_w = p.stride_w;
  a.dilation_d = p.dilation_d, a.dilation_h = p.dilation_h, a.dilation_w = p.dilation_w;
  a.groups = p.groups;

  // y's extents, where the sizes and steps describe a convolution (else conv_validate refuses them
  // below, with the argument's name).
  bool const steps_valid = a.d >= 1 && a.h >= 1 && a.w >= 1 && a.t >= 1 && a.r >= 1 && a.s >= 1 && a.pad_d >= 0 &&
                           a.pad_h >= 0 && a.pad_w >= 0 && a.stride_d >= 1 && a.stride_h >= 1 && a.stride_w >= 1 &&
                           a.dilation_d >= 1 && a.dilation_h >= 1 && a.dilation_w >= 1;
  bool const in_range = a.d <= kConvMaxExtent && a.h <= kConvMaxExtent && a.w <= kConvMaxExtent &&
                        a.t <= kConvMaxExtent && a.r <= kConvMaxExtent && a.s <= kConvMaxExtent &&
                        a.pad_d <= kConvMaxExtent && a.pad_h <= kConvMaxExtent && a.pad_w <= kConvMaxExtent &&
                        a.dilation_d <= kConvMaxExtent && a.dilation_h <= kConvMaxExtent &&
                        a.dilation_w <= kConvMaxExtent;
  if (steps_valid && in_range && (!three_d ? a.pad_d == 0 && a.stride_d == 1 && a.dilation_d == 1 : true)) {
    bool extents_known = true;
    ConvOutputExtents e;
    try {
      e = conv_output_extents(a);
    } catch (conv::ProblemSizeError const&) {
      extents_known = false;
    }
    if (extents_known) {
      std::int64_t want[5] = {};
      int i = 0;
      want[i++] = a.n;
      if (three_d) want[i++] = e.z;
      want[i++] = e.p, want[i++] = e.q, want[i++] = a.k;
      for (int j = 0; j < rank; ++j)
        if (Y[j] != want[j])
          return invalid(y.name + ": shape " + y.shape_text() + " is not " + tuple_text(want, rank) +
                         (three_d ? ", [N, Z, P, Q, K] from " : ", [N, P, Q, K] from ") + x.name + ", " + w.name +
                         " and the padding, strides and dilation");
    }
  }
  if (res.present())
    for (int i = 0; i < rank; ++i)
      if (p.residual.shape[i] != written.t->shape[i])
        return invalid(res.name + ": shape " + res.shape_text() + " is not " + written.name + "'s " +
                       written.shape_text() + "; the residual has the written tensor's shape");
  if (bias.present() && a.op != conv::Operator::kWgrad) {  // wgrad's bias: conv_validate refuses it
    std::int64_t const want = a.op == conv::Operator::kFprop ? a.k : a.c;
    if (p.bias.shape[0] != want)
      return invalid(bias.name + ": has " + num(p.bias.shape[0]) + " values, but " + written.name + " has " + num(want) +
                     " channels; the bias holds one fp32 per output channel");
  }

  // Strides: the channels contiguous; the taps of a filter dense; the residual laid out as the
  // written tensor. A tensor without elements forms no address: its strides do not count.
  for (Named const* t : all) {
    if (!t->present() || t->elements() == 0) continue;
    int const last = t->t->ndim - 1;
    if (t->t->shape[last] > 1 && t->t->strides[last] != 1) {
      if (t == &bias)
        return invalid(t->name + ": stride " + num(t->t->strides[last]) + "; the bias must be contiguous (stride 1)");
      return invalid(t->name + ": the channel dimension's stride is " + num(t->t->strides[last]) + t->view_text() +
                     "; tessel reads channels contiguous (stride 1): pass a channels-last array (a torch tensor in "
                     "channels_last memory format, permuted to channels last, is one)");
    }
  }
  if (w.elements() > 0) {
    std::int64_t packed = 1;
    for (int i = rank - 1; i >= 1; --i) {
      if (W[i] > 1 && p.w.strides[i] != packed)
        return invalid(w.name + ": the taps of a filter are not dense" + w.view_text() + "; " + w.name + " is [K, " +
                       (three_d ? "T, " : "") + "R, S, C/groups] with each filter's " + (three_d ? "T*" : "") +
                       "R*S*C/groups values packed (a torch weight in channels_last memory format, permuted to "
                       "channels last, is)");
      packed *= W[i];
    }
  }
  if (res.present() && res.elements() > 0)
    for (int i = 0; i < rank; ++i)
      if (p.residual.shape[i] > 1 && p.residual.strides[i] != written.t->strides[i])
        return invalid(res.name + ": strides " + tuple_text(p.residual.strides, rank) + " differ from " + written.name +
                       "'s " + tuple_text(written.t->strides, rank) +
                       "; the residual is read with the written tensor's strides");

  // Pointers the host API cannot tell from "not given".
  for (Named const* t : {&res, &bias})
    if (t->present() && t->elements() > 0 && t->t->data == nullptr)
      return invalid(t->name + ": data is NULL, but it has " + num(t->elements()) + " elements; give " + t->name +
                     " ndim 0 for none");
  if (p.activation == TESSEL_ACTIVATION_GELU_ERF)
    return invalid("activation: 4 (GELU_ERF) is not a convolution's activation (0 none, 1 relu, 2 gelu: the tanh "
                   "form, 3 silu)");
  if (p.activation < TESSEL_ACTIVATION_NONE || p.activation > TESSEL_ACTIVATION_SILU)
    return invalid("activation: " + num(p.activation) + " is not a tessel_activation (0 none, 1 relu, 2 gelu, 3 silu)");
  if (p.kernel != nullptr && std::string_view(p.kernel) != "auto" && !known_kernel(p.kernel))
    return invalid(std::string("kernel: '") + p.kernel + "' is not a compiled convolution kernel (`tessel list` shows them)");

  a.dtype = *element_type(p.x.dtype);
  auto const activations = [&](tessel_tensor const& t) {
    ConvTensor c;
    c.ptr = t.data;
    c.stride_n = stride_of(t, 0);
    c.stride_d = three_d ? stride_of(t, 1) : 0;
    c.stride_h = stride_of(t, 1 + sp);
    c.stride_w = stride_of(t, 2 + sp);
    return c;
  };
  a.x = activations(p.x);
  a.y = activations(p.y);
  a.filter.ptr = p.w.data;
  a.filter.stride_k = stride_of(p.w, 0);
  a.out = written.t->data;
  a.alpha = p.alpha, a.beta = p.beta;
  a.residual = res.present() ? p.residual.data : nullptr;
  a.bias = bias.present() ? static_cast<float const*>(p.bias.data) : nullptr;
  a.activation = static_cast<ConvActivation>(p.activation);
  a.kernel = p.kernel;
  a.workspace = p.workspace, a.workspace_bytes = p.workspace_bytes;

  if (Status s = conv_validate(a); !s) {
    tessel_status const code = s.code == StatusCode::not_supported ? TESSEL_STATUS_NOT_SUPPORTED
                               : s.reason.rfind("dtype:", 0) == 0  ? TESSEL_STATUS_INVALID_DTYPE
                                                                   : TESSEL_STATUS_INVALID_ARGUMENT;
    // "out" (the written tensor) before "x"/"y"/"filter": conv_validate names it "out".
    Named const out_named{written.t, "out", written.name};
    Named const* const names[] = {&out_named, &x, &w, &y, &res, &bias};
    return refuse(code, with_callers_names(s.reason, names, 6));
  }
  *out = a;
  return {};
}

}  // namespace tessel::capi
