// apps/tessel/cmd_conv.cpp -- `tessel conv`: run, verify and time one convolution pass (or a sweep
// of them) against cuDNN in the same process.
//
//   tessel conv                                      fprop n128 56x56 c64->k64 3x3 (no padding), bf16, vs cuDNN
//   tessel conv --op wgrad --n 128 --h 224 --w 224 --c 3 --k 64 --r 7 --s 7 --stride 2 --pad 3
//   tessel conv --d 16 --t 3 --pad 1 --n 4 --c 64 --k 64           3-D (NDHWC, KTRSC)
//   tessel conv --sweep bench/conv.txt --json bench/results/conv-h200.json
//
// Method (docs/PERF.md): inputs (and the residual, the fp32 bias) are uniform(-1,1) from a fixed
// hash (never zeros); outputs are poisoned with NaN before the verification run; tessel and cuDNN
// run the same inputs and the fp64 GPU reference judges both (tessel/reference/conv_device.hpp).
// cuDNN runs its legacy convolution API with NHWC descriptors, tensor-op math and fp32 compute, the
// fastest algorithm cudnnFind*AlgorithmEx measures for the problem and its workspace
// (conv_baseline.hpp). It has no fused bias or activation there: with --bias or --act it runs the
// convolution alone, is timed so, and is not verified (the row says so). Timing (measure.hpp):
// warm-up, then `iters` pairs interleaved tessel, cuDNN, ... each launch between its own CUDA
// events and on the next of the input sets, which together exceed 2x the L2; the median is reported.
//
// FLOPs: 2 * n*z*p*q * k * t*r*s * c/groups for every pass (conv_flops): the multiply-adds of the
// convolution's definition, fprop's and wgrad's implicit GEMM summed over the groups; dgrad is
// counted the same (its implicit GEMM over n*d*h*w rows would also count taps that meet no output
// pixel). cuDNN's and PyTorch's benchmarks count so (anchors/README.md).
//
// This file holds what is convolution's own: the options, the problem and its ConvArguments, the
// input sets' contents, the verification, the table, the JSON and CSV columns. cuDNN is in
// conv_baseline.hpp; the option and sweep parsing, timing and GPU conditions in measure.hpp; the
// header and files in report.hpp. Every error is one line; bad arguments and a missing GPU exit 2,
// failures while running exit 1.
#include "command.hpp"

#if defined(TESSEL_HAS_CUDA)

#include "conv_baseline.hpp"
#include "measure.hpp"
#include "report.hpp"

#include <tessel/conv/conv.hpp>
#include <tessel/reference/conv_device.hpp>
#include <tessel/reference/gemm_device.hpp>  // fill_uniform_device, fill_constant_device

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tessel::ConvActivation;
using tessel::ConvArguments;
using tessel::DType;
using tessel::conv::Operator;
using namespace tessel::cli;  // UsageError; measure.hpp, report.hpp, conv_baseline.hpp

#if defined(TESSEL_HAS_CUDNN)
constexpr bool kHaveCudnn = true;
#else
constexpr bool kHaveCudnn = false;
#endif
constexpr char const* kNoCudnn = "cuDNN: not found when tessel was built; tessel runs alone";

