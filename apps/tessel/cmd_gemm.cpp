// apps/tessel/cmd_gemm.cpp -- `tessel gemm`: run, verify and time one GEMM (or a sweep of them)
// against cuBLAS in the same process.
//
//   tessel gemm                                     4096^3 bf16, layout tn, verified, vs cuBLAS
//   tessel gemm --m 8192 --n 8192 --k 8192 --dtype bf16 --json r.json
//   tessel gemm --sweep bench/sgemm.txt --json bench/results/sgemm-h200.json
//
// fp8 (--dtype e4m3|e5m2, --b-dtype for a mixed pair) compares against cuBLASLt's fp8 matmul
// (cublasGemmEx has no fp8), which runs only the tn layout; the row says so for the others.
//
// Method (docs/PERF.md): inputs are uniform(-1,1) from a fixed hash (never zeros; fp8 inputs are
// uniform(-2,2) rounded to fp8, so products span many exponents), outputs are
// poisoned with NaN before the verification run; tessel and cuBLAS run the same inputs; the GPU
// fp64 reference judges both (tessel/reference/gemm_device.hpp). Timing: warm-up, then
// `iters` pairs interleaved tessel, cuBLAS, tessel, cuBLAS ... each launch between its own CUDA
// events, each launch (either side's) on the next of the input sets, which together exceed 2x the
// L2; the median is reported.
// Every error is one line; bad arguments and a missing GPU exit 2, failures while running exit 1.
#include "command.hpp"

#if defined(TESSEL_HAS_CUDA)

#include <tessel/gemm.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifndef TESSEL_GIT_COMMIT
#define TESSEL_GIT_COMMIT "unknown"
#endif

namespace {

using tessel::DType;
using tessel::GemmArguments;
using tessel::MatrixOrder;
using tessel::cli::UsageError;

constexpr char const* kUsage =
    "usage: tessel gemm [options]            run, verify and time D = alpha*op(A)*op(B) + beta*C\n"
    "\n"
    "problem:\n"
    "  --m M --n N --k K   sizes (default 4096 each)\n"
    "  --batch B           batch count, matrices packed back to back (default 1)\n"
    "  --dtype T           A/B dtype: bf16 (default), fp16, tf32, fp32, e4m3, e5m2\n"
    "  --b-dtype T         B's dtype when it differs from A's (fp8: e4m3 x e5m2, e5m2 x e4m3)\n"
    "  --out-dtype T       C/D dtype: default fp32 for fp32/tf32, bf16 for fp8, else the input dtype\n"
    "  --a-scale S --b-scale S      fp8 per-tensor scales: D = alpha*(S_a*A)(S_b*B) + beta*C (default 1)\n"
    "  --layout L          tn (default), nn, nt, tt: BLAS transposes of A and B, C/D column-major\n"
    "  --lda L --ldb L --ldc L      leading dimensions of A, B and C/D (default: packed); BLAS's\n"
    "                               rules: lda >= K for a 't' A, >= M for an 'n' one; ldc >= M\n"
    "  --alpha A --beta B  scalars (default 1 and 0)\n"
    "  --kernel NAME       a kernel from `tessel list`, or auto (default: the heuristic)\n"
    "  --tune K=V[,K=V...] override a host choice of the sm_90a kernels (A/B runs, docs/sm90_gemm.md):\n"
    "                      splits=S, stream-k=0|1, split-tail=0|1, balance=0|1, compact=0|1,\n"
    "                      lean=0|1, align=16|32, raster=G[m|n], l2-promotion=0..3,\n"
    "                      in-flight=L, l2-hints=A/B (0 none, 1 evict-first, 2 evict-last),\n"
    "                      tf32-truncate=0|1\n"
    "method:\n"
    "  --iters N           timed launches of each side (default 30)\n"
    "  --warmup N          untimed launches of each side first (default 5)\n"
    "  --gap-ms G          idle milliseconds before each timed pair: burst figures (default 0)\n"
    "  --verify | --no-verify       judge both results against the fp64 GPU reference (default on)\n"
    "  --compare cublas|none        the baseline run in the same process (default cublas;\n"
    "                               cuBLASLt's fp8 matmul for fp8, tn layout only)\n"
    "  --seed S            input data seed (default 1)\n"
    "output:\n"
    "  --csv FILE          append one row per problem\n"
    "  --json FILE         write the results as JSON (docs/PERF.md; DESIGN.md section 6)\n"
    "  --suite NAME        the suite name recorded in the JSON (default: the sweep file's stem)\n"
    "many problems:\n"
    "  --sweep FILE        one problem per line, written as the options above ('#' comments);\n"
    "                      each line's options override the command line's\n"
    "  --dry-run           print the problems a sweep would run, and stop (no GPU needed)\n"
    "  --help              this text\n";

// ---- options ----------------------------------------------------------------------------------

struct Options {
  std::map<std::string, std::string> values;
  bool has(std::string const& k) const { return values.count(k) != 0; }
};

bool is_flag(std::string const& name) {
  return name == "--verify" || name == "--no-verify" || name == "--dry-run" || name == "--help";
}

bool is_known(std::string const& name) {
  static char const* const known[] = {"--m",      "--n",       "--k",      "--batch",   "--dtype",   "--b-dtype",
                                      "--out-dtype", "--a-scale", "--b-scale", "--layout", "--alpha", "--beta",
                                      "--kernel", "--tune",    "--iters",   "--warmup", "--gap-ms",  "--compare", "--seed",
                                      "--lda",    "--ldb",     "--ldc",
                                      "--csv",    "--json",    "--suite",  "--sweep"};
  for (char const* k : known)
    if (name == k) return true;
  return is_flag(name);
}

void parse_into(Options& o, std::vector<std::string> const& args, std::string const& where) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos && name.rfind("--", 0) == 0) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (!is_known(name)) {
      if (name.rfind("-", 0) == 0) throw UsageError(where + "unknown option '" + name + "' (try: tessel gemm --help)");
      throw UsageError(where + "unexpected argument '" + name + "' (options start with --; try: tessel gemm --help)");
    }
    if (is_flag(name)) {
      if (value) throw UsageError(where + name + " takes no value");
      o.values[name] = "";
      if (name == "--verify") o.values.erase("--no-verify");
      if (name == "--no-verify") o.values.erase("--verify");
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(where + name + " needs a value (try: tessel gemm --help)");
      value = args[++i];
    }
    if (value->empty()) throw UsageError(where + name + " needs a non-empty value");
    o.values[name] = *value;
  }
}

