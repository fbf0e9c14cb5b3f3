// apps/tessel/cmd_gemm.cpp -- `tessel gemm`: run, verify and time one GEMM (or a sweep of them)
// against cuBLAS in the same process.
//
//   tessel gemm                                     4096^3 bf16, layout tn, verified, vs cuBLAS
//   tessel gemm --m 8192 --n 8192 --k 8192 --dtype bf16 --json r.json
//   tessel gemm --sweep bench/sgemm.txt --json bench/results/sgemm-h200.json
//
// fp8 (--dtype e4m3|e5m2, --b-dtype for a mixed pair) compares against cuBLASLt's fp8 matmul
// (cublasGemmEx has no fp8), which runs only the tn layout; the row says so for the others.
// A fused epilogue (--bias row|col, --act relu|gelu|gelu_tanh|silu) compares against the cuBLASLt
// epilogue that computes the same thing (BIAS, RELU_BIAS, GELU_BIAS for gelu_tanh, ...), and also
// against the unfused pair: cuBLAS, then a separate elementwise pass D = act(D + bias) (tessel's
// K = 0 call); where cuBLASLt has no such epilogue (silu, erf GELU, a per-column bias of the
// column-major D) the pair is the baseline.
//
// Method (docs/PERF.md): inputs are uniform(-1,1) from a fixed hash (never zeros; fp8 inputs are
// uniform(-2,2) rounded to fp8, so products span many exponents), outputs are
// poisoned with NaN before the verification run; tessel and cuBLAS run the same inputs; the GPU
// fp64 reference judges both (tessel/reference/gemm_device.hpp). Timing (measure.hpp): warm-up,
// then `iters` pairs interleaved tessel, cuBLAS, tessel, cuBLAS ... each launch between its own
// CUDA events, each launch (either side's) on the next of the input sets, which together exceed
// 2x the L2; the median is reported.
//
// This file holds what is GEMM's own: the options, the problem and its GemmArguments, the input
// sets' contents, the verification, the table, the JSON and CSV columns. The baselines are in
// gemm_baselines.hpp; the option and sweep-file parsing, the timing, input-set count and GPU
// conditions in measure.hpp; the GPU header and the files' generic parts in report.hpp.
// Every error is one line; bad arguments and a missing GPU exit 2, failures while running exit 1.
#include "command.hpp"

#if defined(TESSEL_HAS_CUDA)

#include "gemm_baselines.hpp"
#include "measure.hpp"
#include "report.hpp"

#include <tessel/gemm.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tessel::DType;
using tessel::GemmArguments;
using tessel::MatrixOrder;
using namespace tessel::cli;  // UsageError; measure.hpp, report.hpp, gemm_baselines.hpp

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
    "  --scale-mode M      fp8: per-tensor (default) or block: DeepSeek-V3 block scales, one fp32 per\n"
    "                      1x128 block of A and per 128x128 block of B, random positive 2^[-4,4]\n"
    "                      (gemm_arguments.hpp's layouts); baseline cuBLASLt's VEC128_32F (A) and\n"
    "                      BLK128x128_32F (B) scale modes on the same scales\n"
    "  --layout L          tn (default), nn, nt, tt: BLAS transposes of A and B, C/D column-major\n"
    "  --lda L --ldb L --ldc L      leading dimensions of A, B and C/D (default: packed); BLAS's\n"
    "                               rules: lda >= K for a 't' A, >= M for an 'n' one; ldc >= M\n"
    "  --alpha A --beta B  scalars (default 1 and 0)\n"
    "  --bias row|col      fused epilogue: add a bias per row (M values) or column (N) of D\n"
    "  --act A             fused epilogue: relu, gelu (erf), gelu_tanh, silu or none (default):\n"
    "                      D = act(alpha*op(A)*op(B) + beta*C + bias); baseline: cuBLASLt's epilogue\n"
    "                      where it computes the same (bias row; relu, gelu_tanh), and cuBLAS + a\n"
    "                      separate elementwise pass\n"
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