constexpr char const* kUsage =
    "usage: tessel conv [options]            run, verify and time a convolution pass against cuDNN\n"
    "\n"
    "problem (x [n][d][h][w][c], filters [k][t][r][s][c/groups], y [n][z][p][q][k], channels last):\n"
    "  --op P              fprop (default: y from x), dgrad (dx from dy), wgrad (dw from x and dy)\n"
    "  --n N               batch (default 128)\n"
    "  --h H --w W         image height and width (default 56 each)\n"
    "  --d D               image depth: a 3-D convolution (default 2-D)\n"
    "  --c C --k K         input and output channels, all groups (default 64 each)\n"
    "  --r R --s S         filter height and width (default 3 each)\n"
    "  --t T               filter depth: a 3-D convolution\n"
    "  --pad P             zero padding: one value, or per dimension h,w (3-D: d,h,w) (default 0)\n"
    "  --stride S          the same forms (default 1)\n"
    "  --dilation L        the same forms (default 1: none)\n"
    "  --groups G          channel groups, dividing c and k; c = k = G is depthwise (default 1)\n"
    "  --dtype T           bf16 (default) or fp16; fp32 accumulation\n"
    "  --alpha A --beta B  out = act(alpha*conv + beta*residual + bias) (default 1 and 0; a random\n"
    "                      residual when B != 0)\n"
    "  --bias              a random fp32 bias per output channel (fprop, dgrad)\n"
    "  --act A             none (default), relu, gelu (tanh form), silu\n"
    "  --kernel NAME       a convolution kernel from `tessel list`, or auto (default: the library's pick)\n"
    "  --tune K=V[,K=V]    ConvOptions, for A/B measurements: lean=0 runs the sm_90a implicit GEMM's\n"
    "                      general builds, not its lean ones (default 1); slices=N splits a wgrad's sum\n"
    "                      over pixels into N slices (default: the library's count)\n"
    "method:\n"
    "  --iters N           timed launches of each side (default 30)\n"
    "  --warmup N          untimed launches of each side first (default 5)\n"
    "  --gap-ms G          idle milliseconds before each timed pair: burst figures (default 0)\n"
    "  --verify | --no-verify       judge both results against the fp64 GPU reference (default on)\n"
    "  --compare cudnn|none         the baseline run in the same process (default cudnn)\n"
    "  --seed S            input data seed (default 1)\n"
    "output:\n"
    "  --csv FILE          append one row per problem\n"
    "  --json FILE         write the results as JSON (docs/PERF.md; DESIGN.md section 6)\n"
    "  --suite NAME        the suite name recorded in the JSON (default: the sweep file's stem)\n"
    "many problems:\n"
    "  --sweep FILE        one problem per line, written as the options above ('#' comments);\n"
    "                      each line's options override the command line's\n"
    "  --dry-run           print the problems, their kernels and FLOPs, and stop (no GPU needed)\n"
    "  --help              this text\n"
    "\n"
    "TFLOP/s counts 2*n*z*p*q*k*t*r*s*c/groups FLOPs for every pass (the convolution's multiply-adds).\n"
    "cuDNN: its legacy convolution API, NHWC, tensor-op math, fp32 compute, the fastest algorithm\n"
    "cudnnFind*AlgorithmEx measures, with its workspace; without fused bias or activation.\n";

OptionNames const kOptions{"conv",
                           {"--op", "--n", "--d", "--h", "--w", "--c", "--k", "--t", "--r", "--s", "--pad", "--stride",
                            "--dilation", "--groups", "--dtype", "--alpha", "--beta", "--act", "--kernel", "--tune",
                            "--iters", "--warmup", "--gap-ms", "--compare", "--seed", "--csv", "--json", "--suite",
                            "--sweep"},
                           {"--bias", "--verify", "--no-verify", "--dry-run", "--help"}};

// ---- one problem --------------------------------------------------------------------------------

struct Problem {
  Operator op = Operator::kFprop;
  int dims = 2;
  long long n = 128, d = 1, h = 56, w = 56, c = 64, k = 64, t = 1, r = 3, s = 3;
  long long pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};  // d, h, w
  long long groups = 1;
  DType dtype = DType::bf16;
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  ConvActivation act = ConvActivation::none;
  std::string kernel = "auto";  // --kernel: a registry name or auto
  tessel::ConvOptions options;  // --tune
  std::string picked;           // what runs (conv_kernel_name): a kernel, "epilogue-only" or "none"
  int iters = 30, warmup = 5;
  double gap_ms = 0.0;
  bool verify = true, compare = true;
  unsigned long long seed = 1;
  double flops = 0.0;           // set by make_problem
  tessel::GemmCoord gemm;       // one group's implicit GEMM, set by make_problem

  // The host-API arguments, packed, pointers unset.
  ConvArguments arguments() const {
    ConvArguments a = dims == 3 ? tessel::make_packed_conv3d(op, n, d, h, w, c, k, t, r, s, {pad[0], pad[1], pad[2]},
                                                             {stride[0], stride[1], stride[2]},
                                                             {dilation[0], dilation[1], dilation[2]}, groups, dtype)
                                : tessel::make_packed_conv2d(op, n, h, w, c, k, r, s, {pad[1], pad[2]}, {stride[1], stride[2]},
                                                             {dilation[1], dilation[2]}, groups, dtype);
    a.alpha = alpha, a.beta = beta, a.activation = act;
    a.kernel = kernel == "auto" ? nullptr : kernel.c_str();
    a.options = options;
    return a;
  }

  // --tune's settings that differ from the defaults, e.g. "lean=0,slices=4" ("" for none).
  std::string tune() const {
    std::string out = options.lean_builds ? "" : "lean=0";
    if (options.wgrad_slices != 0) out += (out.empty() ? "" : ",") + std::string("slices=") + std::to_string(options.wgrad_slices);
    return out;
  }

  // One per-dimension option as text: "1" when every dimension agrees, else "2,1" (h,w) / "1,2,2" (d,h,w).
  std::string dims_text(long long const (&v)[3]) const {
    int const first = dims == 3 ? 0 : 1;
    bool same = true;
    for (int i = first; i < 3; ++i) same = same && v[i] == v[first];
    if (same) return std::to_string(v[first]);
    std::string out;
    for (int i = first; i < 3; ++i) {
      if (i > first) out += ',';
      out += std::to_string(v[i]);
    }
    return out;
  }
  // e.g. "n128 56x56 c64->k64 3x3 pad1", "n4 16x56x56 c64->k64 3x3x3 pad1", "n128 224x224 c3->k64 7x7 pad3 stride2"
  std::string shape() const {
    auto const x = [](std::initializer_list<long long> v) {
      std::string s;
      for (long long e : v) {
        if (!s.empty()) s += 'x';
        s += std::to_string(e);
      }
      return s;
    };
    std::string out = "n" + std::to_string(n) + " " + (dims == 3 ? x({d, h, w}) : x({h, w})) + " c" + std::to_string(c) +
                      "->k" + std::to_string(k) + " " + (dims == 3 ? x({t, r, s}) : x({r, s}));
    auto const any = [&](long long const (&v)[3], long long dflt) {
      for (int i = dims == 3 ? 0 : 1; i < 3; ++i)
        if (v[i] != dflt) return true;
      return false;
    };
    if (any(pad, 0)) out += " pad" + dims_text(pad);
    if (any(stride, 1)) out += " stride" + dims_text(stride);
    if (any(dilation, 1)) out += " dil" + dims_text(dilation);
    if (groups != 1) out += " g" + std::to_string(groups);
    return out;
  }
  // e.g. "-", "bias,relu", "alpha=2,beta=1"
  std::string epilogue() const {
    std::string e;
    auto const add = [&](std::string const& s) {
      if (!e.empty()) e += ',';
      e += s;
    };
    if (alpha != 1.0f) add("alpha=" + json_number(alpha));
    if (beta != 0.0f) add("beta=" + json_number(beta));
    if (bias) add("bias");
    if (act != ConvActivation::none) add(tessel::to_string(act));
    return e.empty() ? "-" : e;
  }
};

