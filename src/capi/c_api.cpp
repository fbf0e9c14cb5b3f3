// src/capi/c_api.cpp -- the C ABI (tessel/c_api.h): problem mapping, then the host API; no
// exception crosses it.
#include <tessel/c_api.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/conv/conv.hpp>
#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/grouped_gemm.hpp>

#include "attention_problem.hpp"
#include "status_reason.hpp"
#include "conv_problem.hpp"
#include "gemm_problem.hpp"
#include "grouped_gemm_problem.hpp"

namespace {

using tessel::capi::Refusal;
using tessel::capi::from_status;
using tessel::capi::guarded;
using tessel::capi::write_reason;

tessel_status map_problem(tessel_gemm_problem const* p, tessel::GemmArguments* g, char* reason, std::size_t size) {
  if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, size);
  Refusal const r = tessel::capi::gemm_arguments_from_problem(*p, g);
  return write_reason(r.code, r.reason, reason, size);
}

tessel_status map_problem(tessel_grouped_gemm_problem const* p, tessel::GroupedGemmArguments* g, char* reason,
                          std::size_t size) {
  if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, size);
  Refusal const r = tessel::capi::grouped_gemm_arguments_from_problem(*p, g);
  return write_reason(r.code, r.reason, reason, size);
}

tessel_status map_problem(tessel_attention_problem const* p, tessel::AttentionArguments* a, char* reason,
                          std::size_t size) {
  if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, size);
  Refusal const r = tessel::capi::attention_arguments_from_problem(*p, a);
  return write_reason(r.code, r.reason, reason, size);
}

tessel_status map_problem(tessel_attention_backward_problem const* p, tessel::AttentionBackwardArguments* a,
                          char* reason, std::size_t size) {
  if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, size);
  Refusal const r = tessel::capi::attention_backward_arguments_from_problem(*p, a);
  return write_reason(r.code, r.reason, reason, size);
}

tessel_status map_problem(tessel_conv_problem const* p, tessel::ConvArguments* a, char* reason, std::size_t size) {
  if (p == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "problem: NULL", reason, size);
  Refusal const r = tessel::capi::conv_arguments_from_problem(*p, a);
  return write_reason(r.code, r.reason, reason, size);
}

}  // namespace

extern "C" {

int tessel_c_api_version(void) { return TESSEL_C_API_VERSION; }

char const* tessel_status_string(tessel_status status) {
  switch (status) {
    case TESSEL_STATUS_SUCCESS:
      return "success";
    case TESSEL_STATUS_INVALID_ARGUMENT:
      return "invalid argument";
    case TESSEL_STATUS_INVALID_DTYPE:
      return "invalid dtype";
    case TESSEL_STATUS_NOT_SUPPORTED:
      return "not supported";
    case TESSEL_STATUS_ARCH_MISMATCH:
      return "architecture mismatch";
    case TESSEL_STATUS_NO_DEVICE:
      return "no device";
    case TESSEL_STATUS_CUDA_ERROR:
      return "CUDA error";
    case TESSEL_STATUS_INTERNAL_ERROR:
      return "internal error";
  }
  return "unknown status";
}

void tessel_gemm_problem_init(tessel_gemm_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  p->alpha = 1.0f, p->beta = 0.0f;
  p->a_scale = 1.0f, p->b_scale = 1.0f;
}

void tessel_tensor_set(tessel_tensor* t, void* data, tessel_dtype dtype, int32_t ndim, int64_t const* shape,
                       int64_t const* strides) {
  if (t == nullptr) return;
  std::memset(t, 0, sizeof *t);
  t->data = data;
  t->dtype = dtype;
  if (ndim < 0 || ndim > TESSEL_MAX_DIMS || (ndim > 0 && shape == nullptr)) {
    t->ndim = -1;
    return;
  }
  t->ndim = ndim;
  std::int64_t packed = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    t->shape[i] = shape[i];
    t->strides[i] = strides != nullptr ? strides[i] : packed;
    packed *= std::max<std::int64_t>(1, shape[i]);
  }
}