long long parse_int(std::string const& option, std::string const& text, long long lo, long long hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw UsageError(option + ": '" + text + "' is not an integer");
  if (v < lo || v > hi)
    throw UsageError(option + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + text);
  return v;
}

float parse_float(std::string const& option, std::string const& text) {
  std::size_t used = 0;
  float v = 0;
  try {
    v = std::stof(text, &used);
  } catch (std::exception const&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw UsageError(option + ": '" + text + "' is not a number");
  return v;
}

// ---- one problem --------------------------------------------------------------------------------

struct Problem {
  long long m = 4096, n = 4096, k = 4096, batch = 1;
  DType ab = DType::bf16, bt = DType::bf16, cd = DType::bf16;  // A, B, C/D
  std::string layout = "tn";
  long long lda = 0, ldb = 0, ldc = 0;  // 0: packed (the smallest legal leading dimension)
  float alpha = 1.0f, beta = 0.0f;
  float a_scale = 1.0f, b_scale = 1.0f;
  std::string kernel = "auto";
  tessel::GemmOptions options;  // --tune
  std::string tune;             // its text, for the reports
  int iters = 30, warmup = 5;
  double gap_ms = 0.0;
  bool verify = true, compare = true;
  unsigned long long seed = 1;

  std::string shape() const {
    std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    if (batch != 1) s = std::to_string(batch) + "x" + s;
    if (lda != 0 || ldb != 0 || ldc != 0)  // e.g. 1024x1024x1000/ld1008,1008,-: '-' packed
      s += "/ld" + ld_text(lda) + "," + ld_text(ldb) + "," + ld_text(ldc);
    return s;
  }
  static std::string ld_text(long long ld) { return ld != 0 ? std::to_string(ld) : "-"; }
  std::string dtype_name() const {
    std::string s = tessel::to_string(ab);
    if (bt != ab) s += std::string("x") + tessel::to_string(bt);
    bool const default_out = cd == default_out_dtype(ab);
    if (!default_out) s += std::string("->") + tessel::to_string(cd);
    return s;
  }
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
  static DType default_out_dtype(DType in) {
    return (in == DType::f32 || in == DType::tf32) ? DType::f32 : tessel::is_fp8(in) ? DType::bf16 : in;
  }
};

// --tune's K=V list onto GemmOptions (tessel/gemm/device/gemm_arguments.hpp), checked by the
// host API's own rules (gemm_check_options) so the CLI's message is the library's.
tessel::GemmOptions parse_tune(std::string const& text) {
  tessel::GemmOptions o;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t const end = std::min(text.find(',', at), text.size());
    std::string const item = text.substr(at, end - at);
    at = end + 1;
    std::size_t const eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("--tune: '" + item + "' is not KEY=VALUE (try: tessel gemm --help)");
    std::string const key = item.substr(0, eq), v = item.substr(eq + 1), what = "--tune " + key;
    auto const flag = [&] { return parse_int(what, v, 0, 1) != 0; };
    if (key == "splits") o.splits = int(parse_int(what, v, 1, 1 << 20));
    else if (key == "stream-k") o.stream_k = flag();
    else if (key == "split-tail") o.split_tail = flag();
    else if (key == "balance") o.balance_waves = flag();
    else if (key == "compact") o.compact_units = flag();
    else if (key == "lean") o.lean_builds = flag();
    else if (key == "align") o.operand_align = int(parse_int(what, v, 16, 32));
    else if (key == "l2-promotion") o.l2_promotion = int(parse_int(what, v, 0, 3));
    else if (key == "in-flight") o.skinny_in_flight = int(parse_int(what, v, 0, 1 << 20));
    else if (key == "tf32-truncate") o.tf32_truncate = flag();
    else if (key == "raster") {
      std::string digits = v;
      if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'n')) o.raster_along = digits.back(), digits.pop_back();
      o.raster_group = int(parse_int(what, digits, 1, 8));
    } else if (key == "l2-hints") {
      std::size_t const slash = v.find('/');
      if (slash == std::string::npos) throw UsageError(what + ": '" + v + "' is not A/B (each 0, 1 or 2)");
      o.skinny_l2_hint_a = int(parse_int(what, v.substr(0, slash), 0, 2));
      o.skinny_l2_hint_b = int(parse_int(what, v.substr(slash + 1), 0, 2));
    } else {
      throw UsageError("--tune: unknown key '" + key +
                       "' (splits, stream-k, split-tail, balance, compact, lean, align, raster, l2-promotion, "
                       "in-flight, l2-hints, tf32-truncate)");
    }
  }
  if (tessel::Status const s = tessel::gemm_check_options(o); !s) throw UsageError("--tune: " + s.reason);
  return o;
}

Problem make_problem(Options const& o) {
  Problem p;
  auto get = [&](char const* k) -> std::string const* { return o.has(k) ? &o.values.at(k) : nullptr; };
  long long const kMax = 1LL << 40;
  if (auto v = get("--m")) p.m = parse_int("--m", *v, 0, kMax);
  if (auto v = get("--n")) p.n = parse_int("--n", *v, 0, kMax);
  if (auto v = get("--k")) p.k = parse_int("--k", *v, 0, kMax);
  if (auto v = get("--batch")) p.batch = parse_int("--batch", *v, 0, kMax);
  if (auto v = get("--dtype")) {
    auto t = tessel::parse_dtype(*v);
    if (!t) throw UsageError("--dtype: '" + *v + "' is not one of fp32, tf32, fp16, bf16, e4m3, e5m2");
    p.ab = *t;
  }
  p.bt = p.ab;
  if (auto v = get("--b-dtype")) {
    auto t = tessel::parse_dtype(*v);
    if (!t) throw UsageError("--b-dtype: '" + *v + "' is not one of fp32, tf32, fp16, bf16, e4m3, e5m2");
    p.bt = *t;
  }
  p.cd = Problem::default_out_dtype(p.ab);
  if (auto v = get("--out-dtype")) {
    auto t = tessel::parse_dtype(*v);
    if (!t || *t == DType::tf32 || tessel::is_fp8(*t))
      throw UsageError("--out-dtype: '" + *v + "' is not one of fp32, fp16, bf16");
    p.cd = *t;
  }
  if (auto v = get("--a-scale")) p.a_scale = parse_float("--a-scale", *v);
  if (auto v = get("--b-scale")) p.b_scale = parse_float("--b-scale", *v);
  if (auto v = get("--layout")) {
    if (*v != "tn" && *v != "nn" && *v != "nt" && *v != "tt")
      throw UsageError("--layout: '" + *v + "' is not one of tn, nn, nt, tt");
    p.layout = *v;
  }
  if (auto v = get("--lda")) p.lda = parse_int("--lda", *v, 1, kMax);
  if (auto v = get("--ldb")) p.ldb = parse_int("--ldb", *v, 1, kMax);
  if (auto v = get("--ldc")) p.ldc = parse_int("--ldc", *v, 1, kMax);
  if (auto v = get("--alpha")) p.alpha = parse_float("--alpha", *v);
  if (auto v = get("--beta")) p.beta = parse_float("--beta", *v);
  if (auto v = get("--kernel")) {
    if (*v != "auto" && tessel::find_gemm_kernel(*v) == nullptr)
      throw UsageError("--kernel: '" + *v + "' is not a compiled kernel (see: tessel list)");
    p.kernel = *v;
  }
  if (auto v = get("--tune")) {
    p.options = parse_tune(*v);
    p.tune = *v;
  }
  if (auto v = get("--iters")) p.iters = int(parse_int("--iters", *v, 1, 100000));
  if (auto v = get("--warmup")) p.warmup = int(parse_int("--warmup", *v, 0, 100000));
  if (auto v = get("--gap-ms")) p.gap_ms = double(parse_int("--gap-ms", *v, 0, 10000));
  if (auto v = get("--seed")) p.seed = static_cast<unsigned long long>(parse_int("--seed", *v, 0, 1LL << 62));
  if (auto v = get("--compare")) {
    if (*v != "cublas" && *v != "none") throw UsageError("--compare: '" + *v + "' is not one of cublas, none");
    p.compare = *v == "cublas";
  }
  p.verify = !o.has("--no-verify");
  return p;
}

