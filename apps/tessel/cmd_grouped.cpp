// apps/tessel/cmd_grouped.cpp -- `tessel grouped`: run, verify and time a grouped GEMM (a
// mixture-of-experts layer: tokens sorted by expert, one weight per expert) against a loop of
// cuBLAS calls and against cublasGemmGroupedBatchedEx, in the same process, the same way as
// `tessel gemm` (measure.hpp).
//
//   tessel grouped --groups 8 --tokens 8192 --n 14336 --k 4096 --skew 1 --empty 1
//   tessel grouped --sweep bench/grouped.txt --json bench/results/grouped-h200.json
#if defined(TESSEL_HAS_CUDA)

#include "command.hpp"
#include "measure.hpp"
#include "report.hpp"

#include <tessel/gemm/device/grouped_gemm.hpp>
#include <tessel/reference/gemm_device.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace tessel::cli;
using tessel::DType;
using tessel::GroupedGemmArguments;
using tessel::GroupedLayoutB;

constexpr char const* kUsage =
    "usage: tessel grouped --groups G --tokens T --n N --k K [options]\n"
    "  G problems D[rows of g] = alpha * A[rows of g] * B[g]^T: A is T x K (tokens sorted by group), B is\n"
    "  [G, N, K] (--layout nk, a Linear weight) or [G, K, N] (kn), D is T x N; the rows per group come\n"
    "  from a device offsets array (one launch, no host sync). Baselines: a loop of cublasGemmEx, one per\n"
    "  non-empty group, and cublasGemmGroupedBatchedEx.\n"
    "problem:\n"
    "  --dtype bf16|fp16   A and B (default bf16); --out bf16|fp16|fp32 for D (default: the input's)\n"
    "  --layout nk|kn      B's layout (default nk)\n"
    "  --skew S            rows per group follow 1/(rank+1)^S, ranks shuffled (default 0: even)\n"
    "  --empty E           E groups get no rows (default 0)\n"
    "  --alpha A           (default 1)\n"
    "method:\n"
    "  --iters N --warmup N --gap-ms G --seed S   as for tessel gemm (defaults 30, 5, 0, 1)\n"
    "  --no-verify         skip the fp64 check of every group\n"
    "  --csv FILE --json FILE --suite NAME --sweep FILE --dry-run   as for tessel gemm\n";

OptionNames const kOptions{"grouped",
                           {"--groups", "--tokens", "--n", "--k", "--dtype", "--out", "--layout", "--skew", "--empty",
                            "--alpha", "--iters", "--warmup", "--gap-ms", "--seed", "--csv", "--json", "--suite", "--sweep"},
                           {"--verify", "--no-verify", "--dry-run", "--help"}};

