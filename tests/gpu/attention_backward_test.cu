// tessel::attention_backward, judged by FlashAttention-3's rule against two straightforward GPU
// references of the gradients that materialise P and dS (small problems only).
//
//   exact   fp32 throughout from the bf16/fp16 inputs: z = softcap(scale * <q, k>), LSE, P, dP,
//           Dsum = sum_j P dP, dS = P (dP - Dsum) dz/dt, then dQ = dS K, dK = dS^T Q (summed over
//           the KV head's query heads), dV = P^T dO
//   low     the same in the input precision: z, P, dP, dS and the gradients rounded to the dtype,
//           Dsum = <dO, O> with the forward kernel's O (as the kernel computes it)
// A gradient g passes when max |g - g_exact| <= 2 max |g_low - g_exact| + floor, with
// floor = 2^-7 (bf16) or 2^-10 (fp16) times max |g_exact| + 1e-6 (one unit in the last place at
// the largest magnitude, and the references' fp32 noise near 0); a NaN or infinity fails. The
// gradients are poisoned with NaN before every run. Keys that no query row sees must get
// dK = dV = 0 exactly. Covered: both dtypes; MHA, GQA, MQA; no mask, causal (bottom-right and
// top-left), windows, softcap, a negative scale; every head-dim pair; (S_q, S_k) in (1,1),
// (1,239), (239,1), (113,203), (799,3), (1023,1024); S % 128 == 64 with masks; variable-length
// batches with empty sequences; S_q = 0 and S_k = 0; both modes, the deterministic one bitwise
// equal over 12 runs; the judge against planted errors. Validation: tests/host/attention_validate_test.cpp.
// The library's gradient references (tessel/reference/attention_backward_device.hpp, which the
// CLI's `tessel attention --backward` judges by) are checked against this file's: exact to fp32
// rounding, low as close to exact as this file's low, and their judge on a run and a planted error.
#include "gpu/gemm_test_support.hpp"  // DeviceMem
#include "gpu/gpu_test.hpp"

#include <tessel/attention/attention.hpp>
#include <tessel/attention/attention_backward.hpp>
#include <tessel/attention/attention_mask.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/reference/attention_backward_device.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/numeric.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace tessel;

namespace {

// ---- the references ---------------------------------------------------------------------------------

struct RefProblem {
  AttentionArguments a;    // Q, K, V, O (the forward kernel's), mask, scale
  void const* d_o;         // packed like O
  std::int32_t const* cu_q;  // device copies, or null
  std::int32_t const* cu_k;
  std::int64_t rows_q, rows_k;  // packed rows of Q and K
  float* p;   // [H, rows_q, S_k max]
  float* ds;  // [H, rows_q, S_k max]
  float* dq;  // [rows_q, H, D]
  float* dk;  // [rows_k, H_kv, D]
  float* dv;  // [rows_k, H_kv, D_v]
};

template <class T>
__device__ float ld(void const* base, std::int64_t i) {
  return kernel::to_float(static_cast<T const*>(base)[i]);
}
template <class T, bool Low>
__device__ float rnd(float x) {
  if constexpr (Low) return kernel::to_float(kernel::from_float<T>(x));
  return x;
}

struct Seq {
  std::int64_t q0, k0, sq, sk;
};
__device__ Seq seq_of(RefProblem const& r, std::int64_t b) {
  if (r.cu_q == nullptr) return {b * r.a.seqlen_q, b * r.a.seqlen_k, r.a.seqlen_q, r.a.seqlen_k};
  return {r.cu_q[b], r.cu_k[b], r.cu_q[b + 1] - r.cu_q[b], r.cu_k[b + 1] - r.cu_k[b]};
}

// One thread per (packed query row, head): the row's P and dS (0 where masked).
template <class T, bool Low>
__global__ void ref_rows_kernel(RefProblem r) {
  AttentionArguments const& a = r.a;
  std::int64_t const idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= r.rows_q * a.heads) return;
  std::int64_t const row = idx / a.heads, h = idx % a.heads, g = h / (a.heads / a.kv_heads);
  std::int64_t b = 0;
  while (seq_of(r, b).q0 + seq_of(r, b).sq <= row) ++b;
  Seq const s = seq_of(r, b);
  std::int64_t const i = row - s.q0;
  int const d = a.head_dim, dv = attention_head_dim_v(a);
  float const scale = a.softmax_scale == 0.0f ? 1.0f / sqrtf(float(d)) : a.softmax_scale;
  AttentionMask const mask{s.sk, a.align == MaskAlign::top_left ? 0 : s.sk - s.sq, a.window_left,
                           a.causal ? 0 : a.window_right};
  std::int64_t const smax = a.seqlen_k;
  float* prow = r.p + (h * r.rows_q + row) * smax;
  float* dsrow = r.ds + (h * r.rows_q + row) * smax;
  std::int64_t const qo = row * a.heads * d + h * d, oo = row * a.heads * dv + h * dv;
  auto z_of = [&](std::int64_t j, float* dzdt) {
    std::int64_t const ko = (s.k0 + j) * a.kv_heads * d + g * d;
    float dot = 0.0f;
    for (int c = 0; c < d; ++c) dot = fmaf(ld<T>(a.q.ptr, qo + c), ld<T>(a.k.ptr, ko + c), dot);
    float x = rnd<T, Low>(dot * scale);
    *dzdt = scale;
    if (a.softcap > 0.0f) {
      float const th = tanhf(x / a.softcap);
      *dzdt = scale * (1.0f - th * th);
      x = rnd<T, Low>(a.softcap * th);
    }
    return x;
  };
  float m = -INFINITY, l = 0.0f, dzdt = 0.0f;
  for (std::int64_t j = 0; j < s.sk; ++j)
    if (mask.keeps(i, j)) m = fmaxf(m, z_of(j, &dzdt));
  for (std::int64_t j = 0; j < s.sk; ++j)
    if (mask.keeps(i, j)) l += expf(z_of(j, &dzdt) - m);
  float const lse = m + logf(l);
  float dsum = 0.0f;
  for (std::int64_t j = 0; j < smax; ++j) {
    prow[j] = 0.0f, dsrow[j] = 0.0f;
    if (j >= s.sk || !mask.keeps(i, j)) continue;
    float const pj = rnd<T, Low>(expf(z_of(j, &dzdt) - lse));
    std::int64_t const vo = (s.k0 + j) * a.kv_heads * dv + g * dv;
    float dp = 0.0f;
    for (int c = 0; c < dv; ++c) dp = fmaf(ld<T>(r.d_o, oo + c), ld<T>(a.v.ptr, vo + c), dp);
    prow[j] = pj;
    dsrow[j] = rnd<T, Low>(dp);  // dP for now
    dsum += pj * dsrow[j];
  }
  if constexpr (Low) {  // Dsum as the kernel forms it: <dO, O> with the forward's O
    dsum = 0.0f;
    for (int c = 0; c < dv; ++c) dsum = fmaf(ld<T>(r.d_o, oo + c), ld<T>(a.o, oo + c), dsum);
  }
  for (std::int64_t j = 0; j < s.sk; ++j) {
    if (!mask.keeps(i, j)) continue;
    (void)z_of(j, &dzdt);
    dsrow[j] = rnd<T, Low>(prow[j] * (dsrow[j] - dsum) * dzdt);
  }
}