// The host-API arguments (pointers unset): BLAS convention, C/D column-major; 't' stores op(X)
// row-major (a transposed column-major matrix), 'n' column-major.
GemmArguments gemm_arguments(Problem const& p) {
  MatrixOrder const ao = p.layout[0] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  MatrixOrder const bo = p.layout[1] == 't' ? MatrixOrder::row_major : MatrixOrder::col_major;
  GemmArguments g = tessel::make_packed_gemm(p.m, p.n, p.k, p.batch, p.ab, p.cd, ao, bo, MatrixOrder::col_major);
  // Leading dimensions asked for: the matrices stay packed back to back, each ld * (stored
  // columns) elements (a stored row-major r x c matrix has r rows of ld; column-major, c columns).
  if (p.lda != 0) g.lda = p.lda, g.batch_stride_a = p.lda * (ao == MatrixOrder::row_major ? p.m : p.k);
  if (p.ldb != 0) g.ldb = p.ldb, g.batch_stride_b = p.ldb * (bo == MatrixOrder::row_major ? p.k : p.n);
  if (p.ldc != 0) g.ldc = g.ldd = p.ldc, g.batch_stride_c = g.batch_stride_d = p.ldc * p.n;
  g.b_type = p.bt;
  g.alpha = p.alpha, g.beta = p.beta;
  g.a_scale = p.a_scale, g.b_scale = p.b_scale;
  g.kernel = p.kernel.c_str();
  g.options = p.options;
  return g;
}

// ---- the GPU and its conditions -------------------------------------------------------------------

std::string commit_id() {
  std::string c = TESSEL_GIT_COMMIT;
  if (c == "unknown")
    if (char const* env = std::getenv("TESSEL_GIT_COMMIT"); env && *env) c = env;
  return c;
}

// NVML, if the driver ships it (loaded at run time: no link dependency): the SM clock and power now.
class Nvml {
 public:
  explicit Nvml(int cuda_device) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto by_pci = reinterpret_cast<int (*)(char const*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
    power_ = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib_, "nvmlDeviceGetPowerUsage"));
    char bus[64] = {};
    if (!init || !by_pci || !clock_ || init() != 0 || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess ||
        by_pci(bus, &dev_) != 0)
      dev_ = nullptr;
  }
  ~Nvml() {
    if (lib_) dlclose(lib_);
  }
  Nvml(Nvml const&) = delete;
  Nvml& operator=(Nvml const&) = delete;
  int sm_clock_mhz() const {
    unsigned v = 0;
    return dev_ && clock_(dev_, /*NVML_CLOCK_SM=*/1, &v) == 0 ? int(v) : 0;
  }
  double power_w() const {
    unsigned mw = 0;
    return dev_ && power_ && power_(dev_, &mw) == 0 ? mw / 1000.0 : 0.0;
  }

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*power_)(void*, unsigned*) = nullptr;
};

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// Dense peak TFLOP/s of the math the dtype asks for: datasheet figures for H100/H200 SXM, else
// an estimate from SMs x clock x per-SM rate of the architecture.
double peak_tflops(tessel::DeviceInfo const& d, DType t) {
  bool const hopper_sxm = d.cc_major == 9 && (d.name.find("H100 80GB HBM3") != std::string::npos ||
                                              d.name.find("H200") != std::string::npos ||
                                              d.name.find("H100 SXM") != std::string::npos);
  if (hopper_sxm) return t == DType::f32 ? 66.9 : t == DType::tf32 ? 494.7 : tessel::is_fp8(t) ? 1978.9 : 989.4;
  double const ghz = d.clock_mhz / 1000.0, sms = d.sm_count;
  int const cc = d.cc_major * 10 + d.cc_minor;
  double const fp32_per_sm = cc == 80 ? 128 : 256;             // flops/clock
  double const half_per_sm = cc >= 90 ? 4096 : cc == 80 ? 2048 : 1024;
  double per_sm = t == DType::f32 ? fp32_per_sm : t == DType::tf32 ? half_per_sm / 2 : half_per_sm;
  if (tessel::is_fp8(t)) per_sm = cc >= 89 ? 2 * half_per_sm : fp32_per_sm;  // no fp8 tensor cores before sm_89
  return sms * per_sm * ghz / 1000.0;
}

struct GpuReport {
  tessel::DeviceInfo info;
  int cublas_version = 0;
  std::string commit, date;
};

// ---- device buffers ------------------------------------------------------------------------------

void cuda_check(cudaError_t err, char const* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}
void status_check(tessel::Status const& s, char const* what) {
  if (!s) throw std::runtime_error(std::string(what) + ": " + s.reason);
}
void cublas_check(cublasStatus_t s, char const* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes) cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
};

struct Events {
  std::vector<cudaEvent_t> e;
  explicit Events(std::size_t n) : e(n, nullptr) {
    for (auto& x : e) cuda_check(cudaEventCreate(&x), "cudaEventCreate");
  }
  ~Events() {
    for (auto x : e)
      if (x) cudaEventDestroy(x);
  }
};

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
};
Timing summarize(std::vector<float> v) {
  Timing t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  t.median_ms = n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
  t.min_ms = v.front(), t.max_ms = v.back();
  return t;
}

