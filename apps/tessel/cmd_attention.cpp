// apps/tessel/cmd_attention.cpp -- `tessel attention`: run, verify and time one attention forward
// or backward (or a sweep of them).
//
//   tessel attention                                B=4 H=32 S=4096 D=128 bf16, verified
//   tessel attention --causal --seqlen-q 8192 --heads 16 --kv-heads 2 --json r.json
//   tessel attention --varlen 16 --seqlen-q 4096 --causal     16 sequences of random lengths
//   tessel attention --backward --causal [--deterministic]    dQ, dK, dV of the same problem
//
// tessel is timed alone: no vendor attention is callable from C++ here (cuDNN's SDPA needs
// cudnn-frontend); `python -m tessel.bench attention` measures against cuDNN and FlashAttention-2
// in the same process, the same way.
//
// Method (docs/PERF.md): Q and K are uniform(-2,2), V uniform(-1,1), from a fixed hash (scores of
// standard deviation ~1.3 at D=128, so the softmax is neither flat nor one-hot); O and LSE are
// poisoned with NaN before the verification run, which FlashAttention-3's rule judges against an
// fp32 and an input-precision reference (tessel/reference/attention_device.hpp). Timing
// (measure.hpp): warm-up, then `iters` launches, each between its own CUDA events and on the next
// of the input sets (Q, K, V, O, LSE), which together exceed 2x the L2; the median is reported.
// Every launch writes LSE, as a training forward does.
//
// --backward: each input set also holds dO (uniform(-1,1)), the forward's O and LSE (from one
// untimed attention_forward per set) and dQ, dK, dV; the timed launch is attention_backward, with
// one workspace allocated beforehand (attention_backward_workspace_size) that every launch reuses,
// as a caching allocator would hand it out. The verification poisons dQ, dK, dV with NaN and
// judges them by FlashAttention-3's rule against the exact (fp64) and input-precision gradient
// references of tessel/reference/attention_backward_device.hpp, which compute their own LSE and
// share no code with the kernels.
//
// FLOPs: 2 * (D + D_v) per (query, key) pair the mask keeps, per query head: Q K^T and P V. The
// pairs are counted exactly on the host, sequence by sequence, so a causal square problem counts
// S(S+1)/2 pairs (FlashAttention's scripts count S^2/2, 0.02% fewer at S=4096) and windows,
// top-left alignment and ragged lengths count what they keep. The backward counts 2.5x that
// (FlashAttention's convention: five GEMMs of the pair's size against the forward's two), the same
// in the deterministic mode although that one recomputes S and dP for dQ.
//
// This file holds what is attention's own: the options, the problem and its AttentionArguments,
// the input sets' contents, the verification, the table, the JSON and CSV columns. Option parsing,
// sweep files, the timing and the GPU conditions are in measure.hpp; the header and files in report.hpp.
// Every error is one line; bad arguments and a missing GPU exit 2, failures while running exit 1.
#include "command.hpp"

#if defined(TESSEL_HAS_CUDA)

#include "measure.hpp"
#include "report.hpp"

#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/reference/attention_backward_device.hpp>
#include <tessel/reference/attention_device.hpp>
#include <tessel/reference/gemm_device.hpp>  // fill_uniform_device, fill_constant_device

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tessel::AttentionArguments;
using tessel::AttentionBackwardArguments;
using tessel::DType;
using tessel::MaskAlign;
using namespace tessel::cli;  // UsageError; measure.hpp, report.hpp