// a with non-null, aligned placeholders where it reads or writes memory: the validator's and
// conv_kernel_name's view of a problem before its buffers exist.
ConvArguments with_placeholders(ConvArguments a, bool bias) {
  alignas(256) static unsigned char placeholder[64];
  a.x.ptr = a.filter.ptr = a.y.ptr = placeholder;
  a.out = placeholder;
  if (a.beta != 0.0f) a.residual = placeholder;
  if (bias) a.bias = reinterpret_cast<float const*>(placeholder);
  return a;
}

// --pad/--stride/--dilation: one value for every dimension, or one per dimension (h,w; 3-D d,h,w).
void parse_dims(std::string const& option, std::string const& text, int dims, long long lo, long long (&out)[3]) {
  std::vector<std::string> const parts = split_commas(text);
  long long const kMax = INT32_MAX;
  if (parts.size() == 1) {
    long long const v = parse_int(option, parts[0], lo, kMax);
    out[0] = dims == 3 ? v : out[0];
    out[1] = out[2] = v;
    return;
  }
  if (dims == 2 && parts.size() == 2) {
    out[1] = parse_int(option, parts[0], lo, kMax), out[2] = parse_int(option, parts[1], lo, kMax);
    return;
  }
  if (dims == 3 && parts.size() == 3) {
    for (int i = 0; i < 3; ++i) out[i] = parse_int(option, parts[std::size_t(i)], lo, kMax);
    return;
  }
  throw UsageError(option + ": '" + text + "' is not one value or " +
                   (dims == 3 ? "d,h,w (a 3-D problem: --d or --t)" : "h,w (d,h,w needs a 3-D problem: --d or --t)"));
}