struct Result {
  Problem p;
  std::string kernel;
  bool ran = false;
  std::string error;  // why it did not run (one line)
  Timing tessel, cublas;
  std::string baseline = "cublas";  // "cublaslt" for fp8
  std::string baseline_note;        // why the baseline did not run (e.g. cuBLASLt's fp8 layouts)
  bool verified = false, cublas_verified = false;
  tessel::reference::GemmCheck check, cublas_check;
  int sets = 0;
  int sm_clock_after = 0;
  double power_after = 0.0;
  double tflops() const { return tessel.median_ms > 0 ? p.flops() / (tessel.median_ms * 1e-3) / 1e12 : 0.0; }
  double cublas_tflops() const { return cublas.median_ms > 0 ? p.flops() / (cublas.median_ms * 1e-3) / 1e12 : 0.0; }
};

cudaDataType cuda_type(DType t) {
  switch (t) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

// cuBLAS on the same arguments: fp32 with CUBLAS_COMPUTE_32F (no tensor cores, the SGEMM
// baseline), tf32 with CUBLAS_COMPUTE_32F_FAST_TF32, fp16/bf16 with fp32 accumulation.
// In place: D holds C on entry (the caller copies it), as cuBLAS's C.
void run_cublas(cublasHandle_t h, GemmArguments const& g, void* d) {
  cublasOperation_t const ta = g.a_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t const tb = g.b_order == MatrixOrder::row_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasComputeType_t const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float const alpha = g.alpha, beta = g.beta;
  cublasStatus_t s;
  if (g.batch_count == 1) {
    s = cublasGemmEx(h, ta, tb, int(g.m), int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type), int(g.lda), g.b,
                     cuda_type(g.b_type), int(g.ldb), &beta, d, cuda_type(g.c_type), int(g.ldd), compute,
                     CUBLAS_GEMM_DEFAULT);
  } else {
    s = cublasGemmStridedBatchedEx(h, ta, tb, int(g.m), int(g.n), int(g.k), &alpha, g.a, cuda_type(g.a_type),
                                   int(g.lda), g.batch_stride_a, g.b, cuda_type(g.b_type), int(g.ldb), g.batch_stride_b,
                                   &beta, d, cuda_type(g.c_type), int(g.ldd), g.batch_stride_d, int(g.batch_count),
                                   compute, CUBLAS_GEMM_DEFAULT);
  }
  cublas_check(s, "cuBLAS GEMM");
}

void lt_check(cublasStatus_t s, char const* what) { cublas_check(s, what); }

cudaDataType lt_type(DType t) {
  return t == DType::e4m3 ? CUDA_R_8F_E4M3 : t == DType::e5m2 ? CUDA_R_8F_E5M2 : cuda_type(t);
}

// cuBLASLt's fp8 matmul on the same arguments (cublasGemmEx has no fp8). Its fp8 rules on
// Hopper: A transposed and B not ("TN": both operands K-major), C/D column-major bf16, fp16 or
// fp32, fp32 compute; the scales go in as device scalars (A_SCALE_POINTER, B_SCALE_POINTER):
// D = alpha * a_scale * b_scale * A B + beta * C, as tessel's. A 32 MiB workspace and the
// heuristic's first algorithm; FAST_ACCUM left off (fp32 promotion, like tessel's kernels).
// Built once per problem; `why()` says when cuBLASLt cannot run it (the row prints that).
class LtFp8Gemm {
 public:
  static constexpr std::size_t kWorkspace = std::size_t(32) << 20;

  LtFp8Gemm(cublasLtHandle_t lt, GemmArguments const& g, std::string const& layout) : lt_(lt) {
    if (g.a_order != MatrixOrder::row_major || g.b_order != MatrixOrder::col_major || g.c_order != MatrixOrder::col_major) {
      why_ = "cuBLASLt: not supported for layout " + layout + " (its fp8 matmul needs tn: A and B K-major)";
      return;
    }
    lt_check(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    cublasOperation_t const ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    // Each scale on its own 256-byte line: cuBLASLt's matmul refuses (not supported, after its
    // heuristic chose an algorithm) a scale pointer that is only 4-byte aligned.
    void const* a_scale = scales_.p;
    void const* b_scale = static_cast<char const*>(scales_.p) + 256;
    cuda_check(cudaMemcpy(scales_.p, &g.a_scale, sizeof(float), cudaMemcpyHostToDevice), "cuBLASLt scales");
    cuda_check(cudaMemcpy(static_cast<char*>(scales_.p) + 256, &g.b_scale, sizeof(float), cudaMemcpyHostToDevice), "cuBLASLt scales");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale), "A_SCALE_POINTER");
    lt_check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale), "B_SCALE_POINTER");
    // Stored shapes, column-major: A is K x M (transposed), B is K x N, D is M x N.
    make_layout(&a_, g.a_type, g.k, g.m, g.lda, g.batch_count, g.batch_stride_a);
    make_layout(&b_, g.b_type, g.k, g.n, g.ldb, g.batch_count, g.batch_stride_b);
    make_layout(&d_, g.c_type, g.m, g.n, g.ldd, g.batch_count, g.batch_stride_d);
    lt_check(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    std::uint64_t const ws = kWorkspace;
    lt_check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "workspace");
    int found = 0;
    cublasStatus_t const st = cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, d_, d_, pref_, 1, &algo_, &found);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0)
      why_ = std::string("cuBLASLt: no fp8 algorithm for this problem (") +
             (st != CUBLAS_STATUS_SUCCESS ? cublasGetStatusString(st) : "the heuristic found none") + ")";
  }
  ~LtFp8Gemm() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_, b_, d_})
      if (l) cublasLtMatrixLayoutDestroy(l);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }
  LtFp8Gemm(LtFp8Gemm const&) = delete;
  LtFp8Gemm& operator=(LtFp8Gemm const&) = delete;

  std::string const& why() const { return why_; }

  // One call whose refusal is an answer, not an error: empty when cuBLASLt ran, else why not.
  std::string try_run(GemmArguments const& g, void* d, cudaStream_t stream) const {
    float const alpha = g.alpha, beta = g.beta;
    cublasStatus_t const s = cublasLtMatmul(lt_, op_, &alpha, g.a, a_, g.b, b_, &beta, d, d_, d, d_, &algo_.algo,
                                            workspace_.p, kWorkspace, stream);
    return s == CUBLAS_STATUS_SUCCESS ? std::string() : std::string("cuBLASLt: cublasLtMatmul refused (") + cublasGetStatusString(s) + ")";
  }

  // In place, like run_cublas: D holds C on entry.
  void run(GemmArguments const& g, void* d, cudaStream_t stream) const {
    float const alpha = g.alpha, beta = g.beta;
    lt_check(cublasLtMatmul(lt_, op_, &alpha, g.a, a_, g.b, b_, &beta, d, d_, d, d_, &algo_.algo, workspace_.p, kWorkspace,
                            stream),
             "cublasLtMatmul (fp8)");
  }

 private:
  static void make_layout(cublasLtMatrixLayout_t* l, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          std::int64_t batch, std::int64_t stride) {
    lt_check(cublasLtMatrixLayoutCreate(l, lt_type(t), std::uint64_t(rows), std::uint64_t(cols), ld), "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      std::int32_t const count = std::int32_t(batch);
      lt_check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "BATCH_COUNT");
      lt_check(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
               "STRIDED_BATCH_OFFSET");
    }
  }

  cublasLtHandle_t lt_;
  std::string why_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  DeviceBuffer scales_{512};
  DeviceBuffer workspace_{kWorkspace};
};