constexpr char const* kUsage =
    "usage: tessel attention [options]       run, verify and time O = softmax(scale * Q K^T + mask) V\n"
    "                                        (or, with --backward, its gradients dQ, dK, dV)\n"
    "\n"
    "problem (FlashAttention's layout: Q [B, S_q, H, D], K [B, S_k, H_kv, D], V [B, S_k, H_kv, D_v]):\n"
    "  --batch B           sequences (default 4)\n"
    "  --heads H           query heads (default 32)\n"
    "  --kv-heads H_kv     key/value heads, H a multiple of them: GQA, MQA (default H)\n"
    "  --seqlen-q S        query length (default 4096)\n"
    "  --seqlen-k S        key length (default the query length)\n"
    "  --head-dim D        of Q and K (default 128); --head-dim-v D_v of V and O (default D)\n"
    "  --dtype T           bf16 (default) or fp16\n"
    "  --causal            each query sees the keys up to its own position\n"
    "  --window L,R        query at key position p sees keys p-L .. p+R (-1: unbounded that side)\n"
    "  --align A           where query i sits when S_q != S_k: bottom-right (default, FlashAttention's:\n"
    "                      p = i + S_k - S_q) or top-left (torch's is_causal: p = i)\n"
    "  --softcap X         scores become X * tanh(s / X) (default 0: none)\n"
    "  --scale X           softmax scale (default 1/sqrt(D))\n"
    "  --varlen N          N packed sequences of random lengths (fixed by --seed; cu_seqlens made on\n"
    "                      the host): query lengths uniform in 0..S_q, key lengths in 0..S_k (equal to\n"
    "                      the query's when S_q == S_k); --batch is then N (leave it out or say N)\n"
    "  --kernel NAME       an attention kernel from `tessel list` (with --backward a backward one), or auto\n"
    "                      (default: the library's pick)\n"
    "pass:\n"
    "  --backward          run and time attention_backward: dQ, dK, dV for a random dO, from the O and\n"
    "                      LSE of an untimed forward; verified against fp64 and input-precision references\n"
    "  --deterministic     the backward's bitwise-repeatable mode (needs --backward)\n"
    "method:\n"
    "  --iters N           timed launches (default 30)\n"
    "  --warmup N          untimed launches first (default 5)\n"
    "  --gap-ms G          idle milliseconds before each timed launch: burst figures (default 0)\n"
    "  --verify | --no-verify       judge O and LSE (dQ, dK, dV) by FlashAttention-3's rule (default on)\n"
    "  --seed S            input data and --varlen lengths seed (default 1)\n"
    "output:\n"
    "  --csv FILE          append one row per problem\n"
    "  --json FILE         write the results as JSON (docs/PERF.md; DESIGN.md section 6)\n"
    "  --suite NAME        the suite name recorded in the JSON (default: the sweep file's stem)\n"
    "many problems:\n"
    "  --sweep FILE        one problem per line, written as the options above ('#' comments);\n"
    "                      each line's options override the command line's\n"
    "  --dry-run           print the problems and their FLOPs, and stop (no GPU needed)\n"
    "  --help              this text\n"
    "\n"
    "TFLOP/s counts 2*(D+D_v) FLOPs per (query, key) pair the mask keeps, per query head, exactly;\n"
    "the backward 2.5 times that.\n"
    "tessel runs alone here (cuDNN's SDPA is not callable without cudnn-frontend); the same-process\n"
    "comparison against cuDNN and FlashAttention-2 is `python -m tessel.bench attention`.\n";

OptionNames const kOptions{"attention",
                           {"--batch", "--heads", "--kv-heads", "--seqlen-q", "--seqlen-k", "--head-dim",
                            "--head-dim-v", "--dtype", "--window", "--align", "--softcap", "--scale", "--varlen",
                            "--kernel", "--iters", "--warmup", "--gap-ms", "--seed", "--csv", "--json", "--suite",
                            "--sweep"},
                           {"--causal", "--backward", "--deterministic", "--verify", "--no-verify", "--dry-run",
                            "--help"}};

// ---- one problem --------------------------------------------------------------------------------

// The backward's FLOPs over the forward's: FlashAttention's convention (S = Q K^T, dP = dO V^T,
// dV = P^T dO, dK = dS^T Q, dQ = dS K against S and O = P V: 5 GEMMs to 2).
constexpr double kBackwardFlopRatio = 2.5;

// The (query, key) pairs attention_arguments.hpp's mask keeps in one sequence of lq queries and
// lk keys: the keys of query i are max(0, p-L) .. min(lk-1, p+R), p its key position.
std::int64_t kept_pairs(std::int64_t lq, std::int64_t lk, AttentionArguments const& a) {
  std::int64_t const wl = tessel::attention_window_left(a), wr = tessel::attention_window_right(a);
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < lq; ++i) {
    std::int64_t const p = a.align == MaskAlign::bottom_right ? i + lk - lq : i;
    std::int64_t const lo = wl < 0 ? 0 : std::max<std::int64_t>(0, p - wl);
    std::int64_t const hi = wr < 0 ? lk - 1 : std::min(lk - 1, p + wr);
    n += std::max<std::int64_t>(0, hi - lo + 1);
  }
  return n;
}