// One thread per gradient element: dQ (packed row, head, column), then dK and dV (packed key, KV head, column).
template <class T, bool Low>
__global__ void ref_grads_kernel(RefProblem r) {
  AttentionArguments const& a = r.a;
  int const d = a.head_dim, dv = attention_head_dim_v(a);
  std::int64_t const group = a.heads / a.kv_heads, smax = a.seqlen_k;
  std::int64_t const nq = r.rows_q * a.heads * d, nk = r.rows_k * a.kv_heads * d, nv = r.rows_k * a.kv_heads * dv;
  std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx < nq) {
    std::int64_t const row = idx / (a.heads * d), h = (idx / d) % a.heads, c = idx % d, g = h / group;
    std::int64_t b = 0;
    while (seq_of(r, b).q0 + seq_of(r, b).sq <= row) ++b;
    Seq const s = seq_of(r, b);
    float acc = 0.0f;
    for (std::int64_t j = 0; j < s.sk; ++j)
      acc = fmaf(r.ds[(h * r.rows_q + row) * smax + j], ld<T>(a.k.ptr, (s.k0 + j) * a.kv_heads * d + g * d + c), acc);
    r.dq[idx] = rnd<T, Low>(acc);
    return;
  }
  idx -= nq;
  bool const is_v = idx >= nk;
  if (is_v) idx -= nk;
  if (idx >= (is_v ? nv : nk)) return;
  int const w = is_v ? dv : d;
  std::int64_t const key = idx / (a.kv_heads * w), g = (idx / w) % a.kv_heads, c = idx % w;
  std::int64_t b = 0;
  while (seq_of(r, b).k0 + seq_of(r, b).sk <= key) ++b;
  Seq const s = seq_of(r, b);
  std::int64_t const j = key - s.k0;
  float acc = 0.0f;
  for (std::int64_t h = g * group; h < (g + 1) * group; ++h)
    for (std::int64_t i = 0; i < s.sq; ++i) {
      std::int64_t const row = s.q0 + i;
      float const coef = (is_v ? r.p : r.ds)[(h * r.rows_q + row) * smax + j];
      float const x = is_v ? ld<T>(r.d_o, row * a.heads * dv + h * dv + c) : ld<T>(a.q.ptr, row * a.heads * d + h * d + c);
      acc = fmaf(coef, x, acc);
    }
  (is_v ? r.dv : r.dk)[idx] = rnd<T, Low>(acc);
}

// ---- problems ---------------------------------------------------------------------------------------