Result run_problem(Problem const& p, GpuReport const& gpu, cublasHandle_t handle, cublasLtHandle_t lt, Nvml const& nvml) {
  Result r;
  r.p = p;
  GemmArguments g = gemm_arguments(p);  // validated by run_gemm (with placeholder pointers)
  bool const int_sizes = p.m < (1LL << 31) && p.n < (1LL << 31) && p.k < (1LL << 31) && p.batch < (1LL << 31);
  bool compare = p.compare && int_sizes;
  bool const fp8 = tessel::is_fp8(g.a_type);
  std::unique_ptr<LtFp8Gemm> lt_gemm;
  if (fp8) r.baseline = "cublaslt";
  if (compare && fp8) {
    lt_gemm = std::make_unique<LtFp8Gemm>(lt, g, p.layout);
    if (!lt_gemm->why().empty()) {
      r.baseline_note = lt_gemm->why();
      compare = false;
    }
  }
  cudaStream_t const stream = nullptr;
  auto run_baseline = [&](GemmArguments const& x, void* d) {
    if (fp8) {
      lt_gemm->run(x, d, stream);
    } else {
      run_cublas(handle, x, d);
    }
  };
  {
    float dummy = 0;  // can_implement needs non-null pointers where data is read
    GemmArguments probe = g;
    probe.a = probe.b = probe.c = &dummy;
    probe.d = &dummy;
    if (tessel::Status s = tessel::can_implement(probe); !s) {
      r.error = s.reason;
      return r;
    }
    // The heuristic's pick for a row that fails before its buffers exist; replaced below by the
    // pick on the real operands.
    tessel::GemmKernelInfo const* k = tessel::select_gemm_kernel(probe);
    r.kernel = k ? k->name : "?";
    if (!tessel::gemm_reads_ab(probe)) r.kernel = "scale (K = 0 or alpha = 0)";
  }

  std::size_t const bytes_a = std::size_t(g.batch_stride_a * g.batch_count) * tessel::size_of(g.a_type);
  std::size_t const bytes_b = std::size_t(g.batch_stride_b * g.batch_count) * tessel::size_of(g.b_type);
  std::size_t const bytes_c = std::size_t(g.batch_stride_c * g.batch_count) * tessel::size_of(g.c_type);
  std::size_t const set_bytes = bytes_a + bytes_b + 2 * bytes_c;  // A, B, C, D
  std::size_t const ref_bytes = p.verify ? std::size_t(p.m * p.n * p.batch) * 2 * sizeof(double) : 0;
  std::size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  std::size_t const budget = std::size_t(double(free_b) * 0.85);
  std::size_t const fixed = ref_bytes + (compare ? bytes_c : 0);
  if (set_bytes + fixed > budget) {
    r.error = "needs " + std::to_string((set_bytes + fixed) >> 20) + " MiB, the GPU has " + std::to_string(free_b >> 20) +
              " MiB free";
    return r;
  }
  // Input sets rotated so that together they are at least twice the L2 (nothing stays cached).
  std::size_t const want = std::max<std::size_t>(2, (2 * gpu.info.l2_bytes + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1));
  int sets = int(std::min<std::size_t>({want, 64, std::max<std::size_t>(1, (budget - fixed) / std::max<std::size_t>(set_bytes, 1))}));
  // Diagnostics only: TESSEL_CLI_SETS=N caps the rotation at N sets, so a launch may find its code,
  // parameters and inputs in the L2 (what a warm cache changes; the JSON records input_sets).
  if (char const* env = std::getenv("TESSEL_CLI_SETS"); env != nullptr && std::atoi(env) > 0) sets = std::min(sets, std::atoi(env));
  r.sets = sets;

  struct Set {
    DeviceBuffer a, b, c, d;
  };
  std::vector<Set> bufs;
  for (int s = 0; s < sets; ++s) {
    Set x{DeviceBuffer(bytes_a), DeviceBuffer(bytes_b), DeviceBuffer(bytes_c), DeviceBuffer(bytes_c)};
    unsigned long long const seed = p.seed * 1000003ULL + 17ULL * unsigned(s);
    float const lo = fp8 ? -2.0f : -1.0f, hi = -lo;  // fp8: a wider range, so values span more exponents
    status_check(tessel::reference::fill_uniform_device(x.a.p, g.a_type, bytes_a / tessel::size_of(g.a_type), seed + 1, lo, hi), "fill A");
    status_check(tessel::reference::fill_uniform_device(x.b.p, g.b_type, bytes_b / tessel::size_of(g.b_type), seed + 2, lo, hi), "fill B");
    status_check(tessel::reference::fill_uniform_device(x.c.p, g.c_type, bytes_c / tessel::size_of(g.c_type), seed + 3), "fill C");
    status_check(tessel::reference::fill_constant_device(x.d.p, g.c_type, bytes_c / tessel::size_of(g.c_type), NAN), "poison D");
    bufs.push_back(std::move(x));
  }
  auto args_for = [&](int s) {
    GemmArguments x = g;
    x.a = bufs[s].a.p, x.b = bufs[s].b.p, x.c = bufs[s].c.p, x.d = bufs[s].d.p;
    return x;
  };
  // The kernel column names what runs: the pick on the operands themselves, since the heuristic
  // reads their addresses (an operand whose rows start off the L2's 32-byte sectors takes other
  // tiles), which the probe's placeholder on the stack does not share.
  if (tessel::gemm_reads_ab(g)) {
    tessel::GemmKernelInfo const* k = tessel::select_gemm_kernel(args_for(0));
    r.kernel = k ? k->name : "?";
  }
  // cuBLASLt can still refuse at the matmul after its heuristic chose an algorithm: one trial
  // run (into set 0's D, poisoned again after) decides, and a refusal leaves the row without a
  // baseline instead of failing it.
  if (compare && fp8) {
    GemmArguments const x = args_for(0);
    if (std::string const why = lt_gemm->try_run(x, x.d, stream); !why.empty()) {
      r.baseline_note = why;
      compare = false;
    }
    status_check(tessel::reference::fill_constant_device(x.d, g.c_type, bytes_c / tessel::size_of(g.c_type), NAN), "poison D");
  }
  // Verification: one run of each on set 0 into NaN-poisoned outputs, judged by the fp64 reference.
  DeviceBuffer d_cublas(compare ? bytes_c : 0);
  if (p.verify) {
    DeviceBuffer ref(ref_bytes / 2), scale(ref_bytes / 2);
    GemmArguments x = args_for(0);
    status_check(tessel::gemm(x, stream), "tessel::gemm");
    status_check(tessel::reference::gemm_device(x, static_cast<double*>(ref.p), static_cast<double*>(scale.p), stream), "reference GEMM");
    double const tol = tessel::reference::gemm_tolerance(g.a_type, g.c_type, g.k);
    status_check(tessel::reference::check_device(x, static_cast<double const*>(ref.p), static_cast<double const*>(scale.p), tol, &r.check, stream), "check");
    r.verified = r.check.passed();
    if (compare) {
      cuda_check(cudaMemcpy(d_cublas.p, x.c, bytes_c, cudaMemcpyDeviceToDevice), "copy C for cuBLAS");
      run_baseline(x, d_cublas.p);
      GemmArguments y = x;
      y.d = d_cublas.p;
      status_check(tessel::reference::check_device(y, static_cast<double const*>(ref.p), static_cast<double const*>(scale.p), tol, &r.cublas_check, stream), "check cuBLAS");
      r.cublas_verified = r.cublas_check.passed();
    }
  }

  // Timing: warm-up, then interleaved pairs, each launch between its own events. Every launch,
  // tessel's or the baseline's, takes the next input set in turn: a side that ran on the set the
  // other had just read would find much of it in L2 (all of it where the operands are smaller
  // than the L2, as 16x4096x4096's 32 MiB B on the H100's 50 MB).
  Events ev(std::size_t(4) * p.iters);
  int launch = 0;
  auto next_set = [&] { return args_for(launch++ % sets); };
  for (int i = 0; i < p.warmup; ++i) {
    GemmArguments const x = next_set();
    status_check(tessel::gemm(x, stream), "tessel::gemm");
    if (compare) {
      GemmArguments const y = next_set();
      run_baseline(y, y.d);
    }
  }
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  for (int i = 0; i < p.iters; ++i) {
    if (p.gap_ms > 0) {
      cuda_check(cudaStreamSynchronize(stream), "gap");
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(p.gap_ms * 1000)));
    }
    GemmArguments const x = next_set();
    cuda_check(cudaEventRecord(ev.e[4 * i + 0], stream), "cudaEventRecord");
    status_check(tessel::gemm(x, stream), "tessel::gemm");
    cuda_check(cudaEventRecord(ev.e[4 * i + 1], stream), "cudaEventRecord");
    if (compare) {
      GemmArguments const y = next_set();
      cuda_check(cudaEventRecord(ev.e[4 * i + 2], stream), "cudaEventRecord");
      run_baseline(y, y.d);
      cuda_check(cudaEventRecord(ev.e[4 * i + 3], stream), "cudaEventRecord");
    }
  }
  cuda_check(cudaStreamSynchronize(stream), "timed runs");
  r.sm_clock_after = nvml.sm_clock_mhz();
  r.power_after = nvml.power_w();
  std::vector<float> t_ms, c_ms;
  for (int i = 0; i < p.iters; ++i) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, ev.e[4 * i + 0], ev.e[4 * i + 1]), "cudaEventElapsedTime");
    t_ms.push_back(ms);
    if (compare) {
      cuda_check(cudaEventElapsedTime(&ms, ev.e[4 * i + 2], ev.e[4 * i + 3]), "cudaEventElapsedTime");
      c_ms.push_back(ms);
    }
  }
  r.tessel = summarize(t_ms);
  r.cublas = summarize(c_ms);
  r.ran = true;
  return r;
}