// A fixed, portable hash (std::uniform_int_distribution differs between standard libraries).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Problem {
  long long batch = 4, heads = 32, kv_heads = 32, seqlen_q = 4096, seqlen_k = 4096;
  int head_dim = 128, head_dim_v = 128;
  DType dtype = DType::bf16;
  bool causal = false;
  long long window_left = -1, window_right = -1;
  MaskAlign align = MaskAlign::bottom_right;
  float softcap = 0.0f, scale = 0.0f;
  long long varlen = 0;                  // N sequences of random lengths; 0: B of full length
  std::vector<std::int32_t> cu_q, cu_k;  // --varlen: the cu_seqlens, N + 1 entries each
  std::string kernel = "auto";
  int iters = 30, warmup = 5;
  double gap_ms = 0.0;
  bool verify = true;
  bool backward = false, deterministic = false;  // --backward, --deterministic
  unsigned long long seed = 1;
  double flops = 0.0;  // set by make_problem: the forward's, or 2.5x it for the backward

  long long rows_q() const { return varlen ? cu_q.back() : batch * seqlen_q; }
  long long rows_k() const { return varlen ? cu_k.back() : batch * seqlen_k; }

  // The host-API arguments, pointers unset.
  AttentionArguments arguments() const {
    AttentionArguments a =
        tessel::make_packed_attention(batch, seqlen_q, seqlen_k, heads, kv_heads, head_dim, head_dim_v, dtype);
    if (varlen) a.lse_head_stride = rows_q();  // LSE [H, total_q]
    a.softmax_scale = scale, a.softcap = softcap;
    a.causal = causal, a.window_left = window_left, a.window_right = window_right, a.align = align;
    a.kernel = kernel == "auto" || backward ? nullptr : kernel.c_str();
    return a;
  }

  // The backward's arguments of arguments(), gradients packed like their tensors; pointers unset.
  AttentionBackwardArguments backward_arguments() const {
    AttentionBackwardArguments b = tessel::make_packed_attention_backward(arguments());
    b.deterministic = deterministic;
    b.kernel = kernel == "auto" ? nullptr : kernel.c_str();
    return b;
  }

  // e.g. "b4 h32/8 s4096 d128", "varlen16 h32 s1024/4096 d192/128"
  std::string shape() const {
    auto const pair = [](long long x, long long y) {  // "32", or "32/8" where the two differ
      std::string s = std::to_string(x);
      if (x != y) s.append("/").append(std::to_string(y));
      return s;
    };
    return (varlen ? "varlen" + std::to_string(varlen) : "b" + std::to_string(batch)) + " h" + pair(heads, kv_heads) +
           " s" + pair(seqlen_q, seqlen_k) + " d" + pair(head_dim, head_dim_v);
  }
  // "forward", "backward" or "backward,deterministic"
  std::string pass() const { return backward ? (deterministic ? "backward,deterministic" : "backward") : "forward"; }
  // e.g. "causal", "window=256,0,top-left,softcap=30", "-"
  std::string mask() const {
    std::string m;
    auto const add = [&](std::string const& s) { m += (m.empty() ? "" : ",") + s; };
    if (causal) add("causal");
    if (window_left >= 0 || window_right >= 0)
      add("window=" + std::to_string(window_left) + "," + std::to_string(window_right));
    if (align == MaskAlign::top_left) add("top-left");
    if (softcap != 0.0f) add("softcap=" + json_number(softcap));
    if (scale != 0.0f) add("scale=" + json_number(scale));
    return m.empty() ? "-" : m;
  }
};

// a with non-null, aligned placeholders where it reads or writes memory: the validator's and
// can_implement's view of a problem before its buffers exist.
AttentionArguments with_placeholders(AttentionArguments a, bool varlen) {
  alignas(256) static std::int32_t placeholder[64];
  a.q.ptr = a.k.ptr = a.v.ptr = placeholder;
  a.o = placeholder;
  a.lse = reinterpret_cast<float*>(placeholder);
  if (varlen) a.cu_seqlens_q = a.cu_seqlens_k = placeholder;
  return a;
}

AttentionBackwardArguments with_placeholders(AttentionBackwardArguments b, bool varlen) {
  alignas(256) static std::int32_t placeholder[64];
  b.problem = with_placeholders(b.problem, varlen);
  b.d_o.ptr = b.dq.ptr = b.dk.ptr = b.dv.ptr = placeholder;
  return b;
}

// --varlen N: sequence b's lengths from a hash of (seed, b); keys as long as queries when S_q == S_k.
void make_varlen(Problem& p) {
  p.cu_q.assign(1, 0), p.cu_k.assign(1, 0);
  for (long long b = 0; b < p.varlen; ++b) {
    std::uint64_t const h = splitmix64(p.seed * 0x100000001b3ULL + std::uint64_t(b));
    long long const lq = (long long)(h % std::uint64_t(p.seqlen_q + 1));
    long long const lk = p.seqlen_q == p.seqlen_k ? lq : (long long)(splitmix64(h) % std::uint64_t(p.seqlen_k + 1));
    if (p.cu_q.back() + lq > INT32_MAX || p.cu_k.back() + lk > INT32_MAX)
      throw UsageError("--varlen: the packed sequences exceed 2^31 - 1 rows (cu_seqlens are int32)");
    p.cu_q.push_back(std::int32_t(p.cu_q.back() + lq)), p.cu_k.push_back(std::int32_t(p.cu_k.back() + lk));
  }
}

