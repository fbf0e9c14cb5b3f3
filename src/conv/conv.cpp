// src/conv/conv.cpp -- the convolution host API (tessel/conv/conv.hpp): the rules, the route a
// call takes (route(): nothing to write, the epilogue alone, a 1x1 convolution through the GEMM
// API, an sm_90a or sm_80 convolution kernel, or one of those on copies with the channels padded),
// the architecture check, the workspace, and the registry `tessel list` prints.
#include "conv_epilogue_only.hpp"
#include "conv_params.hpp"
#include "conv_padded.hpp"
#include "sm80_conv_launch.hpp"
#include "sm90_conv_launch.hpp"
#include "../gemm/gemm_canonical.hpp"  // pool_allocate, cuda_failure, round_up
#include "../gemm/sm90_instances.hpp"   // launch_splitk_reduce
#include "../runtime/current_device.hpp"

#include <tessel/conv/conv.hpp>
#include <tessel/conv/conv_as_gemm.hpp>
#include <tessel/conv/conv_padded.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

namespace {

using detail::make_params;  // conv_params.hpp

constexpr int kSm80 = 80, kSm90 = 90;
constexpr char const* kNoKernel = "none";                // out is empty: nothing runs
constexpr char const* kEpilogueOnly = "epilogue-only";   // out = act(beta * residual + bias)
constexpr std::string_view kGemmPrefix = "gemm:";         // a 1x1 convolution run by the GEMM API's kernel
constexpr std::string_view kPaddedPrefix = "padded:";     // run on channel-padded copies by this kernel

bool is_auto(char const* kernel) { return kernel == nullptr || std::string_view(kernel) == "auto"; }

// The compute capability of the current device, 0 when there is none.
int current_cc() {
  detail::Here h;
  return detail::current_device(&h) ? h.cc : 0;
}

// The kernel the selection picks for p on a GPU of compute capability cc: the sm_90a kernel where
// it takes the problem on an sm_90 GPU, else the sm_80 selection.
char const* kernel_for(kernel::Sm80ConvParams const& p, DType dtype, int cc) {
  if (cc == kSm90 && sm90_conv_takes(p, dtype)) return sm90_conv_kernel_name(p, dtype);
  return sm80_conv_kernel_name(p, dtype, cc);
}

bool is_sm90(std::string_view name) { return name.substr(0, 5) == "sm90_"; }

// An sm_80 instance that reads its operands element by element.
bool is_align1(std::string_view name) { return name.ends_with("_align1"); }

// The registry's names (conv_kernel_info), so that a named kernel is known or not.
bool is_registered(std::string_view name);

// ---- the route of a call ---------------------------------------------------------------------------

// How a validated call is computed; `name` is what conv_kernel_name reports.
enum class Route {
  nothing,        // out is empty: kNoKernel
  epilogue_only,  // no sum: kEpilogueOnly
  gemm,           // a 1x1 convolution that is one plain GEMM (conv_as_gemm.hpp): "gemm:" + the GEMM kernel;
                  // a strided 1x1 fprop is a batched GEMM on x's grid, a strided 1x1 dgrad the
                  // epilogue alone over dx, then a batched GEMM on its grid, a strided 1x1 wgrad a
                  // batched GEMM into fp32 K slices, then their sum
  sm90,           // an sm_90a convolution kernel (sm90_conv_launch.hpp)
  sm80,           // the sm_80 implicit-GEMM or depthwise kernels (sm80_conv_launch.hpp)
  padded,         // one of those on channel-padded copies (conv_padded.hpp): "padded:" + its name
};
struct Plan {
  Route route = Route::nothing;
  char const* name = kNoKernel;
  GemmArguments gemm;         // Route::gemm: the GEMM API's arguments
  bool grid = false;          // Route::gemm: the GEMM writes the strided grid of dx (conv_strided_as_grid_gemm)
  bool slices = false;        // Route::gemm: the GEMM writes a strided wgrad's fp32 K slices, summed after
                              // (conv_strided_wgrad_as_gemm_slices; gemm.d a placeholder until the call)
  ConvPaddedLayout padded;    // Route::padded: the staged tensors
};

// "gemm:" + the name of every GEMM kernel, in gemm_kernels()'s order (stable storage for the names
// conv_kernel_name returns).
std::vector<std::string> const& gemm_route_names() {
  static std::vector<std::string> const names = [] {
    std::vector<std::string> v;
    for (GemmKernelInfo const& k : gemm_kernels()) v.push_back(std::string(kGemmPrefix) + k.name);
    return v;
  }();
  return names;
}

// "gemm:" + the kernel the GEMM API would run for g, or nullptr where it runs none: its argument
// rules, its heuristic (which reads the current device's compute capability and SMs, or assumes
// an sm_80-class GPU of 132 SMs without one) and, on a GPU, an image of that kernel for it.
// Launches nothing.
char const* gemm_route_name(GemmArguments const& g) {
  if (!gemm_validate(g).ok()) return nullptr;
  GemmKernelInfo const* k = select_gemm_kernel(g);
  if (k == nullptr) return nullptr;
  if (Status s = gemm_kernel_runs_here(*k, g); !s && s.code != StatusCode::no_device) return nullptr;
  std::span<GemmKernelInfo const> const all = gemm_kernels();
  std::size_t const i = std::size_t(k - all.data());
  return i < all.size() ? gemm_route_names()[i].c_str() : nullptr;
}

Status route(ConvArguments const& a, int cc, Plan* plan);

// Where a strided wgrad's fp32 slices go in the workspace: first, 256-byte aligned.
std::size_t wgrad_slices_bytes(GemmArguments const& g) {
  return std::size_t(detail::round_up(g.batch_count * g.m * g.n * std::int64_t(sizeof(float)), 256));
}

// Whether a is one GEMM (conv_as_gemm.hpp), its arguments in *g: a plain 1x1 GEMM, the batched
// GEMM on a strided fprop's or dgrad's grid of x (*grid: a dgrad's, which writes only the grid of
// dx), or a strided wgrad's K slices (*slices; D a placeholder, the slices' place in the workspace).
bool as_one_gemm(ConvArguments const& a, GemmArguments* g, bool* grid, bool* slices) {
  *grid = *slices = false;
  if (conv_strided_wgrad_as_gemm_slices(a, g)) {
    g->d = reinterpret_cast<void*>(kConvPaddedPlaceholder);
    *slices = true;
  } else {
    bool const strided = conv_strided_as_grid_gemm(a, g);
    *grid = strided && a.op == conv::Operator::kDgrad;
    if (!strided && !conv_as_gemm(a, g)) return false;
    g->options.splits = a.options.wgrad_slices;  // (0 unless a wgrad asks: conv_validate)
  }
  g->options.lean_builds = a.options.lean_builds;
  return true;
}

// The padded route (tessel/conv/conv_padded.hpp): a groups-1 problem the sm_80 selection would
// read element by element (`unpadded` is an _align1 instance, 0.02-0.73x cuDNN on the stem and
// C33/K65 lines on the H200) runs on copies with its channels padded -- the first candidate
// widths whose padded problem is valid and goes to an aligned kernel (an sm_90a one for the
// sm_90a widths). The padded problem is aligned, so its own route is never this one. `named`
// (non-empty): the candidate whose name that is, whatever kernel it runs (A/B measurements).
bool padded_route(ConvArguments const& a, int cc, std::string_view unpadded, Plan* plan, std::string_view named = {}) {
  if (a.groups != 1 || !is_align1(unpadded)) return false;
  ConvPaddedWidths widths[2];
  int const count = conv_padded_candidates(a, cc == kSm90, widths);
  for (int i = 0; i < count; ++i) {
    ConvPaddedLayout const l = conv_padded_layout(a, widths[i]);
    ConvArguments const inner = conv_padded_inner(a, l, kConvPaddedPlaceholder);
    Plan in;
    if (!conv_validate(inner).ok() || !route(inner, cc, &in).ok()) continue;
    if (in.route == Route::padded || is_align1(in.name)) continue;
    char const* const name = detail::conv_padded_name(in.name);
    if (named.empty() ? widths[i].sm90 && in.route != Route::sm90 : named != name) continue;
    plan->route = Route::padded, plan->padded = l, plan->name = name;
    return true;
  }
  return false;
}

// The route of a validated call on a GPU of compute capability cc, the first that applies: nothing
// to write; no sum (the epilogue alone); a 1x1 convolution that is one GEMM, where the GEMM API
// runs it (its sm_90a kernels beat cuBLAS, while the sm_80 implicit GEMM ran 1x1 C256->64 fprop
// at 0.29x cuDNN on the H200), or a strided 1x1 fprop or dgrad that is one batched GEMM on the
// grid of x (the kernels' implicit GEMM over every dx pixel ran 1x1/2 C512->1024 dgrad at 0.11x,
// its fprop at 0.83x), or a strided 1x1 wgrad whose K slices are one (0.61x there); the padded
// route where the sm_80 selection would read the problem element by element; the sm_90a kernel
// where it takes the problem on an sm_90 GPU; the sm_80 kernels.
Status route(ConvArguments const& a, int cc, Plan* plan) {
  *plan = Plan{};
  if (conv_output_is_empty(a)) return Status::success();
  if (!conv_reads_inputs(a)) {
    plan->route = Route::epilogue_only, plan->name = kEpilogueOnly;
    return Status::success();
  }
  if (bool grid = false, slices = false; as_one_gemm(a, &plan->gemm, &grid, &slices)) {
    if (char const* name = gemm_route_name(plan->gemm); name != nullptr) {
      plan->route = Route::gemm, plan->name = name, plan->grid = grid, plan->slices = slices;
      return Status::success();
    }
  }
  char const* name = kernel_for(make_params(a), a.dtype, cc);
  if (name == nullptr || std::string_view(name) == kNoKernel)
    return Status::error(StatusCode::not_supported, std::string("op: no compiled kernel runs this ") + conv::to_string(a.op) + " problem");
  if (padded_route(a, cc, name, plan)) return Status::success();
  plan->route = is_sm90(name) ? Route::sm90 : Route::sm80, plan->name = name;
  return Status::success();
}

// What a validated call runs (route), with the named-kernel rule: a named kernel must be the one
// the library picks (the kernels take no choice), or the sm_80 kernel where it picks the GEMM
// route or an sm_90a kernel (the sm_80 kernels run every problem, on every GPU: A/B measurements),
// or any sm_90a kernel that runs the problem where it picks one, or another padded
// candidate's "padded:" name where it picks the padded route;
// for the calls that run no convolution kernel, any registered name is accepted.
Status pick(ConvArguments const& a, Plan* plan) {
  int const cc = current_cc();
  if (Status s = route(a, cc, plan); !s) return s;
  if (is_auto(a.kernel)) return Status::success();
  if (!is_registered(a.kernel))
    return Status::error(StatusCode::invalid_argument,
                         std::string("kernel: '") + a.kernel + "' is not a compiled convolution kernel (`tessel list` shows them)");
  if (plan->route == Route::nothing || plan->route == Route::epilogue_only) return Status::success();
  if (plan->route != Route::sm80) {
    char const* const sm80 = sm80_conv_kernel_name(make_params(a), a.dtype, cc);
    if (std::string_view(a.kernel) == sm80) plan->route = Route::sm80, plan->name = sm80;
  }
  if (plan->route == Route::padded && std::string_view(a.kernel).starts_with(kPaddedPrefix))  // e.g. the sm_80 widths on an sm_90 GPU
    padded_route(a, cc, sm80_conv_kernel_name(make_params(a), a.dtype, cc), plan, a.kernel);
  if (plan->route == Route::sm90) {  // any sm_90a kernel that runs the problem (A/B measurements)
    for (char const* n : sm90_conv_kernel_names(make_params(a), a.dtype))
      if (std::string_view(a.kernel) == n) plan->name = n;
  }
  if (std::string_view(a.kernel) != plan->name)
    return Status::error(StatusCode::invalid_argument, std::string("kernel: ") + a.kernel + " does not run this problem; " +
                                                           plan->name + " does (pass auto or that name)");
  return Status::success();
}

// pick() after the argument rules.
Status plan_call(ConvArguments const& a, Plan* plan) {
  *plan = Plan{};
  if (Status s = conv_validate(a); !s) return s;
  return pick(a, plan);
}

// The kernels are built for sm_80 and newer (sm_80 images run on later GPUs). *h: the GPU.
Status runs_here(detail::Here* h) {
  if (Status s = detail::current_device(h); !s) return s;
  if (h->cc < kSm80)
    return Status::error(StatusCode::arch_mismatch, "the convolution kernels need sm_80 or newer; this GPU is sm_" +
                                                        std::to_string(h->cc));
  return Status::success();
}

// The sm_80 kernels' split (the SMs it fills) and workspace for a call on GPU h.
Sm80ConvRunOptions sm80_options(ConvArguments const& a, detail::Here const& h) {
  Sm80ConvRunOptions o;
  o.sms = h.sms;
  o.cc = h.cc;
  o.slices = a.options.wgrad_slices;
  o.workspace = a.workspace, o.workspace_bytes = a.workspace_bytes;
  return o;
}

// The sm_90a kernels' view of a call: the caller's workspace and options.
Sm90ConvCall sm90_call(ConvArguments const& a) {
  return {a.workspace, a.workspace_bytes, a.options.lean_builds, a.options.wgrad_slices};
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
      add("3x3 C128->128", make_packed_conv2d(op, 1, 16, 16, 128, 128, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, t));
      add("1x1 C256->64", make_packed_conv2d(op, 1, 16, 16, 256, 64, 1, 1, {0, 0}, {1, 1}, {1, 1}, 1, t));
      add("1x1/2 C512->1024", make_packed_conv2d(op, 1, 16, 16, 512, 1024, 1, 1, {0, 0}, {2, 2}, {1, 1}, 1, t));
      add("7x7/2 C3->64", make_packed_conv2d(op, 1, 32, 32, 3, 64, 7, 7, {3, 3}, {2, 2}, {1, 1}, 1, t));
      add("3x3 C33->65", make_packed_conv2d(op, 1, 16, 16, 33, 65, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, t));
      add("3x3 groups 32 C256->256", make_packed_conv2d(op, 1, 16, 16, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 32, t));
      add("3x3 depthwise C256", make_packed_conv2d(op, 1, 16, 16, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 256, t));
      add("3x3 depthwise C33", make_packed_conv2d(op, 1, 16, 16, 33, 33, 3, 3, {1, 1}, {1, 1}, {1, 1}, 33, t));
      add("3x3x3 C64->64", make_packed_conv3d(op, 1, 8, 16, 16, 64, 64, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, t));
      add("3x3 C256->256 batch 64 28x28", make_packed_conv2d(op, 64, 28, 28, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, t));
    }
  }
  return out;
}