// The options onto a Problem, checked by the host API's rules (conv_validate.hpp) so that the
// CLI's messages are the library's; nothing touches the GPU.
Problem make_problem(Options const& o) {
  Problem p;
  long long const kMax = INT32_MAX;
  auto const get = [&](char const* name) { return o.get(name); };
  if (auto v = get("--op")) {
    if (*v == "fprop") p.op = Operator::kFprop;
    else if (*v == "dgrad") p.op = Operator::kDgrad;
    else if (*v == "wgrad") p.op = Operator::kWgrad;
    else throw UsageError("--op: '" + *v + "' is not one of fprop, dgrad, wgrad");
  }
  if (auto v = get("--n")) p.n = parse_int("--n", *v, 0, kMax);
  if (auto v = get("--h")) p.h = parse_int("--h", *v, 1, kMax);
  if (auto v = get("--w")) p.w = parse_int("--w", *v, 1, kMax);
  if (auto v = get("--c")) p.c = parse_int("--c", *v, 0, kMax);
  if (auto v = get("--k")) p.k = parse_int("--k", *v, 0, kMax);
  if (auto v = get("--r")) p.r = parse_int("--r", *v, 1, kMax);
  if (auto v = get("--s")) p.s = parse_int("--s", *v, 1, kMax);
  if (o.has("--d") || o.has("--t")) p.dims = 3;
  if (auto v = get("--d")) p.d = parse_int("--d", *v, 1, kMax);
  if (auto v = get("--t")) p.t = parse_int("--t", *v, 1, kMax);
  if (auto v = get("--pad")) parse_dims("--pad", *v, p.dims, 0, p.pad);
  if (auto v = get("--stride")) parse_dims("--stride", *v, p.dims, 1, p.stride);
  if (auto v = get("--dilation")) parse_dims("--dilation", *v, p.dims, 1, p.dilation);
  if (auto v = get("--groups")) p.groups = parse_int("--groups", *v, 1, kMax);
  if (auto v = get("--dtype")) {
    auto const t = tessel::parse_dtype(*v);
    if (!t || (*t != DType::bf16 && *t != DType::f16)) throw UsageError("--dtype: '" + *v + "' is not one of bf16, fp16");
    p.dtype = *t;
  }
  if (auto v = get("--alpha")) p.alpha = parse_float("--alpha", *v);
  if (auto v = get("--beta")) p.beta = parse_float("--beta", *v);
  p.bias = o.has("--bias");
  if (p.bias && p.op == Operator::kWgrad) throw UsageError("--bias: wgrad takes no bias (dw has none)");
  if (auto v = get("--act")) {
    if (*v == "none") p.act = ConvActivation::none;
    else if (*v == "relu") p.act = ConvActivation::relu;
    else if (*v == "gelu") p.act = ConvActivation::gelu;
    else if (*v == "silu") p.act = ConvActivation::silu;
    else throw UsageError("--act: '" + *v + "' is not one of none, relu, gelu, silu");
  }
  if (auto v = get("--kernel")) {
    bool known = *v == "auto" || v->rfind("gemm:", 0) == 0;  // "gemm:<GEMM kernel>": conv_kernel_name checks the rest
    for (int i = 0; i < tessel::conv_kernel_count(); ++i) known = known || *v == tessel::conv_kernel_info(i).name;
    if (!known) throw UsageError("--kernel: '" + *v + "' is not a compiled convolution kernel (see: tessel list)");
    p.kernel = *v;
  }
  if (auto v = get("--tune")) {
    // A K=V list onto ConvOptions (tessel/conv/conv_arguments.hpp).
    for (std::string const& item : split_commas(*v)) {
      std::size_t const eq = item.find('=');
      std::string const key = eq == std::string::npos ? item : item.substr(0, eq);
      if (eq == std::string::npos || (key != "lean" && key != "slices"))
        throw UsageError("--tune: '" + item + "' is not lean=0|1 or slices=N (the conv knobs)");
      if (key == "lean") p.options.lean_builds = parse_int("--tune lean", item.substr(eq + 1), 0, 1) != 0;
      else p.options.wgrad_slices = int(parse_int("--tune slices", item.substr(eq + 1), 1, tessel::kConvMaxWgradSlices));
    }
    if (p.options.wgrad_slices != 0 && p.op != Operator::kWgrad)
      throw UsageError("--tune slices: only the weight gradient's sum is split (--op wgrad)");
  }
  if (auto v = get("--iters")) p.iters = int(parse_int("--iters", *v, 1, 100000));
  if (auto v = get("--warmup")) p.warmup = int(parse_int("--warmup", *v, 0, 100000));
  if (auto v = get("--gap-ms")) p.gap_ms = double(parse_int("--gap-ms", *v, 0, 10000));
  if (auto v = get("--seed")) p.seed = static_cast<unsigned long long>(parse_int("--seed", *v, 0, 1LL << 62));
  if (auto v = get("--compare")) {
    if (*v != "cudnn" && *v != "none") throw UsageError("--compare: '" + *v + "' is not one of cudnn, none");
    p.compare = *v == "cudnn";
  }
  p.verify = !o.has("--no-verify");
  ConvArguments const a = with_placeholders(p.arguments(), p.bias);
  if (tessel::Status const s = tessel::conv_validate(a); !s) throw UsageError(s.reason);
  char const* picked = nullptr;  // what will run (a named kernel that does not take the problem is refused here)
  if (tessel::Status const s = tessel::conv_kernel_name(a, &picked); !s) throw UsageError(s.reason);
  p.picked = picked;
  p.flops = tessel::conv_flops(a);
  p.gemm = tessel::conv_group_gemm(a);
  return p;
}

// ---- one run --------------------------------------------------------------------------------------