// The options onto a Problem, checked by the host API's rules (attention_validate.hpp) so that
// the CLI's messages are the library's; nothing touches the GPU.
Problem make_problem(Options const& o) {
  Problem p;
  long long const kMax = INT32_MAX;
  auto const get = [&](char const* name) { return o.get(name); };
  if (auto v = get("--batch")) p.batch = parse_int("--batch", *v, 0, kMax);
  if (auto v = get("--heads")) p.heads = parse_int("--heads", *v, 0, kMax);
  p.kv_heads = p.heads;
  if (auto v = get("--kv-heads")) p.kv_heads = parse_int("--kv-heads", *v, 0, kMax);
  if (auto v = get("--seqlen-q")) p.seqlen_q = parse_int("--seqlen-q", *v, 0, kMax);
  p.seqlen_k = p.seqlen_q;
  if (auto v = get("--seqlen-k")) p.seqlen_k = parse_int("--seqlen-k", *v, 0, kMax);
  if (auto v = get("--head-dim")) p.head_dim = int(parse_int("--head-dim", *v, 0, 1 << 16));
  p.head_dim_v = p.head_dim;
  if (auto v = get("--head-dim-v")) p.head_dim_v = int(parse_int("--head-dim-v", *v, 0, 1 << 16));
  if (auto v = get("--dtype")) {
    auto const t = tessel::parse_dtype(*v);
    if (!t || (*t != DType::bf16 && *t != DType::f16)) throw UsageError("--dtype: '" + *v + "' is not one of bf16, fp16");
    p.dtype = *t;
  }
  p.causal = o.has("--causal");
  if (auto v = get("--window")) {
    std::size_t const comma = v->find(',');
    if (comma == std::string::npos)
      throw UsageError("--window: '" + *v + "' is not L,R (keys p-L .. p+R; -1: unbounded on that side)");
    p.window_left = parse_int("--window", v->substr(0, comma), -kMax, kMax);
    p.window_right = parse_int("--window", v->substr(comma + 1), -kMax, kMax);
  }
  if (auto v = get("--align")) {
    if (*v != "bottom-right" && *v != "top-left") throw UsageError("--align: '" + *v + "' is not one of bottom-right, top-left");
    p.align = *v == "top-left" ? MaskAlign::top_left : MaskAlign::bottom_right;
  }
  if (auto v = get("--softcap")) p.softcap = parse_float("--softcap", *v);
  if (auto v = get("--scale")) p.scale = parse_float("--scale", *v);
  p.backward = o.has("--backward");
  p.deterministic = o.has("--deterministic");
  if (p.deterministic && !p.backward)
    throw UsageError("--deterministic: applies to the backward; add --backward (the forward is deterministic already)");
  if (auto v = get("--kernel")) {
    bool known = *v == "auto";
    if (p.backward) {
      for (int i = 0; i < tessel::attention_backward_kernel_count(); ++i)
        known = known || *v == tessel::attention_backward_kernel_info(i).name;
      if (!known)
        throw UsageError("--kernel: '" + *v + "' is not a compiled attention-backward kernel (see: tessel list)");
    } else {
      for (int i = 0; i < tessel::attention_kernel_count(); ++i) known = known || *v == tessel::attention_kernel_info(i).name;
      if (!known) throw UsageError("--kernel: '" + *v + "' is not a compiled attention kernel (see: tessel list)");
    }
    p.kernel = *v;
  }
  if (auto v = get("--iters")) p.iters = int(parse_int("--iters", *v, 1, 100000));
  if (auto v = get("--warmup")) p.warmup = int(parse_int("--warmup", *v, 0, 100000));
  if (auto v = get("--gap-ms")) p.gap_ms = double(parse_int("--gap-ms", *v, 0, 10000));
  if (auto v = get("--seed")) p.seed = static_cast<unsigned long long>(parse_int("--seed", *v, 0, 1LL << 62));
  p.verify = !o.has("--no-verify");
  if (auto v = get("--varlen")) {
    p.varlen = parse_int("--varlen", *v, 1, 1 << 24);
    if (o.has("--batch") && p.batch != p.varlen)
      throw UsageError("--batch " + std::to_string(p.batch) + " with --varlen " + *v +
                       ": --varlen N packs N sequences (leave --batch out or make it N)");
    p.batch = p.varlen;
    make_varlen(p);
  }
  AttentionArguments const a = p.arguments();
  if (tessel::Status const s = tessel::attention_validate(with_placeholders(a, p.varlen > 0)); !s) throw UsageError(s.reason);
  char const* picked = nullptr;  // the entry that will run (a named one that does not fit is refused here)
  if (p.backward) {
    AttentionBackwardArguments const b = with_placeholders(p.backward_arguments(), p.varlen > 0);
    if (tessel::Status const s = tessel::attention_backward_validate(b); !s) throw UsageError(s.reason);
    if (tessel::Status const s = tessel::attention_backward_kernel_name(b, &picked); !s) throw UsageError(s.reason);
  } else if (tessel::Status const s = tessel::attention_kernel_name(with_placeholders(a, p.varlen > 0), &picked); !s) {
    throw UsageError(s.reason);
  }
  p.kernel = picked;
  double pairs = 0;
  if (p.varlen) {
    for (long long b = 0; b < p.varlen; ++b) pairs += double(kept_pairs(p.cu_q[b + 1] - p.cu_q[b], p.cu_k[b + 1] - p.cu_k[b], a));
  } else {
    pairs = double(p.batch) * double(kept_pairs(p.seqlen_q, p.seqlen_k, a));
  }
  p.flops = 2.0 * double(p.head_dim + p.head_dim_v) * double(p.heads) * pairs;
  if (p.backward) p.flops *= kBackwardFlopRatio;
  return p;
}