tessel_status tessel_gemm_check(tessel_gemm_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_gemm_check", reason, reason_size, [&] {
    tessel::GemmArguments g;
    return map_problem(p, &g, reason, reason_size);
  });
}

tessel_status tessel_gemm_can_implement(tessel_gemm_problem const* p, char const** kernel_name, char* reason,
                                        size_t reason_size) {
  if (kernel_name != nullptr) *kernel_name = nullptr;
  return guarded("tessel_gemm_can_implement", reason, reason_size, [&] {
    tessel::GemmArguments g;
    if (tessel_status s = map_problem(p, &g, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    tessel::Status const s = tessel::can_implement(g);
    if (s.ok() && kernel_name != nullptr && !tessel::gemm_is_noop(g))
      if (tessel::GemmKernelInfo const* k = tessel::select_gemm_kernel(g)) *kernel_name = k->name;
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_gemm_workspace_size(tessel_gemm_problem const* p, size_t* bytes, char* reason, size_t reason_size) {
  return guarded("tessel_gemm_workspace_size", reason, reason_size, [&] {
    if (bytes == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "bytes: NULL", reason, reason_size);
    *bytes = 0;
    tessel::GemmArguments g;
    if (tessel_status s = map_problem(p, &g, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    std::size_t n = 0;
    tessel::Status const s = tessel::gemm_workspace_size(g, &n);
    if (s.ok()) *bytes = n;
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_gemm(tessel_gemm_problem const* p, cudaStream_t stream, char* reason, size_t reason_size) {
  return guarded("tessel_gemm", reason, reason_size, [&] {
    tessel::GemmArguments g;
    if (tessel_status s = map_problem(p, &g, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::gemm(g, stream), reason, reason_size);
  });
}

void tessel_grouped_gemm_problem_init(tessel_grouped_gemm_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  p->alpha = 1.0f, p->beta = 0.0f;
}

tessel_status tessel_grouped_gemm_check(tessel_grouped_gemm_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_grouped_gemm_check", reason, reason_size, [&] {
    tessel::GroupedGemmArguments g;
    return map_problem(p, &g, reason, reason_size);
  });
}

tessel_status tessel_grouped_gemm_can_implement(tessel_grouped_gemm_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_grouped_gemm_can_implement", reason, reason_size, [&] {
    tessel::GroupedGemmArguments g;
    if (tessel_status s = map_problem(p, &g, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::can_implement(g), reason, reason_size);
  });
}

tessel_status tessel_grouped_gemm(tessel_grouped_gemm_problem const* p, cudaStream_t stream, char* reason,
                                  size_t reason_size) {
  return guarded("tessel_grouped_gemm", reason, reason_size, [&] {
    tessel::GroupedGemmArguments g;
    if (tessel_status s = map_problem(p, &g, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::grouped_gemm(g, stream), reason, reason_size);
  });
}

void tessel_attention_problem_init(tessel_attention_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  p->window_left = -1, p->window_right = -1;
  p->align = TESSEL_MASK_ALIGN_BOTTOM_RIGHT;
}

tessel_status tessel_attention_check(tessel_attention_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_attention_check", reason, reason_size, [&] {
    tessel::AttentionArguments a;
    return map_problem(p, &a, reason, reason_size);
  });
}

tessel_status tessel_attention_can_implement(tessel_attention_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_attention_can_implement", reason, reason_size, [&] {
    tessel::AttentionArguments a;
    if (tessel_status s = map_problem(p, &a, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::can_implement(a), reason, reason_size);
  });
}

tessel_status tessel_attention_forward(tessel_attention_problem const* p, cudaStream_t stream, char* reason,
                                       size_t reason_size) {
  return guarded("tessel_attention_forward", reason, reason_size, [&] {
    tessel::AttentionArguments a;
    if (tessel_status s = map_problem(p, &a, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::attention_forward(a, stream), reason, reason_size);
  });
}

void tessel_attention_backward_problem_init(tessel_attention_backward_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  tessel_attention_problem_init(&p->forward);
}

tessel_status tessel_attention_backward_check(tessel_attention_backward_problem const* p, char* reason,
                                              size_t reason_size) {
  return guarded("tessel_attention_backward_check", reason, reason_size, [&] {
    tessel::AttentionBackwardArguments b;
    return map_problem(p, &b, reason, reason_size);
  });
}

tessel_status tessel_attention_backward_can_implement(tessel_attention_backward_problem const* p, char* reason,
                                                      size_t reason_size) {
  return guarded("tessel_attention_backward_can_implement", reason, reason_size, [&] {
    tessel::AttentionBackwardArguments b;
    if (tessel_status s = map_problem(p, &b, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::can_implement(b), reason, reason_size);
  });
}

tessel_status tessel_attention_backward_workspace_size(tessel_attention_backward_problem const* p, size_t* bytes,
                                                       char* reason, size_t reason_size) {
  return guarded("tessel_attention_backward_workspace_size", reason, reason_size, [&] {
    if (bytes == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "bytes: NULL", reason, reason_size);
    *bytes = 0;
    tessel::AttentionBackwardArguments b;
    if (tessel_status s = map_problem(p, &b, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    std::size_t n = 0;
    tessel::Status const s = tessel::attention_backward_workspace_size(b, &n);
    if (s.ok()) *bytes = n;
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_attention_backward(tessel_attention_backward_problem const* p, cudaStream_t stream, char* reason,
                                        size_t reason_size) {
  return guarded("tessel_attention_backward", reason, reason_size, [&] {
    tessel::AttentionBackwardArguments b;
    if (tessel_status s = map_problem(p, &b, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::attention_backward(b, stream), reason, reason_size);
  });
}

void tessel_conv_problem_init(tessel_conv_problem* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof *p);
  p->op = TESSEL_CONV_FPROP;
  p->stride_d = p->stride_h = p->stride_w = 1;
  p->dilation_d = p->dilation_h = p->dilation_w = 1;
  p->groups = 1;
  p->alpha = 1.0f, p->beta = 0.0f;
  p->activation = TESSEL_ACTIVATION_NONE;
}

tessel_status tessel_conv_check(tessel_conv_problem const* p, char* reason, size_t reason_size) {
  return guarded("tessel_conv_check", reason, reason_size, [&] {
    tessel::ConvArguments a;
    return map_problem(p, &a, reason, reason_size);
  });
}

tessel_status tessel_conv_can_implement(tessel_conv_problem const* p, char const** kernel_name, char* reason,
                                        size_t reason_size) {
  if (kernel_name != nullptr) *kernel_name = nullptr;
  return guarded("tessel_conv_can_implement", reason, reason_size, [&] {
    tessel::ConvArguments a;
    if (tessel_status s = map_problem(p, &a, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    tessel::Status const s = tessel::can_implement(a);
    if (s.ok() && kernel_name != nullptr) {
      char const* name = nullptr;
      if (tessel::Status const n = tessel::conv_kernel_name(a, &name); !n) return from_status(n, reason, reason_size);
      *kernel_name = name;
    }
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_conv_workspace_size(tessel_conv_problem const* p, size_t* bytes, char* reason, size_t reason_size) {
  return guarded("tessel_conv_workspace_size", reason, reason_size, [&] {
    if (bytes == nullptr) return write_reason(TESSEL_STATUS_INVALID_ARGUMENT, "bytes: NULL", reason, reason_size);
    *bytes = 0;
    tessel::ConvArguments a;
    if (tessel_status s = map_problem(p, &a, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    std::size_t n = 0;
    tessel::Status const s = tessel::conv_workspace_size(a, &n);
    if (s.ok()) *bytes = n;
    return from_status(s, reason, reason_size);
  });
}

tessel_status tessel_conv(tessel_conv_problem const* p, cudaStream_t stream, char* reason, size_t reason_size) {
  return guarded("tessel_conv", reason, reason_size, [&] {
    tessel::ConvArguments a;
    if (tessel_status s = map_problem(p, &a, reason, reason_size); s != TESSEL_STATUS_SUCCESS) return s;
    return from_status(tessel::convolution(a, stream), reason, reason_size);
  });
}

}  // extern "C"