struct Result {
  Problem p;
  bool ran = false;
  std::string error;          // why it did not run (one line)
  std::string baseline_note;  // why cuDNN did not run, or ran the convolution alone
  std::string baseline_algo;  // cuDNN's algorithm and workspace
  Timing tessel, cudnn;
  bool verified = false, cudnn_verified = false, cudnn_checked = false;
  tessel::reference::ConvCheck check, cudnn_check;
  int sets = 0, sm_clock_after = 0;
  double tflops() const { return tessel.median_ms > 0 ? p.flops / (tessel.median_ms * 1e-3) / 1e12 : 0.0; }
  double cudnn_tflops() const { return cudnn.median_ms > 0 ? p.flops / (cudnn.median_ms * 1e-3) / 1e12 : 0.0; }
};

#if defined(TESSEL_HAS_CUDNN)
using CudnnHandle = cudnnHandle_t;
#else
using CudnnHandle = void*;
#endif

Result run_problem(Problem const& p, GpuReport const& gpu, CudnnHandle cudnn, Nvml const& nvml) {
  Result r;
  r.p = p;
  ConvArguments const a = p.arguments();  // validated by make_problem
  if (tessel::Status const s = tessel::can_implement(with_placeholders(a, p.bias)); !s) {
    r.error = s.reason;
    return r;
  }
  using tessel::ConvOperand;
  std::size_t const el = tessel::size_of(p.dtype);
  std::int64_t const n_x = tessel::conv_tensor_span(a, ConvOperand::x);
  std::int64_t const n_w = tessel::conv_tensor_span(a, ConvOperand::filter);
  std::int64_t const n_y = tessel::conv_tensor_span(a, ConvOperand::y);
  ConvOperand const out_role = tessel::conv_output_operand(p.op);
  std::int64_t const n_out = out_role == ConvOperand::x ? n_x : out_role == ConvOperand::y ? n_y : n_w;
  std::int64_t const n_bias = p.bias ? (p.op == Operator::kFprop ? p.k : p.c) : 0;
  std::int64_t const n_ref = tessel::reference::conv_output_elements(a);
  bool const has_residual = p.beta != 0.0f;

  bool compare = p.compare && kHaveCudnn;
  if (p.compare && !kHaveCudnn) r.baseline_note = kNoCudnn;
  if (compare && (n_ref == 0 || !tessel::conv_reads_inputs(a))) {
    r.baseline_note = "cuDNN: not run (no sum to compute: an empty pass or alpha = 0)";
    compare = false;
  }
  bool const fused = p.bias || p.act != ConvActivation::none;  // cuDNN's result is then not tessel's

  std::size_t const set_bytes = std::size_t(n_x + n_w + n_y + (has_residual ? n_out : 0)) * el +
                                std::size_t(n_bias) * sizeof(float);
  std::size_t const ref_bytes = p.verify ? std::size_t(n_ref) * 2 * sizeof(double) : 0;
#if defined(TESSEL_HAS_CUDNN)
  std::size_t const cudnn_bytes = compare ? std::size_t(n_out) * el + CudnnConv::kMaxWorkspace : 0;
#else
  std::size_t const cudnn_bytes = 0;
#endif
  int const sets = input_set_count(std::max<std::size_t>(set_bytes, 1), ref_bytes + cudnn_bytes, gpu.info.l2_bytes, &r.error);
  if (sets == 0) return r;
  r.sets = sets;

  cudaStream_t const stream = nullptr;
  auto fill = [&](void* x, DType t, std::int64_t count, std::uint64_t seed) {
    status_check(tessel::reference::fill_uniform_device(x, t, count, seed, -1.0f, 1.0f, stream), "fill inputs");
  };
  auto poison = [&](void* x, std::int64_t count) {
    status_check(tessel::reference::fill_constant_device(x, p.dtype, count, NAN, stream), "poison outputs");
  };
  struct Set {
    DeviceBuffer x, w, y, residual, bias;
  };
  std::vector<Set> bufs;
  std::vector<ConvArguments> set_args;
  for (int s = 0; s < sets; ++s) {
    Set b{DeviceBuffer(std::size_t(n_x) * el), DeviceBuffer(std::size_t(n_w) * el), DeviceBuffer(std::size_t(n_y) * el),
          DeviceBuffer(has_residual ? std::size_t(n_out) * el : 0), DeviceBuffer(std::size_t(n_bias) * sizeof(float))};
    std::uint64_t const seed = p.seed * 1000003ULL + 17ULL * unsigned(s);
    fill(b.x.p, p.dtype, n_x, seed + 1);
    fill(b.w.p, p.dtype, n_w, seed + 2);
    fill(b.y.p, p.dtype, n_y, seed + 3);
    if (has_residual) fill(b.residual.p, p.dtype, n_out, seed + 4);
    if (p.bias) fill(b.bias.p, DType::f32, n_bias, seed + 5);
    ConvArguments x = a;
    x.x.ptr = b.x.p, x.filter.ptr = b.w.p, x.y.ptr = b.y.p;
    x.out = out_role == ConvOperand::x ? b.x.p : out_role == ConvOperand::y ? b.y.p : b.w.p;
    poison(x.out, n_out);
    x.residual = has_residual ? b.residual.p : nullptr;
    x.bias = p.bias ? static_cast<float const*>(b.bias.p) : nullptr;
    set_args.push_back(x);
    bufs.push_back(std::move(b));
  }
  // tessel's scratch allocated once, as cuDNN's workspace is (the sets run one after another).
  std::size_t workspace_bytes = 0;
  status_check(tessel::conv_workspace_size(set_args[0], &workspace_bytes), "tessel::conv_workspace_size");
  DeviceBuffer const workspace(workspace_bytes);
  for (ConvArguments& x : set_args) x.workspace = workspace.p, x.workspace_bytes = workspace_bytes;

#if defined(TESSEL_HAS_CUDNN)
  std::unique_ptr<CudnnConv> baseline;
  if (compare) {
    baseline = std::make_unique<CudnnConv>(cudnn, set_args[0]);
    baseline->find(set_args[0], stream);  // writes set 0's output: poisoned again below
    if (!baseline->why().empty()) {
      r.baseline_note = baseline->why();
      compare = false;
    } else {
      r.baseline_algo = baseline->algorithm();
      if (fused) r.baseline_note = "cuDNN: the convolution alone (its legacy API fuses no bias or activation); not verified";
    }
    poison(set_args[0].out, n_out);
  }
#else
  (void)cudnn, (void)fused;
#endif

  // Verification: one run of each on set 0 into NaN-poisoned outputs, judged by the fp64 reference.
  if (p.verify && n_ref > 0) {
    ConvArguments const& x = set_args[0];
    DeviceBuffer ref(std::size_t(n_ref) * sizeof(double)), scale(std::size_t(n_ref) * sizeof(double));
    auto const d = [](DeviceBuffer const& b) { return static_cast<double*>(b.p); };
    status_check(tessel::convolution(x, stream), "tessel::convolution");
    status_check(tessel::reference::conv_device(x, d(ref), d(scale), stream), "reference convolution");
    double const tol = tessel::reference::conv_tolerance(x);
    status_check(tessel::reference::check_conv(x, d(ref), d(scale), tol, &r.check, stream), "check");
    r.verified = r.check.passed();
#if defined(TESSEL_HAS_CUDNN)
    if (compare && !fused) {
      DeviceBuffer out(std::size_t(n_out) * el);
      if (has_residual)
        cuda_check(cudaMemcpy(out.p, x.residual, std::size_t(n_out) * el, cudaMemcpyDeviceToDevice), "copy the residual for cuDNN");
      else
        poison(out.p, n_out);
      baseline->run(x, out.p, stream);
      ConvArguments y = x;
      y.out = out.p;
      status_check(tessel::reference::check_conv(y, d(ref), d(scale), tol, &r.cudnn_check, stream), "check cuDNN");
      r.cudnn_checked = true;
      r.cudnn_verified = r.cudnn_check.passed();
    }
#endif
  } else if (p.verify) {
    r.verified = true;  // nothing to write
  }

  LaunchOnSet base;
#if defined(TESSEL_HAS_CUDNN)
  if (compare) base = [&](int s) { baseline->run(set_args[std::size_t(s)], set_args[std::size_t(s)].out, stream); };
#endif
  Measurement const m = measure_interleaved(
      {p.iters, p.warmup, p.gap_ms, sets, stream},
      [&](int s) { status_check(tessel::convolution(set_args[std::size_t(s)], stream), "tessel::convolution"); }, base, nvml);
  r.tessel = m.candidate;
  r.cudnn = m.baseline;
  r.sm_clock_after = m.sm_clock_after_mhz;
  r.ran = true;
  return r;
}