struct Problem {
  int groups = 0;
  long long tokens = 0, n = 0, k = 0;
  DType ab = DType::bf16, out = DType::bf16;
  GroupedLayoutB layout = GroupedLayoutB::nk;
  double skew = 0.0;
  int empty = 0;
  float alpha = 1.0f;
  int iters = 30, warmup = 5;
  double gap_ms = 0;
  unsigned long long seed = 1;
  bool verify = true;
  std::vector<int> rows;  // per group
  std::string shape() const {
    return std::to_string(groups) + "x" + std::to_string(tokens) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

DType parse_dtype16(std::string const& opt, std::string const& v) {
  if (v == "bf16") return DType::bf16;
  if (v == "fp16" || v == "f16") return DType::f16;
  if (v == "fp32" || v == "f32") return DType::f32;
  throw UsageError(opt + ": '" + v + "' is not bf16, fp16 or fp32");
}

// Rows per group: weights 1/(rank+1)^skew over the non-empty groups, ranks and the empty groups
// placed by the seed; the tokens left by rounding go to the heaviest groups.
std::vector<int> split_tokens(Problem const& p) {
  std::mt19937_64 rng(p.seed * 7919ULL + 11ULL);
  std::vector<int> order(std::size_t(p.groups));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  int const live = p.groups - p.empty;
  std::vector<double> w(std::size_t(p.groups), 0.0);
  double sum = 0;
  for (int r = 0; r < live; ++r) sum += w[std::size_t(order[std::size_t(r)])] = std::pow(double(r + 1), -p.skew);
  std::vector<int> rows(std::size_t(p.groups), 0);
  long long given = 0;
  for (int g = 0; g < p.groups; ++g) given += rows[std::size_t(g)] = int(std::floor(double(p.tokens) * w[std::size_t(g)] / sum));
  for (int r = 0; given < p.tokens; r = (r + 1) % live, ++given) ++rows[std::size_t(order[std::size_t(r)])];
  return rows;
}

Problem make_problem(Options const& o) {
  Problem p;
  auto need = [&](char const* name) {
    if (!o.has(name)) throw UsageError(std::string(name) + " is required (try: tessel grouped --help)");
    return *o.get(name);
  };
  p.groups = int(parse_int("--groups", need("--groups"), 1, tessel::kGroupedGemmMaxGroups));
  p.tokens = parse_int("--tokens", need("--tokens"), 0, 0x7fffffffLL);
  p.n = parse_int("--n", need("--n"), 1, 0x7fffffffLL);
  p.k = parse_int("--k", need("--k"), 0, 0x7fffffffLL);
  if (auto v = o.get("--dtype")) p.ab = parse_dtype16("--dtype", *v);
  if (p.ab == DType::f32) throw UsageError("--dtype: grouped GEMM takes bf16 or fp16 inputs");
  p.out = p.ab;
  if (auto v = o.get("--out")) p.out = parse_dtype16("--out", *v);
  if (auto v = o.get("--layout")) {
    if (*v != "nk" && *v != "kn") throw UsageError("--layout: '" + *v + "' is not nk or kn");
    p.layout = *v == "nk" ? GroupedLayoutB::nk : GroupedLayoutB::kn;
  }
  if (auto v = o.get("--skew")) p.skew = double(parse_float("--skew", *v));
  if (auto v = o.get("--empty")) p.empty = int(parse_int("--empty", *v, 0, p.groups - 1));
  if (auto v = o.get("--alpha")) p.alpha = parse_float("--alpha", *v);
  if (auto v = o.get("--iters")) p.iters = int(parse_int("--iters", *v, 1, 100000));
  if (auto v = o.get("--warmup")) p.warmup = int(parse_int("--warmup", *v, 0, 100000));
  if (auto v = o.get("--gap-ms")) p.gap_ms = double(parse_int("--gap-ms", *v, 0, 10000));
  if (auto v = o.get("--seed")) p.seed = static_cast<unsigned long long>(parse_int("--seed", *v, 0, 1LL << 62));
  p.verify = !o.has("--no-verify");
  p.rows = split_tokens(p);
  return p;
}

GroupedGemmArguments grouped_arguments(Problem const& p) {
  GroupedGemmArguments g = tessel::make_grouped_gemm(p.groups, p.tokens, p.n, p.k, p.ab, p.out, p.layout);
  g.alpha = p.alpha;
  return g;
}

void cublas_check(cublasStatus_t s, char const* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

cudaDataType cuda_type(DType t) { return t == DType::f16 ? CUDA_R_16F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

struct Result {
  Problem p;
  bool ran = false, verified = false;
  double max_rel_err = 0;
  Timing tessel, loop, grouped;
  int sm_clock_after = 0;
  std::string error;
  double flops() const { return 2.0 * double(p.tokens) * double(p.n) * double(p.k); }
};

Result run_problem(Problem const& p, GpuReport const& gpu, cublasHandle_t h, Nvml const& nvml) {
  Result r;
  r.p = p;
  cudaStream_t const stream = nullptr;
  cublas_check(cublasSetStream(h, stream), "cublasSetStream");
  GroupedGemmArguments const g0 = grouped_arguments(p);
  std::size_t const in = tessel::size_of(p.ab), out = tessel::size_of(p.out);
  std::size_t const bytes_a = std::size_t(std::max<long long>(p.tokens * p.k, 1)) * in;
  std::size_t const bytes_b = std::size_t(std::max<long long>(p.groups * p.n * p.k, 1)) * in;
  std::size_t const bytes_d = std::size_t(std::max<long long>(p.tokens * p.n, 1)) * out;
  std::size_t const ref_bytes = p.verify ? bytes_d / out * 2 * sizeof(double) : 0;
  int const sets = input_set_count(bytes_a + bytes_b + bytes_d, ref_bytes, gpu.info.l2_bytes, &r.error);
  if (sets == 0) return r;

  std::vector<int> offs(std::size_t(p.groups));
  std::partial_sum(p.rows.begin(), p.rows.end(), offs.begin());
  DeviceBuffer d_offs(offs.size() * sizeof(int));
  cuda_check(cudaMemcpy(d_offs.p, offs.data(), offs.size() * sizeof(int), cudaMemcpyHostToDevice), "copy offsets");

  struct Set {
    DeviceBuffer a, b, d, ptrs;  // ptrs: cublasGemmGroupedBatchedEx's device arrays of A, B, D pointers
  };
  std::vector<Set> bufs;
  std::vector<GroupedGemmArguments> args;
  // cuBLAS sees column-major D^T (N x m_g, ld N) = op(B_g) (N x K) * A_g^T (K x m_g).
  std::vector<int> live;  // the non-empty groups
  for (int i = 0; i < p.groups; ++i)
    if (p.rows[std::size_t(i)] > 0) live.push_back(i);
  int const nl = int(live.size());
  bool const nk = p.layout == GroupedLayoutB::nk;
  for (int s = 0; s < sets; ++s) {
    Set x{DeviceBuffer(bytes_a), DeviceBuffer(bytes_b), DeviceBuffer(bytes_d), DeviceBuffer(3 * std::size_t(std::max(nl, 1)) * sizeof(void*))};
    unsigned long long const seed = p.seed * 1000003ULL + 17ULL * unsigned(s);
    status_check(tessel::reference::fill_uniform_device(x.a.p, p.ab, bytes_a / in, seed + 1, -1.0f, 1.0f), "fill A");
    status_check(tessel::reference::fill_uniform_device(x.b.p, p.ab, bytes_b / in, seed + 2, -1.0f, 1.0f), "fill B");
    status_check(tessel::reference::fill_constant_device(x.d.p, p.out, bytes_d / out, NAN), "poison D");
    GroupedGemmArguments g = g0;
    g.a = x.a.p, g.b = x.b.p, g.d = x.d.p, g.offsets = static_cast<int const*>(d_offs.p);
    std::vector<void const*> ptrs(3 * std::size_t(nl));
    for (int j = 0; j < nl; ++j) {
      int const i = live[std::size_t(j)];
      long long const row0 = offs[std::size_t(i)] - p.rows[std::size_t(i)];
      ptrs[std::size_t(j)] = static_cast<char const*>(x.b.p) + std::size_t(i) * std::size_t(g.batch_stride_b) * in;  // cuBLAS's A: B_g
      ptrs[std::size_t(nl + j)] = static_cast<char const*>(x.a.p) + std::size_t(row0 * p.k) * in;                    // cuBLAS's B: A_g
      ptrs[std::size_t(2 * nl + j)] = static_cast<char const*>(x.d.p) + std::size_t(row0 * p.n) * out;               // D_g
    }
    if (nl > 0) cuda_check(cudaMemcpy(x.ptrs.p, ptrs.data(), ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice), "copy pointers");
    args.push_back(g);
    bufs.push_back(std::move(x));
  }
  float const alpha = p.alpha, beta = 0.0f;
  cublasOperation_t const op_b = nk ? CUBLAS_OP_T : CUBLAS_OP_N;
  int const ldb = int(nk ? p.k : p.n);
  auto const run_loop = [&](int s) {
    for (int i : live) {
      long long const row0 = offs[std::size_t(i)] - p.rows[std::size_t(i)];
      void const* b = static_cast<char const*>(bufs[std::size_t(s)].b.p) + std::size_t(i) * std::size_t(args[0].batch_stride_b) * in;
      void const* a = static_cast<char const*>(bufs[std::size_t(s)].a.p) + std::size_t(row0 * p.k) * in;
      void* d = static_cast<char*>(bufs[std::size_t(s)].d.p) + std::size_t(row0 * p.n) * out;
      cublas_check(cublasGemmEx(h, op_b, CUBLAS_OP_N, int(p.n), p.rows[std::size_t(i)], int(p.k), &alpha, b, cuda_type(p.ab), ldb, a,
                                cuda_type(p.ab), int(p.k), &beta, d, cuda_type(p.out), int(p.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    }
  };
  // cublasGemmGroupedBatchedEx: one cuBLAS group per non-empty expert, each of one problem.
  std::vector<cublasOperation_t> ta(std::size_t(nl), op_b), tb(std::size_t(nl), CUBLAS_OP_N);
  std::vector<int> ms(std::size_t(nl), int(p.n)), ns(static_cast<std::size_t>(nl)), ks(std::size_t(nl), int(p.k)), ldas(std::size_t(nl), ldb),
      ldbs(std::size_t(nl), int(p.k)), ldcs(std::size_t(nl), int(p.n)), sizes(std::size_t(nl), 1);
  for (int j = 0; j < nl; ++j) ns[std::size_t(j)] = p.rows[std::size_t(live[std::size_t(j)])];
  std::vector<float> alphas(std::size_t(nl), alpha), betas(std::size_t(nl), beta);
  auto const run_grouped = [&](int s) {
    if (nl == 0) return;
    auto* const ptrs = static_cast<void**>(bufs[std::size_t(s)].ptrs.p);
    cublas_check(cublasGemmGroupedBatchedEx(h, ta.data(), tb.data(), ms.data(), ns.data(), ks.data(), alphas.data(), ptrs,
                                            cuda_type(p.ab), ldas.data(), ptrs + nl, cuda_type(p.ab), ldbs.data(), betas.data(),
                                            ptrs + 2 * nl, cuda_type(p.out), ldcs.data(), nl, sizes.data(), CUBLAS_COMPUTE_32F),
                 "cublasGemmGroupedBatchedEx");
  };

  // Verification on set 0: every group against the fp64 reference (tessel::gemm's GemmArguments
  // for the group's slice), and the rows past the last offset still poisoned (none here: the
  // offsets cover every token).
  if (p.verify) {
    status_check(tessel::grouped_gemm(args[0], stream), "tessel::grouped_gemm");
    cuda_check(cudaStreamSynchronize(stream), "grouped GEMM");
    DeviceBuffer ref(ref_bytes / 2), scale(ref_bytes / 2);
    bool ok = true;
    for (int i : live) {
      long long const row0 = offs[std::size_t(i)] - p.rows[std::size_t(i)];
      tessel::GemmArguments x = tessel::make_packed_gemm(p.rows[std::size_t(i)], p.n, p.k, 1, p.ab, p.out, tessel::MatrixOrder::row_major,
                                                         nk ? tessel::MatrixOrder::col_major : tessel::MatrixOrder::row_major,
                                                         tessel::MatrixOrder::row_major);
      x.a = static_cast<char const*>(args[0].a) + std::size_t(row0 * p.k) * in;
      x.b = static_cast<char const*>(args[0].b) + std::size_t(i) * std::size_t(args[0].batch_stride_b) * in;
      x.c = x.d = static_cast<char*>(args[0].d) + std::size_t(row0 * p.n) * out;
      x.alpha = p.alpha;
      status_check(tessel::reference::gemm_device(x, static_cast<double*>(ref.p), static_cast<double*>(scale.p), stream), "reference GEMM");
      tessel::reference::GemmCheck c;
      status_check(tessel::reference::check_device(x, static_cast<double const*>(ref.p), static_cast<double const*>(scale.p),
                                                   tessel::reference::gemm_tolerance(p.ab, p.out, p.k), &c, stream),
                   "check");
      ok = ok && c.passed();
      r.max_rel_err = std::max(r.max_rel_err, c.max_rel_err);
      if (!c.passed() && r.error.empty()) r.error = "group " + std::to_string(i) + ": " + c.describe();
    }
    r.verified = ok;
  }

  Nvml const& nv = nvml;
  Measurement const m1 = measure_interleaved(
      {p.iters, p.warmup, p.gap_ms, sets, stream},
      [&](int s) { status_check(tessel::grouped_gemm(args[std::size_t(s)], stream), "tessel::grouped_gemm"); }, run_loop, nv);
  Measurement const m2 = measure_interleaved(
      {p.iters, p.warmup, p.gap_ms, sets, stream},
      [&](int s) { status_check(tessel::grouped_gemm(args[std::size_t(s)], stream), "tessel::grouped_gemm"); }, run_grouped, nv);
  r.tessel = m1.candidate, r.loop = m1.baseline, r.grouped = m2.baseline;
  r.sm_clock_after = m2.sm_clock_after_mhz;
  r.ran = true;
  return r;
}

constexpr char const* kMethod =
    "median of --iters launches per side after --warmup, CUDA events per launch, tessel and the baseline "
    "interleaved, each launch on the next of the input sets rotated through >= 2x L2; baselines: a loop of "
    "cublasGemmEx (one per non-empty group; baseline \"cublas_loop\") and cublasGemmGroupedBatchedEx "
    "(\"cublas_grouped\"), each timed against tessel in a run of its own; FLOPs = 2 * tokens * N * K";

double tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e9) : 0; }

std::vector<Fields> json_rows(Result const& r) {
  std::vector<Fields> rows;
  for (int b = 0; b < 2; ++b) {
    Timing const& base = b == 0 ? r.loop : r.grouped;
    double const t = tflops(r.flops(), r.tessel.median_ms), bt = tflops(r.flops(), base.median_ms);
    std::string sizes;
    for (int v : r.p.rows) {
      if (!sizes.empty()) sizes += ',';
      sizes += std::to_string(v);
    }
    rows.push_back({{"op", json_string("grouped_gemm")}, {"groups", std::to_string(r.p.groups)}, {"m", std::to_string(r.p.tokens)},
                    {"n", std::to_string(r.p.n)}, {"k", std::to_string(r.p.k)}, {"batch", "1"},
                    {"dtype", json_string(std::string(tessel::to_string(r.p.ab)) + "->" + tessel::to_string(r.p.out))},
                    {"layout", json_string(tessel::to_string(r.p.layout))}, {"skew", json_number(r.p.skew)},
                    {"empty", std::to_string(r.p.empty)}, {"rows", json_string(sizes)},
                    {"kernel", json_string("sm90_grouped_128x256x64")}, {"ms", json_number(r.tessel.median_ms)},
                    {"tflops", json_number(t)}, {"baseline", json_string(b == 0 ? "cublas_loop" : "cublas_grouped")},
                    {"baseline_ms", json_number(base.median_ms)}, {"baseline_tflops", json_number(bt)},
                    {"ratio", json_number(bt > 0 ? t / bt : 0)}, {"verified", r.verified ? "true" : "false"},
                    {"max_rel_err", json_number(r.max_rel_err)}, {"sm_clock_after_mhz", std::to_string(r.sm_clock_after)}});
  }
  return rows;
}

int run_grouped(std::vector<std::string> const& args) {
  Options base;
  parse_options(base, args, kOptions, "");
  if (base.has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::vector<Options> lines = base.has("--sweep")
                                   ? read_sweep(*base.get("--sweep"), base, kOptions, [](Options const& o) { (void)make_problem(o); })
                                   : std::vector<Options>{base};
  std::vector<Problem> problems;
  for (Options const& o : lines) problems.push_back(make_problem(o));
  if (base.has("--dry-run")) {
    for (Problem const& p : problems) {
      std::printf("%s %s->%s %s rows", p.shape().c_str(), tessel::to_string(p.ab), tessel::to_string(p.out), tessel::to_string(p.layout));
      for (int v : p.rows) std::printf(" %d", v);
      std::printf("\n");
    }
    return 0;
  }
  int dev = 0;
  GpuReport gpu = open_gpu("tessel grouped", &dev);
  cublasHandle_t handle = nullptr;
  cublas_check(cublasCreate(&handle), "cublasCreate");
  std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(handle, [](cublasHandle_t h) { cublasDestroy(h); });
  int cublas_version = 0;
  cublasGetVersion(handle, &cublas_version);
  gpu.libraries.push_back({"cuBLAS", "cublas", cublas_version});
  Nvml nvml(dev);
  print_gpu_header(gpu, nvml.sm_clock_mhz());
  std::printf("%-26s %-10s %9s %9s %8s %9s %8s %9s %s\n", "GxTOKENSxNxK", "dtype", "tessel ms", "TFLOP/s", "loop ms", "ratio",
              "grp ms", "ratio", "verified");
  std::vector<Fields> rows;
  bool failed = false;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    progress(i, problems.size(), problems[i].shape());
    Result r;
    try {
      r = run_problem(problems[i], gpu, handle, nvml);
    } catch (std::runtime_error const& e) {
      r.p = problems[i];
      r.error = e.what();
      if (cudaError_t sticky = cudaDeviceSynchronize(); sticky != cudaSuccess)
        throw std::runtime_error(std::string(e.what()) + " (the CUDA context is unusable: " + cudaGetErrorString(sticky) + ")");
    }
    if (!r.ran || (r.p.verify && !r.verified)) failed = true;
    double const t = tflops(r.flops(), r.tessel.median_ms);
    std::printf("%-26s %-10s %9.4f %9.1f %8.4f %9.3f %8.4f %9.3f %s%s%s\n", r.p.shape().c_str(),
                (std::string(tessel::to_string(r.p.ab)) + "->" + tessel::to_string(r.p.out)).c_str(), r.tessel.median_ms, t,
                r.loop.median_ms, r.loop.median_ms > 0 ? r.loop.median_ms / r.tessel.median_ms : 0.0, r.grouped.median_ms,
                r.grouped.median_ms > 0 ? r.grouped.median_ms / r.tessel.median_ms : 0.0,
                !r.p.verify ? "-" : r.verified ? "yes" : "NO", r.error.empty() ? "" : "  ", r.error.c_str());
    if (r.ran) {
      std::vector<Fields> f = json_rows(r);
      if (base.has("--csv"))
        for (Fields const& x : f) append_csv(base.values.at("--csv"), gpu, x);
      rows.insert(rows.end(), f.begin(), f.end());
    }
  }
  progress(problems.size(), problems.size(), "done");
  if (base.has("--json")) write_json(base.values.at("--json"), gpu, suite_name(base), kMethod, rows);
  return failed ? 1 : 0;
}

}  // namespace

static tessel::cli::Register reg{{"grouped", "run, verify and time a grouped (MoE) GEMM against cuBLAS (--help)", run_grouped}};

#else  // built without CUDA

#include "command.hpp"

namespace {
int run_grouped(std::vector<std::string> const&) {
  throw tessel::cli::UsageError("this tessel was built without CUDA (TESSEL_ENABLE_CUDA=OFF); rebuild with CUDA to run GEMMs");
}
}  // namespace
static tessel::cli::Register reg{{"grouped", "run, verify and time a grouped GEMM (needs a CUDA build)", run_grouped}};

#endif