struct RegistryEntry {
  std::string name, description;
};

std::vector<RegistryEntry> const& registry() {
  static std::vector<RegistryEntry> const entries = [] {
    // Per kernel, the probes the selection sends to it and those it runs only when named (the
    // sm_90a kernels that run a problem another one is picked for).
    struct Probes {
      std::string name;
      std::vector<std::string> runs, by_name;
    };
    std::vector<Probes> found;
    auto const add = [&](char const* name, std::string const& what, bool picked) {
      if (name == nullptr || std::string_view(name) == kNoKernel) return;
      Probes* e = nullptr;
      for (Probes& x : found)
        if (x.name == name) e = &x;
      if (e == nullptr) e = &found.emplace_back(Probes{name, {}, {}});
      std::vector<std::string>& list = picked ? e->runs : e->by_name;
      if (std::find(list.begin(), list.end(), what) == list.end()) list.push_back(what);  // (both GPU kinds' probes once)
    };
    for (Probe const& pr : probes()) for (int cc : {kSm90, kSm80}) {
      // A 1x1 probe that is one GEMM runs on the GEMM API's kernels (`tessel list` shows them).
      GemmArguments g;
      bool grid = false, slices = false;
      if (as_one_gemm(pr.a, &g, &grid, &slices)) continue;
      std::string const what = std::string(conv::to_string(pr.a.op)) + " " + to_string(pr.a.dtype) + " " + pr.what;
      char const* const picked = kernel_for(make_params(pr.a), pr.a.dtype, cc);
      add(picked, what, true);
      if (Plan padded; padded_route(pr.a, cc, picked, &padded)) add(padded.name, what, true);
      if (cc == kSm90)
        for (char const* n : sm90_conv_kernel_names(make_params(pr.a), pr.a.dtype))
          if (picked == nullptr || std::string_view(n) != picked) add(n, what, false);
    }
    auto const join = [](std::vector<std::string> const& v) {
      std::string out;
      for (std::string const& w : v) out += (out.empty() ? "" : "; ") + w;
      return out;
    };
    std::vector<RegistryEntry> list;
    for (Probes const& e : found) {
      std::string d = e.runs.empty() ? "" : "runs " + join(e.runs);
      std::vector<std::string> only;  // the named-only probes it is not picked for anyway
      for (std::string const& w : e.by_name)
        if (std::find(e.runs.begin(), e.runs.end(), w) == e.runs.end()) only.push_back(w);
      if (!only.empty()) d += (d.empty() ? "" : "; ") + std::string("by name: ") + join(only);
      list.push_back({e.name, d});
    }
    return list;
  }();
  return entries;
}