// ---- reports ------------------------------------------------------------------------------------

// The JSON's "method".
constexpr char const* kMethod =
    "median of --iters launches per side after --warmup, CUDA events per launch, tessel and cuDNN interleaved, "
    "each launch on the next of the input sets rotated through >= 2x L2; cuDNN legacy convolution API, NHWC, "
    "CUDNN_TENSOR_OP_MATH, fp32 compute, fastest algorithm by cudnnFind*AlgorithmEx with its workspace, no fused "
    "bias/activation; FLOPs 2*n*z*p*q*k*t*r*s*c/groups for every pass; verified against an fp64 reference";

std::string verdict(Result const& r) {
  if (!r.p.verify) return "not verified";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.2g", r.verified ? "ok" : "FAILED", r.check.max_rel_err);
  std::string v = buf;
  if (r.cudnn_checked) {
    std::snprintf(buf, sizeof buf, " (cuDNN %s %.2g)", r.cudnn_verified ? "ok" : "FAILED", r.cudnn_check.max_rel_err);
    v += buf;
  }
  return v;
}

// One problem's object in the JSON's "results" (bench/results/*.json; docs/PERF.md) and, with
// "error" appended, its CSV row after the gpu and commit columns.
Fields fields(GpuReport const& gpu, Result const& r) {
  Problem const& p = r.p;
  auto const n = [](long long v) { return std::to_string(v); };
  tessel::ConvOutputExtents const e = tessel::conv_output_extents(p.arguments());
  double const ratio = r.cudnn_tflops() > 0 ? r.tflops() / r.cudnn_tflops() : 0.0;
  Fields f = {{"op", json_string("conv")}, {"pass", json_string(tessel::conv::to_string(p.op))},
              {"n", n(p.n)}, {"d", n(p.d)}, {"h", n(p.h)}, {"w", n(p.w)}, {"c", n(p.c)}, {"k", n(p.k)},
              {"t", n(p.t)}, {"r", n(p.r)}, {"s", n(p.s)}, {"z", n(e.z)}, {"p", n(e.p)}, {"q", n(e.q)},
              {"pad", json_string(p.dims_text(p.pad))}, {"stride", json_string(p.dims_text(p.stride))},
              {"dilation", json_string(p.dims_text(p.dilation))}, {"groups", n(p.groups)},
              {"gemm_m", n(p.gemm.m())}, {"gemm_n", n(p.gemm.n())}, {"gemm_k", n(p.gemm.k())},
              {"dtype", json_string(tessel::to_string(p.dtype))}, {"epilogue", json_string(p.epilogue())},
              {"kernel", json_string(p.picked)}, {"flops", json_number(p.flops)},
              {"ms", json_number(r.tessel.median_ms)}, {"tflops", json_number(r.tflops())},
              {"pct_peak", json_number(100.0 * r.tflops() / peak_tflops(gpu.info, p.dtype))},
              {"baseline", r.cudnn.median_ms > 0 ? json_string("cudnn") : "null"},
              {"baseline_algo", r.baseline_algo.empty() ? "null" : json_string(r.baseline_algo)},
              {"baseline_ms", json_number(r.cudnn.median_ms)}, {"baseline_tflops", json_number(r.cudnn_tflops())},
              {"ratio", ratio > 0 ? json_number(ratio) : "null"},
              {"verified", p.verify ? (r.verified ? "true" : "false") : "null"},
              {"max_rel_err", p.verify ? json_number(r.check.max_rel_err) : "null"},
              {"baseline_max_rel_err", r.cudnn_checked ? json_number(r.cudnn_check.max_rel_err) : "null"}};
  if (!r.baseline_note.empty()) f.emplace_back("baseline_note", json_string(r.baseline_note));
  f.emplace_back("tune", p.tune().empty() ? "null" : json_string(p.tune()));  // --tune's settings off their defaults
  f.insert(f.end(), {{"iters", n(p.iters)}, {"input_sets", n(r.sets)}, {"sm_clock_after_mhz", n(r.sm_clock_after)}});
  return f;
}