// ---- reports ------------------------------------------------------------------------------------

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
std::string json_string(std::string const& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o + "\"";
}

// The leading dimensions asked for (--lda/--ldb/--ldc), or nothing for a packed problem.
std::string ld_json(Problem const& p) {
  if (p.lda == 0 && p.ldb == 0 && p.ldc == 0) return "";
  auto const one = [](long long ld) { return ld != 0 ? std::to_string(ld) : std::string("null"); };
  return ", \"lda\": " + one(p.lda) + ", \"ldb\": " + one(p.ldb) + ", \"ldc\": " + one(p.ldc);
}

void write_json(std::string const& path, GpuReport const& gpu, std::string const& suite, std::vector<Result> const& rs) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write --json file '" + path + "'");
  f << "{\n";
  f << "  \"gpu\": " << json_string(gpu.info.name) << ",\n";
  f << "  \"sm_count\": " << gpu.info.sm_count << ",\n";
  f << "  \"clock_mhz\": " << gpu.info.clock_mhz << ",\n";
  f << "  \"driver\": " << json_string(version_text(gpu.info.driver_version)) << ",\n";
  f << "  \"cuda\": " << json_string(version_text(gpu.info.runtime_version)) << ",\n";
  f << "  \"cublas\": " << gpu.cublas_version << ",\n";
  f << "  \"commit\": " << json_string(gpu.commit) << ",\n";
  f << "  \"date\": " << json_string(gpu.date) << ",\n";
  f << "  \"suite\": " << json_string(suite) << ",\n";
  f << "  \"method\": " << json_string("median of --iters launches per side after --warmup, CUDA events per launch, "
                                       "tessel and cuBLAS interleaved, each launch on the next of the input sets rotated through >= 2x L2; "
                                       "fp32 baseline is cuBLAS CUBLAS_COMPUTE_32F (no tensor cores); fp8 baseline is cuBLASLt "
                                       "(tn only, fp32 compute, FAST_ACCUM off)") << ",\n";
  f << "  \"results\": [";
  bool first = true;
  for (Result const& r : rs) {
    if (!r.ran) continue;
    f << (first ? "\n" : ",\n");
    first = false;
    double const ratio = r.cublas_tflops() > 0 ? r.tflops() / r.cublas_tflops() : 0.0;
    f << "    {\"op\": \"gemm\", \"m\": " << r.p.m << ", \"n\": " << r.p.n << ", \"k\": " << r.p.k
      << ", \"batch\": " << r.p.batch << ld_json(r.p) << ", \"dtype\": " << json_string(r.p.dtype_name())
      << ", \"layout\": " << json_string(r.p.layout) << ", \"alpha\": " << json_number(r.p.alpha)
      << ", \"beta\": " << json_number(r.p.beta) << ", \"kernel\": " << json_string(r.kernel)
      << ", \"ms\": " << json_number(r.tessel.median_ms) << ", \"tflops\": " << json_number(r.tflops())
      << ", \"pct_peak\": " << json_number(100.0 * r.tflops() / peak_tflops(gpu.info, r.p.ab))
      << ", \"baseline\": " << (r.cublas.median_ms > 0 ? json_string(r.baseline) : "null")
      << ", \"baseline_ms\": " << json_number(r.cublas.median_ms)
      << ", \"baseline_tflops\": " << json_number(r.cublas_tflops()) << ", \"ratio\": " << json_number(ratio)
      << ", \"verified\": " << (r.p.verify ? (r.verified ? "true" : "false") : "null")
      << ", \"max_rel_err\": " << (r.p.verify ? json_number(r.check.max_rel_err) : "null")
      << ", \"baseline_max_rel_err\": " << (r.p.verify && r.cublas.median_ms > 0 ? json_number(r.cublas_check.max_rel_err) : "null")
      << (r.baseline_note.empty() ? "" : ", \"baseline_note\": " + json_string(r.baseline_note))
      << (r.p.tune.empty() ? "" : ", \"tune\": " + json_string(r.p.tune))
      << ", \"iters\": " << r.p.iters << ", \"input_sets\": " << r.sets
      << ", \"sm_clock_after_mhz\": " << r.sm_clock_after << "}";
  }
  f << "\n  ]\n}\n";
}