// ---- one run --------------------------------------------------------------------------------------

struct Result {
  Problem p;
  bool ran = false;
  std::string error;  // why it did not run (one line)
  std::string note;   // why it had nothing to run
  Timing t;
  bool verified = false;
  tessel::reference::AttentionCheck check;             // the forward's verification
  tessel::reference::AttentionBackwardCheck grad_check;  // the backward's
  int sets = 0, sm_clock_after = 0;
  double power_after = 0.0;  // NVML's board power just after the timed runs (W), 0 without NVML
  double tflops() const { return t.median_ms > 0 ? p.flops / (t.median_ms * 1e-3) / 1e12 : 0.0; }
};

// One input set: the forward's tensors, and with --backward dO and the gradients (empty otherwise).
struct Set {
  DeviceBuffer q, k, v, o, lse;
  DeviceBuffer d_o, dq, dk, dv;
};

// Verification of the backward on input set 0 (x): dQ, dK, dV poisoned with NaN, one run, judged
// against the exact and the input-precision references.
void verify_backward(Problem const& p, AttentionBackwardArguments const& x, std::size_t n_q, std::size_t n_k,
                     std::size_t n_v, cudaStream_t stream, Result* r) {
  for (auto [ptr, n] : {std::pair{x.dq.ptr, n_q}, std::pair{x.dk.ptr, n_k}, std::pair{x.dv.ptr, n_v}})
    status_check(tessel::reference::fill_constant_device(ptr, p.dtype, std::int64_t(n), NAN, stream), "poison outputs");
  status_check(tessel::attention_backward(x, stream), "tessel::attention_backward");
  DeviceBuffer exact_q(n_q * sizeof(float)), exact_k(n_k * sizeof(float)), exact_v(n_v * sizeof(float));
  DeviceBuffer low_q(n_q * sizeof(float)), low_k(n_k * sizeof(float)), low_v(n_v * sizeof(float));
  auto const f = [](DeviceBuffer const& b) { return static_cast<float*>(b.p); };
  tessel::reference::AttentionGradients const exact{f(exact_q), f(exact_k), f(exact_v)};
  tessel::reference::AttentionGradients const low{f(low_q), f(low_k), f(low_v)};
  using tessel::reference::AttentionPrecision;
  status_check(tessel::reference::attention_backward_device(x, AttentionPrecision::exact, exact, stream),
               "fp64 gradient reference");
  status_check(tessel::reference::attention_backward_device(x, AttentionPrecision::low, low, stream),
               "low-precision gradient reference");
  status_check(tessel::reference::check_attention_backward(x, exact, low, &r->grad_check, stream), "check");
  r->verified = r->grad_check.pass;
}