OptionNames const kOptions{"gemm",
                           {"--m", "--n", "--k", "--batch", "--dtype", "--b-dtype", "--out-dtype", "--a-scale",
                            "--b-scale", "--scale-mode", "--layout", "--alpha", "--beta", "--bias", "--act", "--kernel", "--tune",
                            "--iters", "--warmup",
                            "--gap-ms", "--compare", "--seed", "--lda", "--ldb", "--ldc", "--csv", "--json", "--suite",
                            "--sweep"},
                           {"--verify", "--no-verify", "--dry-run", "--help"}};

// ---- one problem --------------------------------------------------------------------------------

struct Problem {
  long long m = 4096, n = 4096, k = 4096, batch = 1;
  DType ab = DType::bf16, bt = DType::bf16, cd = DType::bf16;  // A, B, C/D
  std::string layout = "tn";
  long long lda = 0, ldb = 0, ldc = 0;  // 0: packed (the smallest legal leading dimension)
  float alpha = 1.0f, beta = 0.0f;
  float a_scale = 1.0f, b_scale = 1.0f;
  tessel::ScaleMode scale_mode = tessel::ScaleMode::per_tensor;  // --scale-mode
  tessel::BiasMode bias = tessel::BiasMode::none;  // --bias
  tessel::Activation act = tessel::Activation::none;  // --act
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
    if (bias != tessel::BiasMode::none) s += std::string("+bias_") + tessel::to_string(bias);
    if (act != tessel::Activation::none) s += std::string("+") + tessel::to_string(act);
    if (scale_mode == tessel::ScaleMode::block) s += "+blockscaled";
    return s;
  }
  bool fused() const { return bias != tessel::BiasMode::none || act != tessel::Activation::none; }
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch); }
  static DType default_out_dtype(DType in) {
    return (in == DType::f32 || in == DType::tf32) ? DType::f32 : tessel::is_fp8(in) ? DType::bf16 : in;
  }
};