void print_row_header() {
  std::printf("\n%-40s %-5s %-5s %-32s %9s %8s %6s %9s %8s %6s  %s\n", "problem", "pass", "dtype", "kernel", "ms",
              "TFLOP/s", "%peak", "cuDNN ms", "TFLOP/s", "ratio", "verification (max rel err vs fp64)");
}

void print_row(GpuReport const& gpu, Result const& r) {
  Problem const& p = r.p;
  std::string head = p.shape();
  if (p.epilogue() != "-") head += " " + p.epilogue();
  if (!p.tune().empty()) head += " " + p.tune();
  char const* const pass = tessel::conv::to_string(p.op);
  if (!r.ran) {
    std::printf("%-40s %-5s %-5s error: %s\n", head.c_str(), pass, tessel::to_string(p.dtype), r.error.c_str());
    return;
  }
  double const peak = peak_tflops(gpu.info, p.dtype);
  std::printf("%-40s %-5s %-5s %-32s %9.3f %8.2f %5.1f%% ", head.c_str(), pass, tessel::to_string(p.dtype), p.picked.c_str(),
              r.tessel.median_ms, r.tflops(), 100.0 * r.tflops() / peak);
  if (r.cudnn.median_ms > 0)
    std::printf("%9.3f %8.2f %6.3f", r.cudnn.median_ms, r.cudnn_tflops(), r.tflops() / r.cudnn_tflops());
  else
    std::printf("%9s %8s %6s", "-", "-", "-");
  std::printf("  %s\n", verdict(r).c_str());
  if (!r.baseline_note.empty() && r.baseline_note != kNoCudnn) std::printf("    %s\n", r.baseline_note.c_str());
  if (p.verify && !r.verified) std::printf("    tessel: %s\n", r.check.describe().c_str());
  if (r.cudnn_checked && !r.cudnn_verified) std::printf("    cuDNN: %s\n", r.cudnn_check.describe().c_str());
  std::fflush(stdout);
}