Result run_problem(Problem const& p, GpuReport const& gpu, Nvml const& nvml) {
  Result r;
  r.p = p;
  AttentionArguments const a = p.arguments();  // validated by make_problem
  AttentionBackwardArguments const g = p.backward_arguments();
  if (p.backward ? tessel::attention_backward_is_noop(a) : tessel::attention_is_noop(a)) {
    r.note = p.backward ? "nothing to compute (B or H is 0)" : "nothing to compute (B, H or S_q is 0)";
    return r;
  }
  if (tessel::Status const s = p.backward ? tessel::can_implement(with_placeholders(g, p.varlen > 0))
                                          : tessel::can_implement(with_placeholders(a, p.varlen > 0));
      !s) {
    r.error = s.reason;
    return r;
  }
  std::size_t const el = tessel::size_of(p.dtype), dv = std::size_t(p.head_dim_v);
  std::size_t const n_q = std::size_t(p.rows_q() * p.heads) * std::size_t(p.head_dim);
  std::size_t const n_k = std::size_t(p.rows_k() * p.kv_heads) * std::size_t(p.head_dim);
  std::size_t const n_v = std::size_t(p.rows_k() * p.kv_heads) * dv;
  std::size_t const n_o = std::size_t(p.rows_q() * p.heads) * dv, n_lse = std::size_t(p.rows_q() * p.heads);
  std::size_t const grads = p.backward ? n_o + n_q + n_k + n_v : 0;  // dO, dQ, dK, dV
  std::size_t const set_bytes = (n_q + n_k + n_v + n_o + grads) * el + n_lse * sizeof(float);
  std::size_t const cu_bytes = p.varlen ? 2 * p.cu_q.size() * sizeof(std::int32_t) : 0;
  std::size_t workspace_bytes = 0;
  if (p.backward)
    status_check(tessel::attention_backward_workspace_size(with_placeholders(g, p.varlen > 0), &workspace_bytes), "workspace size");
  std::size_t ref_bytes = 0;  // the references: exact and low O and LSE, or gradients and statistics
  if (p.verify)
    ref_bytes = p.backward ? 2 * (n_q + n_k + n_v) * sizeof(float) + 2 * std::size_t(p.heads * p.batch * p.seqlen_q) * sizeof(double)
                           : 2 * (n_o + n_lse) * sizeof(float);
  int const sets = input_set_count(set_bytes, cu_bytes + workspace_bytes + ref_bytes, gpu.info.l2_bytes, &r.error);
  if (sets == 0) return r;
  r.sets = sets;

  cudaStream_t const stream = nullptr;
  auto fill = [&](void* x, DType t, std::size_t n, std::uint64_t seed, float lo, float hi) {
    status_check(tessel::reference::fill_uniform_device(x, t, std::int64_t(n), seed, lo, hi, stream), "fill inputs");
  };
  auto poison = [&](void* x, DType t, std::size_t n) {
    status_check(tessel::reference::fill_constant_device(x, t, std::int64_t(n), NAN, stream), "poison outputs");
  };
  DeviceBuffer cu(cu_bytes);  // cu_seqlens_q, then cu_seqlens_k
  if (p.varlen) {
    std::size_t const half = cu_bytes / 2;
    cuda_check(cudaMemcpy(cu.p, p.cu_q.data(), half, cudaMemcpyHostToDevice), "copy cu_seqlens_q");
    cuda_check(cudaMemcpy(static_cast<char*>(cu.p) + half, p.cu_k.data(), half, cudaMemcpyHostToDevice), "copy cu_seqlens_k");
  }
  DeviceBuffer workspace(workspace_bytes);  // the backward's, shared by every launch (one stream)
  std::vector<Set> bufs;
  std::vector<AttentionArguments> set_args;
  std::vector<AttentionBackwardArguments> set_grads;
  for (int s = 0; s < sets; ++s) {
    // At least one element each, so that an empty operand (S_k = 0) still has an address.
    auto alloc = [](std::size_t bytes) { return DeviceBuffer(std::max<std::size_t>(bytes, 16)); };
    Set x{alloc(n_q * el), alloc(n_k * el), alloc(n_v * el), alloc(n_o * el), alloc(n_lse * sizeof(float)), {}, {}, {}, {}};
    std::uint64_t const seed = p.seed * 1000003ULL + 17ULL * unsigned(s);
    fill(x.q.p, p.dtype, n_q, seed + 1, -2.0f, 2.0f);
    fill(x.k.p, p.dtype, n_k, seed + 2, -2.0f, 2.0f);
    fill(x.v.p, p.dtype, n_v, seed + 3, -1.0f, 1.0f);
    AttentionArguments y = a;
    y.q.ptr = x.q.p, y.k.ptr = x.k.p, y.v.ptr = x.v.p, y.o = x.o.p, y.lse = static_cast<float*>(x.lse.p);
    if (p.varlen) {
      y.cu_seqlens_q = static_cast<std::int32_t const*>(cu.p);
      y.cu_seqlens_k = y.cu_seqlens_q + p.cu_q.size();
    }
    set_args.push_back(y);
    if (p.backward) {  // dO random, O and LSE from the forward (untimed)
      x.d_o = alloc(n_o * el), x.dq = alloc(n_q * el), x.dk = alloc(n_k * el), x.dv = alloc(n_v * el);
      fill(x.d_o.p, p.dtype, n_o, seed + 4, -1.0f, 1.0f);
      status_check(tessel::attention_forward(y, stream), "tessel::attention_forward (O and LSE for the backward)");
      AttentionBackwardArguments z = g;
      z.problem = y;
      z.problem.kernel = nullptr;
      z.d_o.ptr = x.d_o.p, z.dq.ptr = x.dq.p, z.dk.ptr = x.dk.p, z.dv.ptr = x.dv.p;
      z.workspace = workspace.p, z.workspace_bytes = workspace_bytes;
      set_grads.push_back(z);
    }
    bufs.push_back(std::move(x));
  }

  // Verification: one run on set 0 into NaN-poisoned outputs, judged against both references.
  if (p.verify && p.backward) {
    verify_backward(p, set_grads[0], n_q, n_k, n_v, stream, &r);
  } else if (p.verify) {
    AttentionArguments const& x = set_args[0];
    poison(x.o, p.dtype, n_o);
    poison(x.lse, DType::f32, n_lse);
    status_check(tessel::attention_forward(x, stream), "tessel::attention_forward");
    DeviceBuffer o_exact(n_o * sizeof(float)), lse_exact(n_lse * sizeof(float));
    DeviceBuffer o_low(n_o * sizeof(float)), lse_low(n_lse * sizeof(float));
    auto const f = [](DeviceBuffer const& b) { return static_cast<float*>(b.p); };
    using tessel::reference::AttentionPrecision;
    status_check(tessel::reference::attention_device(x, AttentionPrecision::exact, f(o_exact), f(lse_exact), stream),
                 "fp32 reference");
    status_check(tessel::reference::attention_device(x, AttentionPrecision::low, f(o_low), f(lse_low), stream),
                 "low-precision reference");
    status_check(tessel::reference::check_attention(x, f(o_exact), f(lse_exact), f(o_low), f(lse_low), &r.check, stream),
                 "check");
    r.verified = r.check.pass;
  }

  auto const launch = [&](int s) {
    if (p.backward)
      status_check(tessel::attention_backward(set_grads[s], stream), "tessel::attention_backward");
    else
      status_check(tessel::attention_forward(set_args[s], stream), "tessel::attention_forward");
  };
  Measurement const m = measure_interleaved({p.iters, p.warmup, p.gap_ms, sets, stream}, launch, {}, nvml);
  r.t = m.candidate;
  r.sm_clock_after = m.sm_clock_after_mhz;
  r.power_after = m.power_after_w;
  r.ran = true;
  return r;
}