void append_csv(std::string const& path, GpuReport const& gpu, Result const& r) {
  bool const fresh = !std::ifstream(path).good();
  std::ofstream f(path, std::ios::app);
  if (!f) throw std::runtime_error("cannot write --csv file '" + path + "'");
  if (fresh)
    f << "gpu,commit,m,n,k,batch,dtype,layout,alpha,beta,kernel,ms,tflops,pct_peak,baseline_ms,baseline_tflops,ratio,"
         "verified,max_rel_err,error\n";
  double const ratio = r.cublas_tflops() > 0 ? r.tflops() / r.cublas_tflops() : 0.0;
  f << gpu.info.name << "," << gpu.commit << "," << r.p.m << "," << r.p.n << "," << r.p.k << "," << r.p.batch << ","
    << r.p.dtype_name() << "," << r.p.layout << "," << r.p.alpha << "," << r.p.beta << "," << r.kernel << ","
    << json_number(r.tessel.median_ms) << "," << json_number(r.tflops()) << ","
    << json_number(100.0 * r.tflops() / peak_tflops(gpu.info, r.p.ab)) << "," << json_number(r.cublas.median_ms) << ","
    << json_number(r.cublas_tflops()) << "," << json_number(ratio) << ","
    << (r.p.verify ? (r.verified ? "yes" : "no") : "skipped") << "," << json_number(r.check.max_rel_err) << ","
    << json_string(r.error) << "\n";
}

void print_header(GpuReport const& gpu, int sm_clock_now) {
  auto const& d = gpu.info;
  std::printf("GPU        %s (sm_%d%d, %d SMs, L2 %zu MB), SM clock %d MHz max%s\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, d.l2_bytes >> 20, d.clock_mhz,
              sm_clock_now ? (", " + std::to_string(sm_clock_now) + " MHz now").c_str() : "");
  std::printf("software   driver %s, CUDA runtime %s, cuBLAS %d\n", version_text(d.driver_version).c_str(),
              version_text(d.runtime_version).c_str(), gpu.cublas_version);
  std::printf("tessel     commit %s, %s\n", gpu.commit.c_str(), gpu.date.c_str());
}

void print_row_header() {
  std::printf("\n%-22s %-10s %-6s %-16s %9s %8s %6s %9s %8s %6s  %s\n", "problem", "dtype", "layout", "kernel", "ms",
              "TFLOP/s", "%peak", "cuBLAS ms", "TFLOP/s", "ratio", "verification (max rel err vs fp64)");
}

void print_row(GpuReport const& gpu, Result const& r) {
  if (!r.ran) {
    std::printf("%-22s %-10s %-6s error: %s\n", r.p.shape().c_str(), r.p.dtype_name().c_str(), r.p.layout.c_str(),
                r.error.c_str());
    return;
  }
  std::string verdict = "not verified";
  if (r.p.verify) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %.2g", r.verified ? "ok" : "FAILED", r.check.max_rel_err);
    verdict = buf;
    if (r.cublas.median_ms > 0) {
      std::snprintf(buf, sizeof buf, " (%s %s %.2g)", r.baseline == "cublaslt" ? "cuBLASLt" : "cuBLAS",
                    r.cublas_verified ? "ok" : "FAILED", r.cublas_check.max_rel_err);
      verdict += buf;
    }
  }
  double const peak = peak_tflops(gpu.info, r.p.ab);
  if (r.cublas.median_ms > 0) {
    std::printf("%-22s %-10s %-6s %-16s %9.3f %8.2f %5.1f%% %9.3f %8.2f %6.3f  %s\n", r.p.shape().c_str(),
                r.p.dtype_name().c_str(), r.p.layout.c_str(), r.kernel.c_str(), r.tessel.median_ms, r.tflops(),
                100.0 * r.tflops() / peak, r.cublas.median_ms, r.cublas_tflops(), r.tflops() / r.cublas_tflops(),
                verdict.c_str());
  } else if (!r.baseline_note.empty()) {  // e.g. "cuBLASLt: not supported for layout nn (...)" in the baseline columns
    std::printf("%-22s %-10s %-6s %-16s %9.3f %8.2f %5.1f%% %-25s  %s\n", r.p.shape().c_str(), r.p.dtype_name().c_str(),
                r.p.layout.c_str(), r.kernel.c_str(), r.tessel.median_ms, r.tflops(), 100.0 * r.tflops() / peak,
                r.baseline_note.c_str(), verdict.c_str());
  } else {
    std::printf("%-22s %-10s %-6s %-16s %9.3f %8.2f %5.1f%% %9s %8s %6s  %s\n", r.p.shape().c_str(),
                r.p.dtype_name().c_str(), r.p.layout.c_str(), r.kernel.c_str(), r.tessel.median_ms, r.tflops(),
                100.0 * r.tflops() / peak, "-", "-", "-", verdict.c_str());
  }
  if (r.p.verify && !r.verified) std::printf("    tessel: %s\n", r.check.describe().c_str());
  if (r.p.verify && r.cublas.median_ms > 0 && !r.cublas_verified)
    std::printf("    %s: %s\n", r.baseline == "cublaslt" ? "cuBLASLt" : "cuBLAS", r.cublas_check.describe().c_str());
  std::fflush(stdout);
}