int run_conv(std::vector<std::string> const& args) {
  Options base;
  parse_options(base, args, kOptions, "");
  if (base.has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::vector<Problem> problems;  // each made, and so checked, before any GPU work
  if (std::string const* sweep = base.get("--sweep"))  // a bad line's error names the line
    (void)read_sweep(*sweep, base, kOptions, [&](Options const& o) { problems.push_back(make_problem(o)); });
  else
    problems.push_back(make_problem(base));
  if (base.has("--dry-run")) {
    for (Problem const& p : problems)
      std::printf("%s %s %s %s kernel %s flops %.0f gemm %lldx%lldx%lld groups %lld iters %d%s%s\n", p.shape().c_str(),
                  tessel::conv::to_string(p.op), tessel::to_string(p.dtype), p.epilogue().c_str(), p.picked.c_str(),
                  p.flops, p.gemm.m(), p.gemm.n(), p.gemm.k(), p.groups, p.iters, p.tune().empty() ? "" : " tune ",
                  p.tune().c_str());
    return 0;
  }

  int dev = 0;
  GpuReport gpu = open_gpu("tessel conv", &dev);
  CudnnHandle handle = nullptr;
#if defined(TESSEL_HAS_CUDNN)
  cudnn_check(cudnnCreate(&handle), "cudnnCreate");
  std::unique_ptr<cudnnContext, void (*)(cudnnHandle_t)> guard(handle, [](cudnnHandle_t h) { cudnnDestroy(h); });
  gpu.libraries.push_back({"cuDNN", "cudnn", int(cudnnGetVersion())});
#endif
  Nvml nvml(dev);
  print_gpu_header(gpu, nvml.sm_clock_mhz());
  if (!kHaveCudnn) std::printf("baseline   %s\n", kNoCudnn);
  print_row_header();
  std::vector<Result> results;
  bool failed = false;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    progress(i, problems.size(), problems[i].shape() + " " + tessel::conv::to_string(problems[i].op));
    Result r;
    try {
      r = run_problem(problems[i], gpu, handle, nvml);
    } catch (std::runtime_error const& e) {
      r.p = problems[i];
      r.error = e.what();
      if (cudaError_t const sticky = cudaDeviceSynchronize(); sticky != cudaSuccess) {  // the context is lost: stop
        print_row(gpu, r);
        throw std::runtime_error(std::string(e.what()) + " (the CUDA context is unusable: " + cudaGetErrorString(sticky) + ")");
      }
    }
    failed = failed || !r.ran || (r.p.verify && !r.verified);
    print_row(gpu, r);
    if (auto const csv = base.get("--csv")) {
      Fields row = fields(gpu, r);
      row.emplace_back("error", json_string(r.error));
      append_csv(*csv, gpu, row);
    }
    results.push_back(std::move(r));
  }
  progress(problems.size(), problems.size(), "done");
  if (nvml.sm_clock_mhz()) std::printf("\nSM clock after the runs: %d MHz\n", nvml.sm_clock_mhz());
  if (auto const json = base.get("--json")) {
    std::vector<Fields> rows;  // the problems that ran
    for (Result const& r : results)
      if (r.ran) rows.push_back(fields(gpu, r));
    write_json(*json, gpu, suite_name(base), kMethod, rows);
  }
  if (problems.size() == 1 && !results[0].ran) throw std::runtime_error(results[0].error);
  return failed ? 1 : 0;
}

}  // namespace

static tessel::cli::Register reg{{"conv", "run, verify and time a convolution pass against cuDNN (--help)", run_conv}};

#else  // built without CUDA

namespace {
int run_conv(std::vector<std::string> const&) {
  throw tessel::cli::UsageError("this tessel was built without CUDA (TESSEL_ENABLE_CUDA=OFF); rebuild with CUDA to run convolutions");
}
}  // namespace
static tessel::cli::Register reg{{"conv", "run, verify and time a convolution pass (needs a CUDA build)", run_conv}};

#endif