// ---- reports ------------------------------------------------------------------------------------

// The JSON's "method".
constexpr char const* kMethod =
    "median of --iters launches after --warmup, CUDA events per launch, each launch on the next of the input sets "
    "rotated through >= 2x L2, LSE written; tessel alone (cuDNN and FlashAttention-2 in the same process: "
    "python -m tessel.bench attention); FLOPs 2*(D+D_v) per (query, key) pair the mask keeps, per query head, "
    "counted exactly; verified by FlashAttention-3's rule against fp32 and input-precision references. "
    "pass backward: attention_backward timed the same way on input sets that add dO (and the forward's O and LSE, "
    "made untimed), one caller workspace reused by every launch; FLOPs 2.5x the forward's; dQ, dK, dV verified "
    "by FlashAttention-3's rule against fp64 and input-precision gradient references";

std::string verdict(Result const& r) {
  if (!r.p.verify) return "not verified";
  char buf[200];
  if (r.p.backward) {
    tessel::reference::AttentionBackwardCheck const& c = r.grad_check;
    std::snprintf(buf, sizeof buf, "%s dQ %.2g <= %.2g, dK %.2g <= %.2g, dV %.2g <= %.2g", r.verified ? "ok" : "FAILED",
                  c.max_err[0], c.bound[0], c.max_err[1], c.bound[1], c.max_err[2], c.bound[2]);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%s O %.2g <= %.2g, LSE %.2g <= %.2g", r.verified ? "ok" : "FAILED", r.check.max_err_o,
                r.check.bound_o, r.check.max_err_lse, r.check.bound_lse);
  return buf;
}