// A registry entry, "gemm:" + a compiled GEMM kernel, or "padded:" + either.
bool is_registered(std::string_view name) {
  if (name.starts_with(kPaddedPrefix)) return is_registered(name.substr(kPaddedPrefix.size()));
  if (name.substr(0, kGemmPrefix.size()) == kGemmPrefix) return find_gemm_kernel(name.substr(kGemmPrefix.size())) != nullptr;
  for (RegistryEntry const& e : registry())
    if (e.name == name) return true;
  return false;
}

// The strided dgrad's first pass (conv_strided_as_grid_gemm): dx = beta * residual, or zeros, over
// the pixels the GEMM does not write. Zeros into a packed dx go only off the grid where the grid
// reaches each dimension's end (conv_zero_off_grid: 3/4 of dx at stride 2), else over all of dx
// (one memset); the epilogue kernel's per-element coordinates cost several times its bandwidth.
Status write_off_grid(ConvArguments const& a, cudaStream_t stream) {
  std::int64_t const extent[4] = {a.n, a.d, a.h, a.w};
  std::int64_t const stride[4] = {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w};
  std::int64_t step = 0;
  bool const packed = conv_rows_evenly_strided(extent, stride, a.c, &step) && step == a.c;
  if (!packed || (a.residual != nullptr && a.beta != 0.0f)) return detail::conv_epilogue_only(a, stream);
  if (detail::conv_zero_off_grid_takes(a)) return detail::conv_zero_off_grid(a, stream);
  std::size_t const bytes = std::size_t(a.n * a.d * a.h * a.w * a.c) * size_of(a.dtype);
  if (cudaError_t const err = cudaMemsetAsync(a.out, 0, bytes, stream); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("cudaMemsetAsync of dx off the GEMM's grid: ") +
                                                     cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  return Status::success();
}

// A strided wgrad's GEMM (conv_strided_wgrad_as_gemm_slices) into fp32 slices at the start of the
// workspace (the caller's, or the library's pool on the call's stream), the GEMM's own workspace
// after them, then dw = alpha * (the slices summed in order) + beta * residual: the split-K
// reduction the GEMM API runs after its own K slices.
Status wgrad_by_slices(ConvArguments const& a, GemmArguments g, cudaStream_t stream) {
  std::size_t gemm_bytes = 0;
  if (Status s = gemm_workspace_size(g, &gemm_bytes); !s) return s;
  std::size_t const slice_bytes = wgrad_slices_bytes(g), need = slice_bytes + gemm_bytes;
  if (a.workspace != nullptr && a.workspace_bytes < need)
    return Status::error(StatusCode::invalid_argument, "workspace_bytes: " + std::to_string(a.workspace_bytes) +
                                                           " is below the " + std::to_string(need) +
                                                           " this call takes (conv_workspace_size)");
  void* base = a.workspace;
  if (base == nullptr)
    if (Status s = detail::pool_allocate(&base, need, "the " + std::to_string(need >> 10) + " KiB of a strided wgrad's fp32 slices",
                                         stream);
        !s)
      return s;
  g.d = base;
  g.workspace = gemm_bytes > 0 ? static_cast<unsigned char*>(base) + slice_bytes : nullptr;
  g.workspace_bytes = gemm_bytes;
  Status result = gemm(g, stream);
  if (result.ok()) {
    kernel::detail::SplitKReduceParams r;
    r.partials = static_cast<float const*>(base), r.splits = int(g.batch_count), r.batch = 1;
    r.rows = a.k, r.cols = a.c;
    bool const reads_c = a.residual != nullptr && a.beta != 0.0f;
    r.c = reads_c ? a.residual : nullptr, r.ldc = detail::conv_filter_ld(a), r.beta = reads_c ? a.beta : 0.0f;
    r.d = a.out, r.ldd = detail::conv_filter_ld(a);
    r.alpha = a.alpha;
    if (cudaError_t err = kernel::detail::launch_splitk_reduce(r, a.dtype, stream); err != cudaSuccess)
      result = detail::cuda_failure("launch of a strided wgrad's slice sum", err);
  }
  if (a.workspace == nullptr)
    if (cudaError_t err = cudaFreeAsync(base, stream); err != cudaSuccess && result.ok())
      result = detail::cuda_failure("cudaFreeAsync (a strided wgrad's slices)", err);
  return result;
}

}  // namespace

