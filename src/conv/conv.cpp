// src/conv/conv.cpp -- the convolution host API (tessel/conv/conv.hpp): the rules, the three ways a
// call ends (nothing to write, the epilogue alone, a convolution kernel), the architecture check,
// Sm80ConvParams from ConvArguments, and the registry `tessel list` prints.
#include "conv_epilogue_only.hpp"
#include "sm80_conv_launch.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/conv/conv.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>
#include <vector>

namespace tessel {

namespace {

constexpr int kSm80 = 80;
constexpr char const* kNoKernel = "none";                // out is empty: nothing runs
constexpr char const* kEpilogueOnly = "epilogue-only";   // out = act(beta * residual + bias)

// The kernel's view of a validated call. Each pass gets the pointers it reads and no others;
// beta = 0 passes no residual, so the kernel never reads one the call does not use.
kernel::Sm80ConvParams make_params(ConvArguments const& a) {
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
  p.activation = static_cast<kernel::ConvActivation>(static_cast<int>(a.activation));
  return p;
}

bool is_auto(char const* kernel) { return kernel == nullptr || std::string_view(kernel) == "auto"; }

// The registry's names (conv_kernel_info), so that a named kernel is known or not.
bool is_registered(std::string_view name);

// What a validated call runs: kNoKernel, kEpilogueOnly or a kernel's registry name. A named
// kernel must be the one the library picks (the kernels take no choice); for the calls that run
// no convolution kernel, any registered name is accepted.
Status pick(ConvArguments const& a, char const** name) {
  *name = nullptr;
  char const* picked = kNoKernel;
  if (conv_output_is_empty(a)) {
    picked = kNoKernel;
  } else if (!conv_reads_inputs(a)) {
    picked = kEpilogueOnly;
  } else {
    picked = sm80_conv_kernel_name(make_params(a), a.dtype);
    if (picked == nullptr || std::string_view(picked) == kNoKernel)
      return Status::error(StatusCode::not_supported,
                           std::string("op: no compiled kernel runs this ") + conv::to_string(a.op) + " problem");
  }
  if (!is_auto(a.kernel)) {
    if (!is_registered(a.kernel))
      return Status::error(StatusCode::invalid_argument,
                           std::string("kernel: '") + a.kernel + "' is not a compiled convolution kernel (`tessel list` shows them)");
    bool const runs_kernel = std::string_view(picked) != kNoKernel && std::string_view(picked) != kEpilogueOnly;
    if (runs_kernel && std::string_view(a.kernel) != picked)
      return Status::error(StatusCode::invalid_argument, std::string("kernel: ") + a.kernel + " does not run this problem; " +
                                                             picked + " does (pass auto or that name)");
  }
  *name = picked;
  return Status::success();
}

// The kernels are built for sm_80 and newer (sm_80 images run on later GPUs).
Status runs_here() {
  detail::Here h;
  if (Status s = detail::current_device(&h); !s) return s;
  if (h.cc < kSm80)
    return Status::error(StatusCode::arch_mismatch, "the convolution kernels need sm_80 or newer; this GPU is sm_" +
                                                        std::to_string(h.cc));
  return Status::success();
}

// ---- the registry ---------------------------------------------------------------------------------

// Problems that reach every kernel the selection has: each pass and dtype, with aligned, small,
// odd, grouped and depthwise channel counts, strides and 3-D. Each registry entry lists the probes
// it runs, as the selection itself answers (sm80_conv_kernel_name), so the list follows the kernels.
struct Probe {
  char const* what;
  ConvArguments a;
};

std::vector<Probe> probes() {
  using conv::Operator;
  std::vector<Probe> out;
  alignas(16) static unsigned char placeholder[16];
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
    for (DType t : {DType::bf16, DType::f16}) {
      auto add = [&](char const* what, ConvArguments a) {
        a.x.ptr = a.filter.ptr = a.y.ptr = placeholder;
        a.out = placeholder;
        out.push_back({what, a});
      };
      add("3x3 C64->64", make_packed_conv2d(op, 1, 16, 16, 64, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, t));
      add("1x1 C256->64", make_packed_conv2d(op, 1, 16, 16, 256, 64, 1, 1, {0, 0}, {1, 1}, {1, 1}, 1, t));
      add("1x1/2 C512->1024", make_packed_conv2d(op, 1, 16, 16, 512, 1024, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, t));
      add("7x7/2 C3->64", make_packed_conv2d(op, 1, 32, 32, 3, 64, 7, 7, {3, 3}, {2, 2}, {1, 1}, 1, t));
      add("3x3 C33->65", make_packed_conv2d(op, 1, 16, 16, 33, 65, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, t));
      add("3x3 groups 32 C256->256", make_packed_conv2d(op, 1, 16, 16, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 32, t));
      add("3x3 depthwise C256", make_packed_conv2d(op, 1, 16, 16, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 256, t));
      add("3x3x3 C64->64", make_packed_conv3d(op, 1, 8, 16, 16, 64, 64, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, t));
    }
  }
  return out;
}

struct RegistryEntry {
  std::string name, description;
};

std::vector<RegistryEntry> const& registry() {
  static std::vector<RegistryEntry> const entries = [] {
    std::vector<RegistryEntry> list;
    for (Probe const& pr : probes()) {
      char const* name = sm80_conv_kernel_name(make_params(pr.a), pr.a.dtype);
      if (name == nullptr || std::string_view(name) == kNoKernel) continue;
      std::string const what = std::string(conv::to_string(pr.a.op)) + " " + to_string(pr.a.dtype) + " " + pr.what;
      RegistryEntry* e = nullptr;
      for (RegistryEntry& x : list)
        if (x.name == name) e = &x;
      if (e == nullptr) {
        list.push_back({name, "runs " + what});
      } else {
        e->description += "; " + what;
      }
    }
    return list;
  }();
  return entries;
}

bool is_registered(std::string_view name) {
  for (RegistryEntry const& e : registry())
    if (e.name == name) return true;
  return false;
}

}  // namespace

Status conv_kernel_name(ConvArguments const& a, char const** name) {
  *name = nullptr;
  if (Status s = conv_validate(a); !s) return s;
  return pick(a, name);
}

Status can_implement(ConvArguments const& a) {
  char const* name = nullptr;
  if (Status s = conv_kernel_name(a, &name); !s) return s;
  if (std::string_view(name) == kNoKernel) return Status::success();
  return runs_here();
}

Status convolution(ConvArguments const& a, CUstream_st* stream) {
  char const* name = nullptr;
  if (Status s = conv_kernel_name(a, &name); !s) return s;
  if (std::string_view(name) == kNoKernel) return Status::success();
  if (Status s = runs_here(); !s) return s;
  // An error left by earlier work is reported, not attributed to this launch.
  if (cudaError_t const pending = cudaGetLastError(); pending != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("pending CUDA error before convolution: ") + cudaGetErrorName(pending) +
                                                     ": " + cudaGetErrorString(pending));
  if (std::string_view(name) == kEpilogueOnly) return detail::conv_epilogue_only(a, stream);
  return sm80_conv_run(make_params(a), a.dtype, stream);
}

int conv_kernel_count() { return int(registry().size()); }

ConvKernelInfo conv_kernel_info(int i) {
  if (i < 0 || i >= conv_kernel_count()) return {"", "", 0};
  RegistryEntry const& e = registry()[std::size_t(i)];
  return {e.name.c_str(), e.description.c_str(), kSm80};
}

}  // namespace tessel