// One problem's object in the JSON's "results" (bench/results/*.json; docs/PERF.md), and its CSV
// row after the gpu and commit columns (the same JSON values as cells, strings quoted: a mask such
// as "window=256,0" holds a comma). Forward and backward rows have the same columns (a sweep may
// mix them): the other pass's errors are null.
Fields fields(GpuReport const& gpu, Result const& r) {
  Problem const& p = r.p;
  auto const n = [](long long v) { return std::to_string(v); };
  auto const forward = [&](double v) { return p.verify && !p.backward ? json_number(v) : "null"; };
  auto const backward = [&](double v) { return p.verify && p.backward ? json_number(v) : "null"; };
  tessel::reference::AttentionBackwardCheck const& c = r.grad_check;
  return {{"op", json_string(p.backward ? "attn_bwd" : "attn")}, {"pass", json_string(p.pass())},
          {"deterministic", p.deterministic ? "true" : "false"}, {"batch", n(p.batch)}, {"heads", n(p.heads)}, {"kv_heads", n(p.kv_heads)},
          {"seqlen_q", n(p.seqlen_q)}, {"seqlen_k", n(p.seqlen_k)}, {"head_dim", n(p.head_dim)},
          {"head_dim_v", n(p.head_dim_v)}, {"varlen", p.varlen ? n(p.varlen) : "null"}, {"total_q", n(p.rows_q())},
          {"total_k", n(p.rows_k())}, {"dtype", json_string(tessel::to_string(p.dtype))},
          {"mask", json_string(p.mask())}, {"kernel", json_string(p.kernel)}, {"flops", json_number(p.flops)},
          {"ms", json_number(r.t.median_ms)}, {"tflops", json_number(r.tflops())},
          {"pct_peak", json_number(100.0 * r.tflops() / peak_tflops(gpu.info, p.dtype))},
          {"baseline", "null"}, {"baseline_tflops", "null"}, {"ratio", "null"},
          {"verified", p.verify ? (r.verified ? "true" : "false") : "null"},
          {"max_err_o", forward(r.check.max_err_o)}, {"bound_o", forward(r.check.bound_o)},
          {"max_err_lse", forward(r.check.max_err_lse)}, {"bound_lse", forward(r.check.bound_lse)},
          {"max_err_dq", backward(c.max_err[0])}, {"bound_dq", backward(c.bound[0])},
          {"max_err_dk", backward(c.max_err[1])}, {"bound_dk", backward(c.bound[1])},
          {"max_err_dv", backward(c.max_err[2])}, {"bound_dv", backward(c.bound[2])},
          {"iters", n(p.iters)}, {"input_sets", n(r.sets)}, {"sm_clock_after_mhz", n(r.sm_clock_after)},
          {"power_after_w", json_number(r.power_after)}};
}

void print_row(GpuReport const& gpu, Result const& r) {
  std::string const head = r.p.shape() + "  " + r.p.mask() + (r.p.backward ? "  " + r.p.pass() : "");
  if (!r.ran) {
    std::printf("%-36s %-5s %s%s\n", head.c_str(), tessel::to_string(r.p.dtype),
                r.note.empty() ? "error: " : "", (r.note.empty() ? r.error : r.note).c_str());
    return;
  }
  std::printf("%-36s %-5s %-20s %9.3f %8.2f %5.1f%%  %s\n", head.c_str(), tessel::to_string(r.p.dtype), r.p.kernel.c_str(),
              r.t.median_ms, r.tflops(), 100.0 * r.tflops() / peak_tflops(gpu.info, r.p.dtype), verdict(r).c_str());
  if (r.p.verify && !r.verified) std::printf("    tessel: %s\n", r.p.backward ? r.grad_check.what : r.check.what);
  std::fflush(stdout);
}

int run_attention(std::vector<std::string> const& args) {
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
      std::printf("%s %s %s%s kernel %s flops %.0f total_q %lld total_k %lld iters %d\n", p.shape().c_str(),
                  p.mask().c_str(), tessel::to_string(p.dtype), p.backward ? (" " + p.pass()).c_str() : "",
                  p.kernel.c_str(), p.flops, p.rows_q(), p.rows_k(), p.iters);
    return 0;
  }

  int dev = 0;
  GpuReport const gpu = open_gpu("tessel attention", &dev);
  Nvml nvml(dev);
  print_gpu_header(gpu, nvml.sm_clock_mhz());
  std::printf("\n%-36s %-5s %-20s %9s %8s %6s  %s\n", "problem  mask", "dtype", "kernel", "ms", "TFLOP/s", "%peak",
              "verification (max |err| vs fp32 reference <= bound)");
  std::vector<Result> results;
  bool failed = false;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    progress(i, problems.size(), problems[i].shape() + " " + problems[i].mask());
    Result r;
    try {
      r = run_problem(problems[i], gpu, nvml);
    } catch (std::runtime_error const& e) {
      r.p = problems[i];
      r.error = e.what();
      if (cudaError_t const sticky = cudaDeviceSynchronize(); sticky != cudaSuccess) {  // the context is lost: stop
        print_row(gpu, r);
        throw std::runtime_error(std::string(e.what()) + " (the CUDA context is unusable: " + cudaGetErrorString(sticky) + ")");
      }
    }
    failed = failed || !r.error.empty() || (r.ran && r.p.verify && !r.verified);
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
  if (problems.size() == 1 && !results[0].error.empty()) throw std::runtime_error(results[0].error);
  return failed ? 1 : 0;
}

}  // namespace

static tessel::cli::Register reg{{"attention", "run, verify and time an attention forward or backward (--help)", run_attention}};

#else  // built without CUDA

namespace {
int run_attention(std::vector<std::string> const&) {
  throw tessel::cli::UsageError("this tessel was built without CUDA (TESSEL_ENABLE_CUDA=OFF); rebuild with CUDA to run attention");
}
}  // namespace
static tessel::cli::Register reg{{"attention", "run, verify and time an attention forward or backward (needs a CUDA build)", run_attention}};

#endif