// --tune's K=V list onto GemmOptions (tessel/gemm/device/gemm_arguments.hpp), checked by the
// host API's own rules (gemm_check_options) so the CLI's message is the library's.
tessel::GemmOptions parse_tune(std::string const& text) {
  tessel::GemmOptions o;
  for (std::string const& item : split_commas(text)) {
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
  if (auto v = get("--scale-mode")) {
    if (*v != "per-tensor" && *v != "block") throw UsageError("--scale-mode: '" + *v + "' is not one of per-tensor, block");
    p.scale_mode = *v == "block" ? tessel::ScaleMode::block : tessel::ScaleMode::per_tensor;
  }
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
  if (auto v = get("--bias")) {
    if (*v == "row") p.bias = tessel::BiasMode::row;
    else if (*v == "col") p.bias = tessel::BiasMode::col;
    else if (*v == "none") p.bias = tessel::BiasMode::none;
    else throw UsageError("--bias: '" + *v + "' is not one of row, col, none");
  }
  if (auto v = get("--act")) {
    bool known = false;
    for (tessel::Activation a : {tessel::Activation::none, tessel::Activation::relu, tessel::Activation::gelu,
                                 tessel::Activation::gelu_tanh, tessel::Activation::silu})
      if (*v == tessel::to_string(a)) p.act = a, known = true;
    if (!known) throw UsageError("--act: '" + *v + "' is not one of relu, gelu, gelu_tanh, silu, none");
  }
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
  g.scale_mode = p.scale_mode;  // the scale tensors: the caller's buffers
  g.bias_mode = p.bias, g.activation = p.act;  // the bias pointer: the caller's buffer
  g.kernel = p.kernel.c_str();
  g.options = p.options;
  return g;
}

// ---- one run --------------------------------------------------------------------------------------

struct Result {
  Problem p;
  std::string kernel;
  bool ran = false;
  std::string error;  // why it did not run (one line)
  Timing tessel, cublas;
  std::string baseline = "cublas";  // "cublaslt" for fp8, "cublaslt_epilogue", "cublas+elementwise" (fused)
  std::string baseline_label = "cuBLAS";  // as the table names it: "cuBLASLt", "cuBLASLt GELU_BIAS", ...
  Timing pair;                       // a fused epilogue's unfused pair, when the baseline is cuBLASLt's epilogue
  std::string baseline_note;        // why the baseline did not run (e.g. cuBLASLt's fp8 layouts)
  bool verified = false, cublas_verified = false;
  tessel::reference::GemmCheck check, cublas_check;
  int sets = 0;
  int sm_clock_after = 0;
  double power_after = 0.0;
  double tflops() const { return tessel.median_ms > 0 ? p.flops() / (tessel.median_ms * 1e-3) / 1e12 : 0.0; }
  double cublas_tflops() const { return cublas.median_ms > 0 ? p.flops() / (cublas.median_ms * 1e-3) / 1e12 : 0.0; }
  double pair_ratio() const { return pair.median_ms > 0 && tessel.median_ms > 0 ? pair.median_ms / tessel.median_ms : 0.0; }
};

Result run_problem(Problem const& p, GpuReport const& gpu, cublasHandle_t handle, cublasLtHandle_t lt, Nvml const& nvml) {
  Result r;
  r.p = p;
  GemmArguments g = gemm_arguments(p);  // validated by run_gemm (with placeholder pointers)
  bool const int_sizes = p.m < (1LL << 31) && p.n < (1LL << 31) && p.k < (1LL << 31) && p.batch < (1LL << 31);
  bool compare = p.compare && int_sizes;
  bool const fp8 = tessel::is_fp8(g.a_type);
  bool const fused = tessel::gemm_is_fused(g);
  // The bias vector (M or N values of D's dtype), one for every input set.
  std::int64_t const bias_count = p.bias == tessel::BiasMode::row ? p.m : p.n;
  DeviceBuffer bias(p.bias != tessel::BiasMode::none ? std::size_t(bias_count) * tessel::size_of(g.c_type) : 0);
  if (p.bias != tessel::BiasMode::none) {
    status_check(tessel::reference::fill_uniform_device(bias.p, g.c_type, bias_count, p.seed * 1000003ULL + 5), "fill the bias");
    g.bias = bias.p;
  }
  // Block scales (--scale-mode block): one pair for every input set, random positive values
  // 2^[-4, 4] so the blocks' products span orders of magnitude; packed (gemm_arguments.hpp).
  bool const blocks = g.scale_mode == tessel::ScaleMode::block;
  std::int64_t const k_blocks = tessel::gemm_scale_blocks(p.k), n_blocks = tessel::gemm_scale_blocks(p.n);
  std::size_t const a_scale_count = blocks ? std::size_t(p.batch * k_blocks * p.m) : 0;
  std::size_t const b_scale_count = blocks ? std::size_t(p.batch * n_blocks * k_blocks) : 0;
  DeviceBuffer a_scales(a_scale_count * sizeof(float)), b_scales(b_scale_count * sizeof(float));
  if (blocks) {
    std::mt19937_64 rng(p.seed * 7919ULL + 11ULL);
    std::uniform_real_distribution<float> exponent(-4.0f, 4.0f);
    auto upload = [&](DeviceBuffer const& to, std::size_t count) {
      std::vector<float> v(count);
      for (float& x : v) x = std::exp2(exponent(rng));
      cuda_check(cudaMemcpy(to.p, v.data(), count * sizeof(float), cudaMemcpyHostToDevice), "upload the block scales");
    };
    upload(a_scales, a_scale_count);
    upload(b_scales, b_scale_count);
    g.a_scales = static_cast<float const*>(a_scales.p), g.b_scales = static_cast<float const*>(b_scales.p);
  }
  GemmArguments unfused = g;  // the product alone: what cuBLAS (or cuBLASLt's fp8 matmul) computes in the pair
  unfused.bias = nullptr, unfused.bias_mode = tessel::BiasMode::none, unfused.activation = tessel::Activation::none;
  std::unique_ptr<LtGemm> lt_gemm;   // fp8's matmul (unfused)
  std::unique_ptr<LtGemm> lt_fused;  // cuBLASLt's epilogue computing the same fusion
  if (fp8) r.baseline = "cublaslt", r.baseline_label = "cuBLASLt";
  if (blocks) r.baseline = "cublaslt_blockscaled", r.baseline_label = "cuBLASLt blk";
  if (compare && fp8) {
    lt_gemm = std::make_unique<LtGemm>(lt, unfused, p.layout);
    if (!lt_gemm->why().empty()) {
      r.baseline_note = lt_gemm->why();
      compare = false;
    }
  }
  if (compare && fused) {
    lt_fused = std::make_unique<LtGemm>(lt, g, p.layout);
    if (lt_fused->why().empty()) {
      r.baseline = "cublaslt_epilogue", r.baseline_label = "cuBLASLt " + lt_fused->epilogue();
    } else {
      lt_fused.reset();
      r.baseline = fp8 ? "cublaslt+elementwise" : "cublas+elementwise";
      r.baseline_label = fp8 ? "cuBLASLt+eltwise" : "cuBLAS+eltwise";
    }
  }
  cudaStream_t const stream = nullptr;
  // The unfused product into d (which holds C), as BLAS computes it.
  auto run_plain = [&](GemmArguments const& x, void* d) {
    GemmArguments y = x;
    y.bias = nullptr, y.bias_mode = tessel::BiasMode::none, y.activation = tessel::Activation::none;
    if (fp8) {
      lt_gemm->run(y, d, stream);
    } else {
      run_cublas(handle, y, d);
    }
  };
  // The pair: the product, then D = act(D + bias) in a pass of its own (tessel's call with K = 0:
  // D = act(beta * C + bias) with C = D, beta = 1, in place).
  auto run_pair = [&](GemmArguments const& x, void* d) {
    run_plain(x, d);
    GemmArguments e = x;
    e.k = 0, e.alpha = 1.0f, e.beta = 1.0f, e.a = e.b = nullptr;
    e.c = d, e.d = d, e.ldc = x.ldd, e.batch_stride_c = x.batch_stride_d, e.kernel = nullptr;
    status_check(tessel::gemm(e, stream), "the elementwise pass");
  };
  auto run_baseline = [&](GemmArguments const& x, void* d) {
    if (!fused) {
      run_plain(x, d);
    } else if (lt_fused) {
      lt_fused->run(x, d, stream);
    } else {
      run_pair(x, d);
    }
  };
  {
    float dummy = 0;  // can_implement needs non-null pointers where data is read
    GemmArguments probe = g;
    probe.a = probe.b = probe.c = &dummy;
    probe.d = &dummy;
    if (blocks) probe.a_scales = probe.b_scales = &dummy;
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
  std::size_t const fixed = ref_bytes + (compare ? bytes_c : 0);
  int const sets = input_set_count(set_bytes, fixed, gpu.info.l2_bytes, &r.error);
  if (sets == 0) return r;
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

  // Timing (measure.hpp). Each set's arguments are made here, so that no copy of them falls
  // between a launch's events.
  std::vector<GemmArguments> set_args;
  for (int s = 0; s < sets; ++s) set_args.push_back(args_for(s));
  LaunchOnSet baseline;
  if (compare) baseline = [&](int s) { run_baseline(set_args[s], set_args[s].d); };
  Measurement const m = measure_interleaved(
      {p.iters, p.warmup, p.gap_ms, sets, stream},
      [&](int s) { status_check(tessel::gemm(set_args[s], stream), "tessel::gemm"); }, baseline, nvml);
  if (compare && lt_fused) {  // the unfused pair too, interleaved with tessel in a run of its own
    Measurement const pm = measure_interleaved(
        {p.iters, p.warmup, p.gap_ms, sets, stream},
        [&](int s) { status_check(tessel::gemm(set_args[s], stream), "tessel::gemm"); },
        [&](int s) { run_pair(set_args[s], set_args[s].d); }, nvml);
    r.pair = pm.baseline;
  }
  r.sm_clock_after = m.sm_clock_after_mhz;
  r.power_after = m.power_after_w;
  r.tessel = m.candidate;
  r.cublas = m.baseline;
  r.ran = true;
  return r;
}

// ---- reports ------------------------------------------------------------------------------------

// The JSON's "method".
constexpr char const* kMethod =
    "median of --iters launches per side after --warmup, CUDA events per launch, "
    "tessel and cuBLAS interleaved, each launch on the next of the input sets rotated through >= 2x L2; "
    "fp32 baseline is cuBLAS CUBLAS_COMPUTE_32F (no tensor cores); fp8 baseline is cuBLASLt "
    "(tn only, fp32 compute, FAST_ACCUM off); a fused epilogue's baseline is cuBLASLt's epilogue computing the "
    "same (bias per row; relu, gelu_tanh), else cuBLAS then a separate elementwise pass (unfused_* fields: that "
    "pair, timed against tessel in a run of its own)";

// v as `std::ostream << v` writes it.
template <class T>
std::string text(T const& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// One problem's object in the JSON's "results" (bench/results/*.json; docs/PERF.md).
Fields json_fields(GpuReport const& gpu, Result const& r) {
  double const ratio = r.cublas_tflops() > 0 ? r.tflops() / r.cublas_tflops() : 0.0;
  Fields f = {{"op", json_string("gemm")}, {"m", text(r.p.m)}, {"n", text(r.p.n)}, {"k", text(r.p.k)},
              {"batch", text(r.p.batch)}};
  // The leading dimensions asked for (--lda/--ldb/--ldc), or nothing for a packed problem.
  if (r.p.lda != 0 || r.p.ldb != 0 || r.p.ldc != 0) {
    auto const one = [](long long ld) { return ld != 0 ? std::to_string(ld) : std::string("null"); };
    f.insert(f.end(), {{"lda", one(r.p.lda)}, {"ldb", one(r.p.ldb)}, {"ldc", one(r.p.ldc)}});
  }
  f.insert(f.end(),
           {{"dtype", json_string(r.p.dtype_name())},
            {"layout", json_string(r.p.layout)},
            {"scale_mode", json_string(tessel::to_string(r.p.scale_mode))},
            {"alpha", json_number(r.p.alpha)},
            {"beta", json_number(r.p.beta)},
            {"kernel", json_string(r.kernel)},
            {"ms", json_number(r.tessel.median_ms)},
            {"tflops", json_number(r.tflops())},
            {"pct_peak", json_number(100.0 * r.tflops() / peak_tflops(gpu.info, r.p.ab))},
            {"baseline", r.cublas.median_ms > 0 ? json_string(r.baseline) : "null"},
            {"baseline_ms", json_number(r.cublas.median_ms)},
            {"baseline_tflops", json_number(r.cublas_tflops())},
            {"ratio", json_number(ratio)},
            {"verified", r.p.verify ? (r.verified ? "true" : "false") : "null"},
            {"max_rel_err", r.p.verify ? json_number(r.check.max_rel_err) : "null"},
            {"baseline_max_rel_err",
             r.p.verify && r.cublas.median_ms > 0 ? json_number(r.cublas_check.max_rel_err) : "null"}});
  if (!r.baseline_note.empty()) f.emplace_back("baseline_note", json_string(r.baseline_note));
  if (r.p.fused())
    f.insert(f.end(), {{"bias", json_string(tessel::to_string(r.p.bias))}, {"activation", json_string(tessel::to_string(r.p.act))}});
  if (r.pair.median_ms > 0)
    f.insert(f.end(), {{"unfused_baseline", json_string(tessel::is_fp8(r.p.ab) ? "cublaslt+elementwise" : "cublas+elementwise")},
                       {"unfused_ms", json_number(r.pair.median_ms)},
                       {"unfused_ratio", json_number(r.pair_ratio())}});
  if (!r.p.tune.empty()) f.emplace_back("tune", json_string(r.p.tune));
  f.insert(f.end(), {{"iters", text(r.p.iters)}, {"input_sets", text(r.sets)}, {"sm_clock_after_mhz", text(r.sm_clock_after)},
                     {"power_after_w", json_number(r.power_after)}});
  return f;
}

// One problem's CSV row, after the gpu and commit columns.
Fields csv_fields(GpuReport const& gpu, Result const& r) {
  double const ratio = r.cublas_tflops() > 0 ? r.tflops() / r.cublas_tflops() : 0.0;
  return {{"m", text(r.p.m)},
          {"n", text(r.p.n)},
          {"k", text(r.p.k)},
          {"batch", text(r.p.batch)},
          {"dtype", r.p.dtype_name()},
          {"layout", r.p.layout},
          {"alpha", text(r.p.alpha)},
          {"beta", text(r.p.beta)},
          {"kernel", r.kernel},
          {"ms", json_number(r.tessel.median_ms)},
          {"tflops", json_number(r.tflops())},
          {"pct_peak", json_number(100.0 * r.tflops() / peak_tflops(gpu.info, r.p.ab))},
          {"baseline_ms", json_number(r.cublas.median_ms)},
          {"baseline_tflops", json_number(r.cublas_tflops())},
          {"ratio", json_number(ratio)},
          {"verified", r.p.verify ? (r.verified ? "yes" : "no") : "skipped"},
          {"max_rel_err", json_number(r.check.max_rel_err)},
          {"error", json_string(r.error)}};
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
      std::snprintf(buf, sizeof buf, " (%s %s %.2g)", r.baseline_label.c_str(), r.cublas_verified ? "ok" : "FAILED",
                    r.cublas_check.max_rel_err);
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
    std::printf("    %s: %s\n", r.baseline_label.c_str(), r.cublas_check.describe().c_str());
  if (r.p.fused() && r.cublas.median_ms > 0)
    std::printf("    baseline: %s%s\n", r.baseline_label.c_str(),
                r.baseline == "cublaslt_epilogue" ? " (its GELU is the tanh form)" : " (cuBLASLt has no epilogue for this fusion)");
  if (r.pair.median_ms > 0)
    std::printf("    vs the unfused pair (%s + elementwise pass): %.3f ms, ratio %.3f\n",
                tessel::is_fp8(r.p.ab) ? "cuBLASLt" : "cuBLAS", r.pair.median_ms, r.pair_ratio());
  std::fflush(stdout);
}

int run_gemm(std::vector<std::string> const& args) {
  Options base;
  parse_options(base, args, kOptions, "");
  if (base.has("--help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::vector<Options> lines =
      base.has("--sweep") ? read_sweep(*base.get("--sweep"), base, kOptions, [](Options const& o) { (void)make_problem(o); })
                          : std::vector<Options>{base};
  std::vector<Problem> problems;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    problems.push_back(make_problem(lines[i]));
    GemmArguments g = gemm_arguments(problems.back());  // the API's rules, before any CUDA call
    float dummy = 0;
    g.a = g.b = g.c = &dummy;
    g.d = &dummy;
    if (g.bias_mode != tessel::BiasMode::none) g.bias = &dummy;
    if (g.scale_mode == tessel::ScaleMode::block) g.a_scales = g.b_scales = &dummy;
    if (tessel::Status s = tessel::gemm_validate(g); !s)
      throw UsageError((lines.size() > 1 ? "problem " + std::to_string(i + 1) + ": " : std::string()) + s.reason);
  }
  std::string const suite = suite_name(base);
  if (base.has("--dry-run")) {
    for (Problem const& p : problems)
      std::printf("%s %s %s alpha %g beta %g kernel %s iters %d\n", p.shape().c_str(), p.dtype_name().c_str(),
                  p.layout.c_str(), p.alpha, p.beta, p.kernel.c_str(), p.iters);
    return 0;
  }

  int dev = 0;
  GpuReport gpu = open_gpu("tessel gemm", &dev);
  cublasHandle_t handle = nullptr;
  cublas_check(cublasCreate(&handle), "cublasCreate");
  std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(handle, [](cublasHandle_t h) { cublasDestroy(h); });
  int cublas_version = 0;
  cublasGetVersion(handle, &cublas_version);
  gpu.libraries.push_back({"cuBLAS", "cublas", cublas_version});
  cublas_check(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  cublasLtHandle_t lt = nullptr;  // cuBLASLt: the fp8 baseline
  cublas_check(cublasLtCreate(&lt), "cublasLtCreate");
  std::unique_ptr<cublasLtContext, void (*)(cublasLtHandle_t)> lt_guard(lt, [](cublasLtHandle_t h) { cublasLtDestroy(h); });
  Nvml nvml(dev);

  print_gpu_header(gpu, nvml.sm_clock_mhz());
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
    if (base.has("--csv")) append_csv(base.values.at("--csv"), gpu, csv_fields(gpu, r));
    results.push_back(std::move(r));
  }
  progress(problems.size(), problems.size(), "done");
  if (nvml.sm_clock_mhz()) std::printf("\nSM clock after the runs: %d MHz\n", nvml.sm_clock_mhz());
  if (base.has("--json")) {
    std::vector<Fields> rows;  // the problems that ran
    for (Result const& r : results)
      if (r.ran) rows.push_back(json_fields(gpu, r));
    write_json(base.values.at("--json"), gpu, suite, kMethod, rows);
  }
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