Status conv_kernel_name(ConvArguments const& a, char const** name) {
  *name = nullptr;
  Plan plan;
  if (Status s = plan_call(a, &plan); !s) return s;
  *name = plan.name;
  return Status::success();
}

Status can_implement(ConvArguments const& a) {
  Plan plan;
  if (Status s = plan_call(a, &plan); !s) return s;
  if (plan.route == Route::nothing) return Status::success();
  detail::Here h;
  if (Status s = runs_here(&h); !s) return s;
  if (plan.route == Route::gemm) return can_implement(plan.gemm);
  if (plan.route == Route::padded) return can_implement(conv_padded_inner(a, plan.padded, kConvPaddedPlaceholder));
  return Status::success();
}

Status conv_workspace_size(ConvArguments const& a, std::size_t* bytes) {
  if (bytes == nullptr) return Status::error(StatusCode::invalid_argument, "bytes: null");
  *bytes = 0;
  Plan plan;
  if (Status s = plan_call(a, &plan); !s) return s;
  switch (plan.route) {
    case Route::nothing:
    case Route::epilogue_only: return Status::success();
    case Route::sm90: {
      detail::Here h;
      if (Status s = runs_here(&h); !s) return s;
      return sm90_conv_workspace_size(make_params(a), a.dtype, plan.name, sm90_call(a), bytes);
    }
    case Route::gemm:
      if (Status s = gemm_workspace_size(plan.gemm, bytes); !s) return s;
      if (plan.slices) *bytes += wgrad_slices_bytes(plan.gemm);
      return Status::success();
    case Route::padded: return detail::conv_padded_workspace_size(a, plan.padded, bytes);
    case Route::sm80: {
      detail::Here h;
      if (Status s = runs_here(&h); !s) return s;
      *bytes = sm80_conv_workspace_size(make_params(a), a.dtype, sm80_options(a, h));
      return Status::success();
    }
  }
  return Status::success();
}