struct Mask {
  char const* name;
  bool causal;
  MaskAlign align;
  std::int64_t left, right;
  float softcap;
  float scale;
};
constexpr MaskAlign kBr = MaskAlign::bottom_right, kTl = MaskAlign::top_left;
constexpr Mask kMasks[] = {
    {"none", false, kBr, -1, -1, 0.0f, 0.0f},
    {"causal", true, kBr, -1, -1, 0.0f, 0.0f},
    {"causal top-left", true, kTl, -1, -1, 0.0f, 0.0f},
    {"window (17,5)", false, kBr, 17, 5, 0.0f, 0.0f},
    {"window (32,-1)", false, kBr, 32, -1, 0.0f, 0.0f},
    {"softcap 30, scale 1", false, kBr, -1, -1, 30.0f, 1.0f},
    {"causal, window_left 64, softcap 30, top-left", true, kTl, 64, -1, 30.0f, 0.0f},
    {"causal, negative scale -0.5", true, kBr, -1, -1, 0.0f, -0.5f},
};
struct Heads {
  std::int64_t h, hkv;
};
constexpr Heads kHeads[] = {{2, 2}, {4, 2}, {3, 1}};
struct Lengths {
  std::int64_t q, k;
};
constexpr Lengths kLengths[] = {{1, 1}, {1, 239}, {239, 1}, {113, 203}, {799, 3}, {1023, 1024}};

void apply(AttentionArguments& a, Mask const& m) {
  a.causal = m.causal, a.align = m.align, a.window_left = m.left, a.window_right = m.right;
  a.softcap = m.softcap, a.softmax_scale = m.scale;
}

std::string describe(AttentionArguments const& a, char const* mask, bool det) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s B%lld S_q %lld S_k %lld H %lld/%lld D %d/%d%s, %s%s", to_string(a.dtype),
                (long long)a.batch, (long long)a.seqlen_q, (long long)a.seqlen_k, (long long)a.heads,
                (long long)a.kv_heads, a.head_dim, attention_head_dim_v(a), attention_is_varlen(a) ? " varlen" : "", mask,
                det ? ", deterministic" : "");
  return buf;
}