void progress(std::size_t done, std::size_t total, std::string const& what) {
  if (total <= 1) return;
  if (isatty(2)) {
    int const width = 30, fill = int(width * done / total);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40s", std::string(fill, '#').c_str(), std::string(width - fill, '.').c_str(),
                 done, total, what.c_str());
    if (done == total) std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s\n", done, total, what.c_str());
  }
}

std::vector<Options> read_sweep(std::string const& path, Options const& base) {
  std::ifstream f(path);
  if (!f) throw UsageError("--sweep: cannot read '" + path + "'");
  std::vector<Options> out;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ss(line);
    std::vector<std::string> words;
    for (std::string w; ss >> w;) words.push_back(w);
    if (words.empty()) continue;
    Options o = base;
    std::string const where = path + ":" + std::to_string(lineno) + ": ";
    parse_into(o, words, where);
    if (o.has("--sweep") && o.values.at("--sweep") != base.values.at("--sweep"))
      throw UsageError(where + "--sweep cannot nest");
    try {
      (void)make_problem(o);
    } catch (UsageError const& e) {
      throw UsageError(where + e.what());
    }
    out.push_back(std::move(o));
  }
  if (out.empty()) throw UsageError("--sweep: '" + path + "' holds no problems");
  return out;
}

std::string today() {
  std::time_t const t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

int run_gemm(std::vector<std::string> const& args) {
  Options base;
  parse_into(base, args, "");
  if (base.has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::vector<Options> lines = base.has("--sweep") ? read_sweep(base.values.at("--sweep"), base) : std::vector<Options>{base};
  std::vector<Problem> problems;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    problems.push_back(make_problem(lines[i]));
    GemmArguments g = gemm_arguments(problems.back());  // the API's rules, before any CUDA call
    float dummy = 0;
    g.a = g.b = g.c = &dummy;
    g.d = &dummy;
    if (tessel::Status s = tessel::gemm_validate(g); !s)
      throw UsageError((lines.size() > 1 ? "problem " + std::to_string(i + 1) + ": " : std::string()) + s.reason);
  }
  std::string suite = base.has("--suite") ? base.values.at("--suite") : "";
  if (suite.empty() && base.has("--sweep")) {
    std::string s = base.values.at("--sweep");
    s = s.substr(s.find_last_of('/') == std::string::npos ? 0 : s.find_last_of('/') + 1);
    suite = s.substr(0, s.find('.'));
  }
  if (base.has("--dry-run")) {
    for (Problem const& p : problems)
      std::printf("%s %s %s alpha %g beta %g kernel %s iters %d\n", p.shape().c_str(), p.dtype_name().c_str(),
                  p.layout.c_str(), p.alpha, p.beta, p.kernel.c_str(), p.iters);
    return 0;
  }

  std::string const why = tessel::no_device_reason();
  if (!why.empty()) throw UsageError(why + " (tessel gemm needs a GPU)");
  std::string qwhy;
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  auto info = tessel::query_device(dev, &qwhy);
  if (!info) throw UsageError(qwhy);

  GpuReport gpu;
  gpu.info = *info;
  gpu.commit = commit_id();
  gpu.date = today();
  cublasHandle_t handle = nullptr;
  cublas_check(cublasCreate(&handle), "cublasCreate");
  std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(handle, [](cublasHandle_t h) { cublasDestroy(h); });
  cublasGetVersion(handle, &gpu.cublas_version);
  cublas_check(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  cublasLtHandle_t lt = nullptr;  // cuBLASLt: the fp8 baseline
  cublas_check(cublasLtCreate(&lt), "cublasLtCreate");
  std::unique_ptr<cublasLtContext, void (*)(cublasLtHandle_t)> lt_guard(lt, [](cublasLtHandle_t h) { cublasLtDestroy(h); });
  Nvml nvml(dev);

  print_header(gpu, nvml.sm_clock_mhz());
  print_row_header();
  std::vector<Result> results;
  bool failed = false;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    progress(i, problems.size(), problems[i].shape() + " " + problems[i].dtype_name() + " " + problems[i].layout);
    Result r;
    try {
      r = run_problem(problems[i], gpu, handle, lt, nvml);
    } catch (std::runtime_error const& e) {
      r.p = problems[i];
      r.error = e.what();
      cudaError_t const sticky = cudaDeviceSynchronize();
      if (sticky != cudaSuccess) {  // the context is lost: report and stop
        print_row(gpu, r);
        throw std::runtime_error(std::string(e.what()) + " (the CUDA context is unusable: " + cudaGetErrorString(sticky) + ")");
      }
    }
    if (!r.ran || (r.p.verify && !r.verified)) failed = true;
    print_row(gpu, r);
    if (base.has("--csv")) append_csv(base.values.at("--csv"), gpu, r);
    results.push_back(std::move(r));
  }
  progress(problems.size(), problems.size(), "done");
  if (nvml.sm_clock_mhz()) std::printf("\nSM clock after the runs: %d MHz\n", nvml.sm_clock_mhz());
  if (base.has("--json")) write_json(base.values.at("--json"), gpu, suite, results);
  if (problems.size() == 1 && !results[0].ran) throw std::runtime_error(results[0].error);
  return failed ? 1 : 0;
}

}  // namespace

static tessel::cli::Register reg{{"gemm", "run, verify and time a GEMM against cuBLAS (--help)", run_gemm}};

#else  // built without CUDA

namespace {
int run_gemm(std::vector<std::string> const&) {
  throw tessel::cli::UsageError("this tessel was built without CUDA (TESSEL_ENABLE_CUDA=OFF); rebuild with CUDA to run GEMMs");
}
}  // namespace
static tessel::cli::Register reg{{"gemm", "run, verify and time a GEMM against cuBLAS (needs a CUDA build)", run_gemm}};

#endif