Status convolution(ConvArguments const& a, CUstream_st* stream) {
  Plan plan;
  if (Status s = plan_call(a, &plan); !s) return s;
  if (plan.route == Route::nothing) return Status::success();
  detail::Here h;
  if (Status s = runs_here(&h); !s) return s;
  // An error left by earlier work is reported, not attributed to this launch.
  if (cudaError_t const pending = cudaGetLastError(); pending != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("pending CUDA error before convolution: ") + cudaGetErrorName(pending) +
                                                     ": " + cudaGetErrorString(pending));
  switch (plan.route) {
    case Route::nothing: return Status::success();
    case Route::epilogue_only: return detail::conv_epilogue_only(a, stream);
    case Route::gemm:
      if (plan.slices) return wgrad_by_slices(a, plan.gemm, stream);
      if (plan.grid)
        if (Status s = write_off_grid(a, stream); !s) return s;
      return gemm(plan.gemm, stream);
    case Route::padded: return detail::conv_padded_run(a, plan.padded, stream);
    case Route::sm90: return sm90_conv_run(make_params(a), a.dtype, plan.name, sm90_call(a), stream);
    case Route::sm80: return sm80_conv_run(make_params(a), a.dtype, stream, sm80_options(a, h));
  }
  return Status::success();
}

int conv_kernel_count() { return int(registry().size()); }

ConvKernelInfo conv_kernel_info(int i) {
  if (i < 0 || i >= conv_kernel_count()) return {"", "", 0};
  RegistryEntry const& e = registry()[std::size_t(i)];
  std::string_view const kernel = std::string_view(e.name).starts_with(kPaddedPrefix)
                                     ? std::string_view(e.name).substr(kPaddedPrefix.size())
                                     : std::string_view(e.name);
  return {e.name.c_str(), e.description.c_str(), is_sm90(kernel) ? kSm90 : kSm80};
}

}  // namespace tessel