std::vector<float> to_host(void const* p, DType t, std::size_t n) {
  std::vector<float> out(n);
  if (t == DType::f32) {
    EXPECT_EQ(cudaMemcpy(out.data(), p, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  std::vector<std::uint16_t> raw(n);
  EXPECT_EQ(cudaMemcpy(raw.data(), p, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::size_t i = 0; i < n; ++i) out[i] = t == DType::bf16 ? reference::bf16_to_float(raw[i]) : reference::f16_to_float(raw[i]);
  return out;
}

// FA3's rule on one gradient (host copies). Returns "" on a pass, else the first failure.
struct Verdict {
  double err = 0, low = 0, bound = 0;
  std::string why;
};
Verdict judge(char const* name, std::vector<float> const& g, std::vector<float> const& exact, std::vector<float> const& low,
              DType t) {
  Verdict v;
  double ref = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    ref = std::max(ref, std::fabs(double(exact[i])));
    v.low = std::max(v.low, std::fabs(double(low[i]) - exact[i]));
    if (std::isfinite(g[i])) v.err = std::max(v.err, std::fabs(double(g[i]) - exact[i]));
  }
  double const floor = (t == DType::bf16 ? 0x1p-7 : 0x1p-10) * ref + 1e-6;
  v.bound = 2 * v.low + floor;
  for (std::size_t i = 0; i < exact.size(); ++i)
    if (!(std::fabs(double(g[i]) - exact[i]) <= v.bound)) {  // NaN fails too
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s[%zu] = %g vs exact %g: bound %.3g (2 x low %.3g + floor %.3g)", name, i, g[i],
                    exact[i], v.bound, v.low, floor);
      v.why = buf;
      break;
    }
  return v;
}

// A packed problem on the device: Q, K, V, dO random, O and LSE from attention_forward, the
// gradients NaN; cu_q/cu_k host offsets make it variable-length.
struct Problem {
  AttentionBackwardArguments b;
  std::int64_t rows_q = 0, rows_k = 0;
  std::vector<std::int32_t> cuq, cuk;
  std::unique_ptr<DeviceMem> q, k, v, o, lse, d_o, dq, dk, dv, cu_q, cu_k;

  Problem(AttentionArguments a, std::uint64_t seed, std::vector<std::int32_t> cq = {}, std::vector<std::int32_t> ck = {})
      : cuq(std::move(cq)), cuk(std::move(ck)) {
    bool const varlen = !cuq.empty();
    rows_q = varlen ? cuq.back() : a.batch * a.seqlen_q;
    rows_k = varlen ? cuk.back() : a.batch * a.seqlen_k;
    int const dvd = attention_head_dim_v(a);
    std::size_t const eb = size_of(a.dtype);
    std::size_t const nq = std::size_t(rows_q * a.heads * a.head_dim) + 8, nk = std::size_t(rows_k * a.kv_heads * a.head_dim) + 8;
    std::size_t const nv = std::size_t(rows_k * a.kv_heads * dvd) + 8, no = std::size_t(rows_q * a.heads * dvd) + 8;
    q = std::make_unique<DeviceMem>(nq * eb), k = std::make_unique<DeviceMem>(nk * eb), v = std::make_unique<DeviceMem>(nv * eb);
    o = std::make_unique<DeviceMem>(no * eb), d_o = std::make_unique<DeviceMem>(no * eb);
    lse = std::make_unique<DeviceMem>(std::size_t(rows_q * a.heads + 1) * 4);
    dq = std::make_unique<DeviceMem>(nq * eb), dk = std::make_unique<DeviceMem>(nk * eb), dv = std::make_unique<DeviceMem>(nv * eb);
    EXPECT_TRUE(reference::fill_uniform_device(q->p, a.dtype, std::int64_t(nq), seed * 8 + 1, -2.0f, 2.0f).ok());
    EXPECT_TRUE(reference::fill_uniform_device(k->p, a.dtype, std::int64_t(nk), seed * 8 + 2).ok());
    EXPECT_TRUE(reference::fill_uniform_device(v->p, a.dtype, std::int64_t(nv), seed * 8 + 3).ok());
    EXPECT_TRUE(reference::fill_uniform_device(d_o->p, a.dtype, std::int64_t(no), seed * 8 + 4).ok());
    a.q.ptr = q->p, a.k.ptr = k->p, a.v.ptr = v->p, a.o = o->p, a.lse = static_cast<float*>(lse->p);
    if (varlen) {
      cu_q = std::make_unique<DeviceMem>(cuq.size() * 4), cu_k = std::make_unique<DeviceMem>(cuk.size() * 4);
      EXPECT_EQ(cudaMemcpy(cu_q->p, cuq.data(), cuq.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(cu_k->p, cuk.data(), cuk.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      a.cu_seqlens_q = static_cast<std::int32_t const*>(cu_q->p), a.cu_seqlens_k = static_cast<std::int32_t const*>(cu_k->p);
    }
    Status s = attention_forward(a);
    EXPECT_TRUE(s.ok()) << s.reason;
    b = make_packed_attention_backward(a);
    b.d_o.ptr = d_o->p, b.dq.ptr = dq->p, b.dk.ptr = dk->p, b.dv.ptr = dv->p;
  }
  std::size_t nq() const { return std::size_t(rows_q * b.problem.heads * b.problem.head_dim); }
  std::size_t nk() const { return std::size_t(rows_k * b.problem.kv_heads * b.problem.head_dim); }
  std::size_t nv() const { return std::size_t(rows_k * b.problem.kv_heads * attention_head_dim_v(b.problem)); }

  void poison() {
    EXPECT_TRUE(reference::fill_constant_device(dq->p, b.problem.dtype, std::int64_t(nq() + 8), NAN).ok());
    EXPECT_TRUE(reference::fill_constant_device(dk->p, b.problem.dtype, std::int64_t(nk() + 8), NAN).ok());
    EXPECT_TRUE(reference::fill_constant_device(dv->p, b.problem.dtype, std::int64_t(nv() + 8), NAN).ok());
  }
  Status run(bool deterministic) {
    poison();
    b.deterministic = deterministic;
    Status s = attention_backward(b);
    if (s) {
      cudaError_t const e = cudaDeviceSynchronize();
      if (e != cudaSuccess) return Status::error(StatusCode::cuda_error, cudaGetErrorString(e));
    }
    return s;
  }
};

// The gradients of both references (fp32, packed).
struct Grads {
  std::vector<float> dq, dk, dv;
};
Grads reference_grads(Problem const& pb, bool low) {
  AttentionArguments const& a = pb.b.problem;
  std::size_t const pn = std::size_t(a.heads * pb.rows_q * std::max<std::int64_t>(a.seqlen_k, 1));
  DeviceMem p(pn * 4), ds(pn * 4), dq(pb.nq() * 4 + 4), dk(pb.nk() * 4 + 4), dv(pb.nv() * 4 + 4);
  RefProblem r{a, pb.b.d_o.ptr, a.cu_seqlens_q, a.cu_seqlens_k, pb.rows_q, pb.rows_k,
               static_cast<float*>(p.p), static_cast<float*>(ds.p), static_cast<float*>(dq.p), static_cast<float*>(dk.p),
               static_cast<float*>(dv.p)};
  unsigned const rows_ctas = unsigned((pb.rows_q * a.heads + 127) / 128);
  unsigned const grad_ctas = unsigned((pb.nq() + pb.nk() + pb.nv() + 127) / 128);
  bool const bf = a.dtype == DType::bf16;
  if (rows_ctas > 0) {
    if (bf) low ? ref_rows_kernel<__nv_bfloat16, true><<<rows_ctas, 128>>>(r) : ref_rows_kernel<__nv_bfloat16, false><<<rows_ctas, 128>>>(r);
    else low ? ref_rows_kernel<__half, true><<<rows_ctas, 128>>>(r) : ref_rows_kernel<__half, false><<<rows_ctas, 128>>>(r);
  }
  if (grad_ctas > 0) {
    if (bf) low ? ref_grads_kernel<__nv_bfloat16, true><<<grad_ctas, 128>>>(r) : ref_grads_kernel<__nv_bfloat16, false><<<grad_ctas, 128>>>(r);
    else low ? ref_grads_kernel<__half, true><<<grad_ctas, 128>>>(r) : ref_grads_kernel<__half, false><<<grad_ctas, 128>>>(r);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {to_host(dq.p, DType::f32, pb.nq()), to_host(dk.p, DType::f32, pb.nk()), to_host(dv.p, DType::f32, pb.nv())};
}

// Keys of each (sequence, KV head) that no query row sees: their dK and dV rows must be exactly 0.
void expect_unseen_keys_zero(Problem const& pb, std::vector<float> const& dk, std::vector<float> const& dv, std::string const& what) {
  AttentionArguments const& a = pb.b.problem;
  int const d = a.head_dim, dvd = attention_head_dim_v(a);
  std::int64_t const nb = a.batch;
  for (std::int64_t b = 0; b < nb; ++b) {
    std::int64_t const q0 = pb.cuq.empty() ? b * a.seqlen_q : pb.cuq[b], k0 = pb.cuk.empty() ? b * a.seqlen_k : pb.cuk[b];
    std::int64_t const sq = pb.cuq.empty() ? a.seqlen_q : pb.cuq[b + 1] - q0, sk = pb.cuk.empty() ? a.seqlen_k : pb.cuk[b + 1] - k0;
    AttentionMask const m{sk, a.align == MaskAlign::top_left ? 0 : sk - sq, a.window_left, a.causal ? 0 : a.window_right};
    for (std::int64_t j = 0; j < sk; ++j) {
      bool seen = false;
      for (std::int64_t i = 0; i < sq && !seen; ++i) seen = m.keeps(i, j);
      if (seen) continue;
      for (std::int64_t g = 0; g < a.kv_heads; ++g) {
        for (int c = 0; c < d; ++c)
          ASSERT_EQ(dk[std::size_t(((k0 + j) * a.kv_heads + g) * d + c)], 0.0f) << what << ": unseen key " << j << " of sequence " << b;
        for (int c = 0; c < dvd; ++c)
          ASSERT_EQ(dv[std::size_t(((k0 + j) * a.kv_heads + g) * dvd + c)], 0.0f) << what << ": unseen key " << j << " of sequence " << b;
      }
    }
  }
}

// Runs the backward (both modes, or only the mode pb.b asks for) and judges dQ, dK, dV. Returns the worst
// err / bound over the three.
double check(Problem& pb, std::string const& what, bool both_modes = true) {
  AttentionArguments const& a = pb.b.problem;
  Grads const exact = reference_grads(pb, false), low = reference_grads(pb, true);
  double worst = 0;
  for (bool det : {false, true}) {
    if (!both_modes && det != pb.b.deterministic) continue;
    std::string const w = what + (det ? ", deterministic" : "");
    Status const s = pb.run(det);
    EXPECT_TRUE(s.ok()) << w << ": " << s.reason;
    if (!s) return worst;
    std::vector<float> const dq = to_host(pb.dq->p, a.dtype, pb.nq()), dk = to_host(pb.dk->p, a.dtype, pb.nk());
    std::vector<float> const dv = to_host(pb.dv->p, a.dtype, pb.nv());
    Verdict const vq = judge("dQ", dq, exact.dq, low.dq, a.dtype), vk = judge("dK", dk, exact.dk, low.dk, a.dtype);
    Verdict const vv = judge("dV", dv, exact.dv, low.dv, a.dtype);
    EXPECT_EQ(vq.why, "") << w;
    EXPECT_EQ(vk.why, "") << w;
    EXPECT_EQ(vv.why, "") << w;
    for (Verdict const* v : {&vq, &vk, &vv})
      if (v->bound > 0) worst = std::max(worst, v->err / v->bound);
    expect_unseen_keys_zero(pb, dk, dv, w);
  }
  return worst;
}

void sweep(DType t, int d, int dv) {
  TESSEL_REQUIRE_GPU();
  double worst = 0;
  std::uint64_t seed = 1;
  for (Heads const& h : kHeads)
    for (Mask const& m : kMasks)
      for (Lengths const& l : kLengths) {
        // GQA and MQA on every mask with the ragged lengths; (1023, 1024) once per head layout.
        if (l.q == 1023 && &m != &kMasks[0] && &m != &kMasks[1]) continue;
        AttentionArguments a = make_packed_attention(1, l.q, l.k, h.h, h.hkv, d, dv, t);
        apply(a, m);
        Problem pb(a, seed++);
        worst = std::max(worst, check(pb, describe(a, m.name, false)));
        if (testing::Test::HasFailure()) return;
        // Where the automatic choice on this GPU is an sm_90a kernel, the sm_80 one by name too; where
        // it is D 256's with shared score tiles, also the form that takes a softcap.
        for (bool det : {false, true}) {
          pb.b.deterministic = det;
          char const* picked = nullptr;
          ASSERT_TRUE(attention_backward_kernel_name(pb.b, &picked).ok());
          if (!std::string_view(picked).starts_with("sm90_")) continue;
          std::string sm80 = std::string("sm80") + (picked + 4);
          for (char const* suffix : {"_deterministic", "_softcap"})
            if (sm80.ends_with(suffix)) sm80.resize(sm80.size() - std::strlen(suffix));
          std::vector<std::string> others{sm80};
          if (std::string_view(picked).ends_with("_d256")) others.push_back(std::string(picked) + "_softcap");
          for (std::string const& other : others) {
            pb.b.kernel = other.c_str();
            worst = std::max(worst, check(pb, describe(a, m.name, det) + ", " + other, /*both_modes=*/false));
            pb.b.kernel = nullptr;
            if (testing::Test::HasFailure()) return;
          }
        }
      }
  std::printf("  worst err / bound %.3f\n", worst);
}

// On an H100/H200 a fixed-length, aligned problem runs an sm_90a kernel at D 64 and 128 in both
// modes and at D 256 in the default mode; the other head dims run sm_80's.
TEST(AttentionBackward, HopperChoosesTheSm90KernelWhereItApplies) {
  TESSEL_REQUIRE_GPU();
  int dev = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
  if (major != 9) GTEST_SKIP() << "not an sm_90 GPU";
  for (int d : {64, 96, 128, 256}) {
    Problem pb(make_packed_attention(2, 200, 300, 4, 2, d, d, DType::bf16), 7);
    char const* picked = nullptr;
    for (bool det : {false, true}) {
      pb.b.deterministic = det;
      ASSERT_TRUE(attention_backward_kernel_name(pb.b, &picked).ok());
      bool const sm90 = d == 64 || d == 128 || (d == 256 && !det);
      EXPECT_EQ(std::string_view(picked).substr(0, 5), sm90 ? "sm90_" : "sm80_") << "D " << d << (det ? ", deterministic" : "");
    }
  }
}

TEST(AttentionBackward, SweepBf16D64) { sweep(DType::bf16, 64, 64); }
TEST(AttentionBackward, SweepBf16D96) { sweep(DType::bf16, 96, 96); }
TEST(AttentionBackward, SweepBf16D128) { sweep(DType::bf16, 128, 128); }
TEST(AttentionBackward, SweepBf16D192) { sweep(DType::bf16, 192, 192); }
TEST(AttentionBackward, SweepBf16D192x128) { sweep(DType::bf16, 192, 128); }
TEST(AttentionBackward, SweepBf16D256) { sweep(DType::bf16, 256, 256); }
TEST(AttentionBackward, SweepF16D64) { sweep(DType::f16, 64, 64); }
TEST(AttentionBackward, SweepF16D96) { sweep(DType::f16, 96, 96); }
TEST(AttentionBackward, SweepF16D128) { sweep(DType::f16, 128, 128); }
TEST(AttentionBackward, SweepF16D192) { sweep(DType::f16, 192, 192); }
TEST(AttentionBackward, SweepF16D192x128) { sweep(DType::f16, 192, 128); }
TEST(AttentionBackward, SweepF16D256) { sweep(DType::f16, 256, 256); }

// S % 128 == 64 with a mask (a case that breaks cuDNN), batches of 2.
TEST(AttentionBackward, SmallLengthsOf128kPlus64WithMasks) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16})
    for (Mask const& m : kMasks) {
      AttentionArguments a = make_packed_attention(2, 192, 320, 4, 2, 128, 128, t);
      apply(a, m);
      Problem pb(a, 77);
      check(pb, describe(a, m.name, false));
      AttentionArguments c = make_packed_attention(2, 320, 192, 4, 1, 64, 64, t);
      apply(c, m);
      Problem pc(c, 78);
      check(pc, describe(c, m.name, false));
    }
}

// Variable length with empty sequences on either side (a row with no key: dQ = 0; keys with no
// row: dK = dV = 0).
TEST(AttentionBackward, SmallVarlenWithEmptySequences) {
  TESSEL_REQUIRE_GPU();
  std::vector<std::int32_t> const cuq{0, 37, 37, 237, 238, 300}, cuk{0, 0, 90, 155, 156, 380};
  for (DType t : {DType::bf16, DType::f16})
    for (Mask const& m : kMasks)
      for (int d : {64, 128}) {
        AttentionArguments a = make_packed_attention(5, 200, 224, 4, 2, d, d, t);
        a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o_batch_stride = 0;
        a.lse_head_stride = cuq.back(), a.lse_batch_stride = 0;
        apply(a, m);
        Problem pb(a, 91, cuq, cuk);
        check(pb, describe(a, m.name, false));
      }
}

// S_q = 0 writes dK = dV = 0; S_k = 0 writes dQ = 0; B = 0 is a no-op.
TEST(AttentionBackward, SmallEmptyLengths) {
  TESSEL_REQUIRE_GPU();
  for (bool det : {false, true}) {
    AttentionArguments a = make_packed_attention(2, 0, 70, 4, 2, 64, 64, DType::bf16);
    Problem pb(a, 5);
    ASSERT_TRUE(pb.run(det).ok());
    for (float x : to_host(pb.dk->p, DType::bf16, pb.nk())) ASSERT_EQ(x, 0.0f);
    for (float x : to_host(pb.dv->p, DType::bf16, pb.nv())) ASSERT_EQ(x, 0.0f);
    AttentionArguments c = make_packed_attention(2, 70, 0, 4, 2, 64, 64, DType::bf16);
    Problem pc(c, 6);
    ASSERT_TRUE(pc.run(det).ok());
    for (float x : to_host(pc.dq->p, DType::bf16, pc.nq())) ASSERT_EQ(x, 0.0f);
  }
  AttentionArguments e = make_packed_attention(0, 10, 10, 4, 2, 64, 64, DType::bf16);
  AttentionBackwardArguments b = make_packed_attention_backward(e);
  EXPECT_TRUE(attention_backward(b).ok());
}

// The deterministic mode is bitwise identical over 12 runs (GQA, odd lengths, several key blocks
// per query block and query heads per KV head), causal and without a mask (on sm_90a: the key
// blocks' dQ additions last to first, and rotated), at D 128 and 64.
TEST(AttentionBackward, DeterministicIsBitwiseRepeatable) {
  TESSEL_REQUIRE_GPU();
  struct Case {
    bool causal;
    int d;
  };
  for (Case const c : {Case{true, 128}, Case{false, 128}, Case{false, 64}}) {
    AttentionArguments a = make_packed_attention(2, c.causal ? 517 : 1000, 700, 8, 2, c.d, c.d, DType::bf16);
    a.causal = c.causal;
    Problem pb(a, 11);
    std::vector<std::uint16_t> first[3];
    for (int run = 0; run < 12; ++run) {
      ASSERT_TRUE(pb.run(true).ok());
      std::size_t const n[3] = {pb.nq(), pb.nk(), pb.nv()};
      void const* src[3] = {pb.dq->p, pb.dk->p, pb.dv->p};
      for (int t = 0; t < 3; ++t) {
        std::vector<std::uint16_t> now(n[t]);
        ASSERT_EQ(cudaMemcpy(now.data(), src[t], n[t] * 2, cudaMemcpyDeviceToHost), cudaSuccess);
        if (run == 0) first[t] = now;
        else ASSERT_EQ(std::memcmp(now.data(), first[t].data(), n[t] * 2), 0) << "D " << c.d << ", gradient " << t << " differs on run " << run;
      }
    }
  }
}

// A caller workspace of exactly the queried size gives the stream-ordered allocation's result.
TEST(AttentionBackward, SmallCallerWorkspace) {
  TESSEL_REQUIRE_GPU();
  AttentionArguments a = make_packed_attention(1, 130, 90, 2, 1, 64, 64, DType::f16);
  a.window_left = 20, a.window_right = 3;
  Problem pb(a, 21);
  for (bool det : {false, true}) {
    pb.b.deterministic = det;
    std::size_t bytes = 0;
    ASSERT_TRUE(attention_backward_workspace_size(pb.b, &bytes).ok());
    EXPECT_GT(bytes, 0u);
    DeviceMem ws(bytes);
    pb.b.workspace = ws.p, pb.b.workspace_bytes = bytes;
    check(pb, describe(a, "window (20,3), caller workspace", det), false);
    pb.b.workspace = nullptr, pb.b.workspace_bytes = 0;
  }
}

// The judge fails a planted error just past its bound and a NaN.
TEST(AttentionBackward, JudgeCatchesPlantedErrors) {
  std::vector<float> exact{1.0f, -0.5f, 0.25f, 2.0f}, low{1.01f, -0.5f, 0.25f, 2.0f};
  std::vector<float> g = exact;
  EXPECT_EQ(judge("g", g, exact, low, DType::bf16).why, "");
  double const bound = 2 * 0.01 + 0x1p-7 * 2.0 + 1e-6;
  g[2] = float(0.25 + bound * 1.05);
  EXPECT_NE(judge("g", g, exact, low, DType::bf16).why, "");
  g = exact;
  g[3] = NAN;
  EXPECT_NE(judge("g", g, exact, low, DType::bf16).why, "");
}

// attention_backward_device's gradients (fp32 copies), host side.
Grads library_grads(Problem const& pb, reference::AttentionPrecision precision) {
  DeviceMem dq(pb.nq() * 4 + 4), dk(pb.nk() * 4 + 4), dv(pb.nv() * 4 + 4);
  reference::AttentionGradients const g{static_cast<float*>(dq.p), static_cast<float*>(dk.p), static_cast<float*>(dv.p)};
  Status const s = reference::attention_backward_device(pb.b, precision, g);
  EXPECT_TRUE(s.ok()) << s.reason;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {to_host(dq.p, DType::f32, pb.nq()), to_host(dk.p, DType::f32, pb.nk()), to_host(dv.p, DType::f32, pb.nv())};
}

double max_abs(std::vector<float> const& x) {
  double m = 0;
  for (float v : x) m = std::max(m, std::fabs(double(v)));
  return m;
}
double max_diff(std::vector<float> const& x, std::vector<float> const& y) {
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(double(x[i]) - double(y[i])));
  return m;
}

TEST(AttentionBackward, LibraryReferencesAgreeWithThisFilesAndJudgeRuns) {
  TESSEL_REQUIRE_GPU();
  std::vector<std::int32_t> const cuq{0, 37, 37, 237, 238, 300}, cuk{0, 0, 90, 155, 156, 380};
  struct Case {
    DType t;
    std::int64_t b, sq, sk, h, hkv;
    int d, dv;
    Mask const* mask;
    bool varlen;
  };
  Case const cases[] = {
      {DType::bf16, 2, 113, 203, 4, 2, 128, 128, &kMasks[1], false},  // GQA, causal
      {DType::f16, 1, 239, 117, 3, 1, 192, 128, &kMasks[6], false},   // MQA, S_q > S_k, softcap, top-left, window
      {DType::bf16, 1, 64, 300, 2, 2, 256, 256, &kMasks[3], false},   // window (17, 5)
      {DType::bf16, 5, 200, 224, 4, 2, 64, 64, &kMasks[7], true},     // varlen with empty sequences, negative scale
  };
  std::uint64_t seed = 501;
  for (Case const& c : cases) {
    AttentionArguments a = make_packed_attention(c.b, c.sq, c.sk, c.h, c.hkv, c.d, c.dv, c.t);
    if (c.varlen) {
      a.q.batch_stride = a.k.batch_stride = a.v.batch_stride = a.o_batch_stride = 0;
      a.lse_head_stride = cuq.back(), a.lse_batch_stride = 0;
    }
    apply(a, *c.mask);
    Problem pb(a, seed++, c.varlen ? cuq : std::vector<std::int32_t>{}, c.varlen ? cuk : std::vector<std::int32_t>{});
    std::string const what = describe(a, c.mask->name, false);
    Grads const exact = reference_grads(pb, false), low = reference_grads(pb, true);
    Grads const lib_exact = library_grads(pb, reference::AttentionPrecision::exact);
    Grads const lib_low = library_grads(pb, reference::AttentionPrecision::low);
    std::vector<float> const* const mine[3][2] = {{&lib_exact.dq, &lib_low.dq}, {&lib_exact.dk, &lib_low.dk},
                                                  {&lib_exact.dv, &lib_low.dv}};
    std::vector<float> const* const ours[3][2] = {{&exact.dq, &low.dq}, {&exact.dk, &low.dk}, {&exact.dv, &low.dv}};
    for (int g = 0; g < 3; ++g) {
      double const scale = max_abs(*ours[g][0]);
      // fp64 against fp32 arithmetic: equal up to fp32's noise (far below one bf16/fp16 ulp)
      EXPECT_LE(max_diff(*mine[g][0], *ours[g][0]), 0x1p-12 * scale + 1e-5) << what << ", gradient " << g;
      // the two low references round at the same points: each as far from exact as the other, within 2x
      double const d_mine = max_diff(*mine[g][1], *ours[g][0]), d_ours = max_diff(*ours[g][1], *ours[g][0]);
      EXPECT_LE(d_mine, 2 * d_ours + 0x1p-9 * scale + 1e-6) << what << ", gradient " << g;
      EXPECT_LE(d_ours, 2 * d_mine + 0x1p-9 * scale + 1e-6) << what << ", gradient " << g;
    }

    // The library's judge on the kernel's gradients: a pass, and a planted error found and named.
    ASSERT_TRUE(pb.run(false).ok()) << what;
    DeviceMem e_q(pb.nq() * 4 + 4), e_k(pb.nk() * 4 + 4), e_v(pb.nv() * 4 + 4);
    DeviceMem l_q(pb.nq() * 4 + 4), l_k(pb.nk() * 4 + 4), l_v(pb.nv() * 4 + 4);
    auto const f = [](DeviceMem const& m) { return static_cast<float*>(m.p); };
    reference::AttentionGradients const ge{f(e_q), f(e_k), f(e_v)}, gl{f(l_q), f(l_k), f(l_v)};
    ASSERT_TRUE(reference::attention_backward_device(pb.b, reference::AttentionPrecision::exact, ge).ok());
    ASSERT_TRUE(reference::attention_backward_device(pb.b, reference::AttentionPrecision::low, gl).ok());
    reference::AttentionBackwardCheck check;
    ASSERT_TRUE(reference::check_attention_backward(pb.b, ge, gl, &check).ok());
    EXPECT_TRUE(check.pass) << what << ": " << check.what;
    EXPECT_FALSE(check.nan) << what;
    if (pb.nk() > 5) {  // dK[packed key 0, KV head 0, column 5] = 100: far past any bound (varlen: sequence 1's key 0)
      std::uint16_t const hundred = c.t == DType::bf16 ? 0x42c8 : 0x5640;
      ASSERT_EQ(cudaMemcpy(static_cast<std::uint16_t*>(pb.dk->p) + 5, &hundred, 2, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_TRUE(reference::check_attention_backward(pb.b, ge, gl, &check).ok());
      EXPECT_FALSE(check.pass) << what;
      std::string const why = check.what;
      EXPECT_EQ(why.rfind(c.varlen ? "dK[b 1, j 0, h 0, d 5] = 100" : "dK[b 0, j 0, h 0, d 5] = 100", 0), 0u)
          << what << ": " << why;
    }
  }
}

TEST(AttentionBackward, RegistryListsEveryHeadDimPair) {
  // sm_80: both dtypes x (64, 96, 128, 192, 192/128, 256); sm_90a: both dtypes x (64, 128) x
  // (default, deterministic) and x 256 (default: score tiles shared, and the softcap's form).
  EXPECT_EQ(attention_backward_kernel_count(), 24);
  int sm80 = 0, sm90 = 0;
  for (int i = 0; i < attention_backward_kernel_count(); ++i) {
    AttentionBackwardKernelInfo const k = attention_backward_kernel_info(i);
    std::string const name = k.name;
    bool const is90 = name.rfind("sm90_attention_bwd_", 0) == 0;
    EXPECT_TRUE(is90 || name.rfind("sm80_attention_bwd_", 0) == 0) << name;
    EXPECT_EQ(k.min_sm, is90 ? 90 : 80) << name;
    (is90 ? sm90 : sm80) += 1;
  }
  EXPECT_EQ(sm80, 12);
  EXPECT_EQ(sm90, 12);
}

}  // namespace
