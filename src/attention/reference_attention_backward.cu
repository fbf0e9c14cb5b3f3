// src/attention/reference_attention_backward.cu -- the two references of the attention gradients
// (exact, low) and their judge (tessel/reference/attention_backward_device.hpp).
//
// Both references evaluate attention_backward_arguments.hpp's definition pair by pair, with the
// mask, softcap, GQA and variable-length sequences taken from the arguments (reference_attention_parts.cuh),
// never from the kernels' code. Two kernels; in each a CTA of 8 warps owns 16 rows (2 per warp)
// and walks tiles of 32 rows of the other side through shared memory (fp32 copies of the bf16/fp16
// inputs, which they hold exactly), one walked row per lane:
//
//   dq_kernel     own: query rows of one head (Q, dO)      walk: the keys they may see (K, V)
//                 pass 1  max m and l = sum exp(z - m) over the keys (online)  ->  LSE = m + log l
//                 pass 2  exact: Dsum = sum_j P dP;  low: Dsum = <dO, O> (the call's O; no pass)
//                 pass 3  dS of each key, dQ += dS K (a lane owns D / 32 columns)
//                 writes dQ and each row's (LSE, Dsum) for the second kernel
//   dkdv_kernel   own: key rows of one KV head (K, V)     walk: for each query head of the group,
//                 the query rows that may see them (Q, dO, the rows' LSE and Dsum)
//                 dK += dS Q, dV += P dO
//
// Arithmetic: double in the exact reference (stored as fp32), float in the low one, which rounds
// z, P, dP, dS and the gradients to the input dtype where a straightforward bf16/fp16 backward
// would (the GPU test's definition, tests/gpu/attention_backward_test.cu). The judge is the
// forward reference's (reference_attention_parts.cuh), once per gradient.
#include "reference_attention_parts.cuh"

#include <tessel/attention/attention_backward_validate.hpp>
#include <tessel/reference/attention_backward_device.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::reference {

namespace {

using namespace detail;

constexpr int kRowsPerWarp = 2;
constexpr int kWarps = 8;
constexpr int kOwnRows = kRowsPerWarp * kWarps;  // rows a CTA owns
constexpr int kWalkRows = 32;                     // rows of a walked tile: one per lane
constexpr int kMaxHeadDim = 256;
constexpr int kMaxColsPerLane = kMaxHeadDim / 32;  // gradient columns a lane owns (D / 32)

// The arithmetic of a reference: double (exact) or float (low).
template <bool Low>
using Acc = std::conditional_t<Low, float, double>;

__device__ inline float math_exp(float x) { return expf(x); }
__device__ inline double math_exp(double x) { return exp(x); }
__device__ inline float math_log(float x) { return logf(x); }
__device__ inline double math_log(double x) { return log(x); }
__device__ inline float math_tanh(float x) { return tanhf(x); }
__device__ inline double math_tanh(double x) { return tanh(x); }

// x rounded to T in the low reference; as it is in the exact one.
template <class T, bool Low>
__device__ Acc<Low> rounded(Acc<Low> x) {
  if constexpr (Low) return round_to<T>(x);
  return x;
}

// Everything the kernels read besides the arguments.
struct BackwardParams {
  AttentionArguments a;      // Q, K, V, O (low: Dsum), cu_seqlens, mask and scales
  AttentionOperand d_o;      // dO, shaped like O
  int d, dv;
  float scale;
  std::int64_t left, right;  // the window, causal folded in, clamped to kUnboundedWindow
  std::int64_t rows_cap;     // B * S_q: rows of the statistics (at least total_q)
  double* lse;               // [H, rows_cap]: the reference's own LSE (-inf: the row sees no key)
  double* dsum;              // [H, rows_cap]
  float* dq;                 // [rows_q, H, D]
  float* dk;                 // [rows_k, H_kv, D]
  float* dv_out;             // [rows_k, H_kv, D_v]
};

// The softmax input z of one (row, key) pair from <q, k>, and dz / d<q, k>:
// z = scale <q, k> (rounded in low), then softcap c tanh(z / c) (rounded again), dz = scale (1 - tanh^2).
template <class T, bool Low>
__device__ Acc<Low> softmax_input(Acc<Low> dot, BackwardParams const& p, Acc<Low>* dz) {
  using A = Acc<Low>;
  A x = rounded<T, Low>(dot * A(p.scale));
  *dz = A(p.scale);
  if (p.a.softcap > 0.0f) {
    A const cap = A(p.a.softcap), th = math_tanh(x / cap);
    *dz = A(p.scale) * (A(1) - th * th);
    x = rounded<T, Low>(cap * th);
  }
  return x;
}

std::size_t backward_smem_bytes(int d, int dv) {
  return sizeof(float) * std::size_t(kOwnRows + kWalkRows) * std::size_t(d + 1 + dv + 1);
}

// Grid: (tiles of 16 query rows, heads, batches); heads and batches past 65535 loop.
// Shared memory: sQ (16, D + 1), sDO (16, D_v + 1), sK (32, D + 1), sV (32, D_v + 1), fp32; the
// odd row lengths make lane j's reads of row j fall in distinct banks.
template <class T, bool Low>
__global__ void __launch_bounds__(kWarps * 32) dq_kernel(BackwardParams p) {
  using A = Acc<Low>;
  extern __shared__ float smem[];
  AttentionArguments const& a = p.a;
  int const d = p.d, dv = p.dv, lda = d + 1, ldb = dv + 1;
  float* sQ = smem;                  // (kOwnRows, D + 1)
  float* sDO = sQ + kOwnRows * lda;  // (kOwnRows, D_v + 1)
  float* sK = sDO + kOwnRows * ldb;  // (kWalkRows, D + 1)
  float* sV = sK + kWalkRows * lda;  // (kWalkRows, D_v + 1)
  int const warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  int const tid = int(threadIdx.x), nthreads = int(blockDim.x);
  bool const varlen = a.cu_seqlens_q != nullptr;
  std::int64_t const group = a.heads / a.kv_heads;
  A const neg_inf = -INFINITY;

  for (std::int64_t b = blockIdx.z; b < a.batch; b += gridDim.z)
  for (std::int64_t h = blockIdx.y; h < a.heads; h += gridDim.y) {
    SequenceRows const seq = sequence_rows(a, b);
    std::int64_t const i0 = std::int64_t(blockIdx.x) * kOwnRows;  // first query row of the tile
    if (i0 >= seq.len_q) continue;  // the same for the whole CTA
    std::int64_t const g = h / group;
    KeyWindow const win = key_window(a, seq, p.left, p.right);
    std::int64_t const q_row0 = varlen ? seq.q_first : 0, k_row0 = varlen ? seq.k_first : 0;
    RowRange const keys = keys_seen(win, i0, std::min(i0 + kOwnRows, seq.len_q) - 1, seq.len_k);
    std::int64_t const j_begin = keys.begin, j_end = keys.end;
    bool const any_key = j_begin < j_end;  // else Q, K, V, O may not exist (S_k = 0)

    __syncthreads();  // the previous (b, h)'s readers of the tiles are done
    if (any_key) {
      load_rows<T>(sQ, lda, a.q, kOwnRows, d, varlen, b, q_row0, i0, seq.len_q, h, tid, nthreads);
      load_rows<T>(sDO, ldb, p.d_o, kOwnRows, dv, varlen, b, q_row0, i0, seq.len_q, h, tid, nthreads);
    }

    // The keys [j0, j0 + 32) into sK (and sV): zeros past j_end.
    auto walk = [&](std::int64_t j0, bool with_v) {
      __syncthreads();  // the previous tile's readers are done (and sQ, sDO are written)
      load_rows<T>(sK, lda, a.k, kWalkRows, d, varlen, b, k_row0, j0, j_end, g, tid, nthreads);
      if (with_v) load_rows<T>(sV, ldb, a.v, kWalkRows, dv, varlen, b, k_row0, j0, j_end, g, tid, nthreads);
      __syncthreads();
    };
    // z[r], dz[r]: row r of the warp with this lane's key j0 + lane; z = -inf where masked.
    auto scores = [&](std::int64_t j0, A (&z)[kRowsPerWarp], A (&dz)[kRowsPerWarp]) {
      A dot[kRowsPerWarp] = {};
      float const* k_row = sK + lane * lda;
      for (int c = 0; c < d; ++c) {
        A const kc = k_row[c];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) dot[r] += A(sQ[(warp * kRowsPerWarp + r) * lda + c]) * kc;
      }
      std::int64_t const j = j0 + lane;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        std::int64_t const i = i0 + warp * kRowsPerWarp + r;
        A const x = softmax_input<T, Low>(dot[r], p, &dz[r]);
        z[r] = (j < j_end && i < seq.len_q && win.keeps(i, j)) ? x : neg_inf;
      }
    };
    // dp[r] = <dO of row r, V of this lane's key>.
    auto grad_scores = [&](A (&dp)[kRowsPerWarp]) {
      float const* v_row = sV + lane * ldb;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) dp[r] = 0;
      for (int c = 0; c < dv; ++c) {
        A const vc = v_row[c];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) dp[r] += A(sDO[(warp * kRowsPerWarp + r) * ldb + c]) * vc;
      }
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) dp[r] = rounded<T, Low>(dp[r]);
    };

    // Pass 1: LSE = m + log l, l = sum_j exp(z_j - m), online.
    A m[kRowsPerWarp], l[kRowsPerWarp], lse[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) m[r] = neg_inf, l[r] = 0;
    for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kWalkRows) {
      walk(j0, false);
      A z[kRowsPerWarp], dz[kRowsPerWarp];
      scores(j0, z, dz);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        A const tile_max = warp_max(z[r]);
        A const m_new = tile_max > m[r] ? tile_max : m[r];
        if (m_new == neg_inf) continue;  // no key of the row seen yet (warp-uniform)
        A const e = z[r] == neg_inf ? A(0) : math_exp(z[r] - m_new);
        l[r] = l[r] * math_exp(m[r] - m_new) + warp_sum(e);
        m[r] = m_new;
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) lse[r] = l[r] > 0 ? m[r] + math_log(l[r]) : neg_inf;

    // P of one pair from its z (0 where masked or where the row sees no key), rounded in low.
    auto prob = [&](A z, int r) { return (z == neg_inf || lse[r] == neg_inf) ? A(0) : rounded<T, Low>(math_exp(z - lse[r])); };

    // Pass 2: Dsum.
    A dsum[kRowsPerWarp] = {};
    if constexpr (Low) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        std::int64_t const i = i0 + warp * kRowsPerWarp + r;
        if (i >= seq.len_q || lse[r] == neg_inf) continue;  // warp-uniform
        std::int64_t const o_row =
            row_offset(varlen, b, q_row0 + i, h, a.o_batch_stride, a.o_row_stride, a.o_head_stride);
        float part = 0.0f;
        for (int c = lane; c < dv; c += 32)
          part = fmaf(sDO[(warp * kRowsPerWarp + r) * ldb + c], load_element<T>(a.o, o_row + c), part);
        dsum[r] = warp_sum(part);
      }
    } else {
      for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kWalkRows) {
        walk(j0, true);
        A z[kRowsPerWarp], dz[kRowsPerWarp], dp[kRowsPerWarp];
        scores(j0, z, dz);
        grad_scores(dp);
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) dsum[r] += warp_sum(prob(z[r], r) * dp[r]);
      }
    }

    // Pass 3: dQ = sum_j dS_j K_j.
    int const ncols = d / 32;
    A acc[kRowsPerWarp][kMaxColsPerLane] = {};
    for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kWalkRows) {
      walk(j0, true);
      A z[kRowsPerWarp], dz[kRowsPerWarp], dp[kRowsPerWarp], ds[kRowsPerWarp];
      scores(j0, z, dz);
      grad_scores(dp);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) ds[r] = rounded<T, Low>(prob(z[r], r) * (dp[r] - dsum[r]) * dz[r]);
      for (int jj = 0; jj < kWalkRows; ++jj) {
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          A const s = __shfl_sync(kFullWarp, ds[r], jj);
#pragma unroll
          for (int t = 0; t < kMaxColsPerLane; ++t)
            if (t < ncols) acc[r][t] += s * A(sK[jj * lda + t * 32 + lane]);
        }
      }
    }

    // dQ (0 for a row that sees no key) and the row's statistics.
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      std::int64_t const i = i0 + warp * kRowsPerWarp + r;
      if (i >= seq.len_q) continue;
      std::int64_t const row = seq.q_first + i;  // packed: b * S_q + i, or cu_seqlens_q[b] + i
      float* dq_row = p.dq + (row * a.heads + h) * d;
#pragma unroll
      for (int t = 0; t < kMaxColsPerLane; ++t)
        if (t < ncols) dq_row[t * 32 + lane] = float(rounded<T, Low>(acc[r][t]));
      if (lane == 0) {
        p.lse[h * p.rows_cap + row] = double(lse[r]);
        p.dsum[h * p.rows_cap + row] = double(dsum[r]);
      }
    }
  }
}

// Grid: (tiles of 16 keys, KV heads, batches); KV heads and batches past 65535 loop.
// Shared memory: sK (16, D + 1), sV (16, D_v + 1), sQ (32, D + 1), sDO (32, D_v + 1), fp32.
template <class T, bool Low>
__global__ void __launch_bounds__(kWarps * 32) dkdv_kernel(BackwardParams p) {
  using A = Acc<Low>;
  extern __shared__ float smem[];
  AttentionArguments const& a = p.a;
  int const d = p.d, dv = p.dv, lda = d + 1, ldb = dv + 1;
  float* sK = smem;                   // (kOwnRows, D + 1)
  float* sV = sK + kOwnRows * lda;    // (kOwnRows, D_v + 1)
  float* sQ = sV + kOwnRows * ldb;    // (kWalkRows, D + 1)
  float* sDO = sQ + kWalkRows * lda;  // (kWalkRows, D_v + 1)
  int const warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  int const tid = int(threadIdx.x), nthreads = int(blockDim.x);
  bool const varlen = a.cu_seqlens_q != nullptr;
  std::int64_t const group = a.heads / a.kv_heads;
  A const neg_inf = -INFINITY;
  int const ncols_k = d / 32, ncols_v = dv / 32;

  for (std::int64_t b = blockIdx.z; b < a.batch; b += gridDim.z)
  for (std::int64_t g = blockIdx.y; g < a.kv_heads; g += gridDim.y) {
    SequenceRows const seq = sequence_rows(a, b);
    std::int64_t const j0 = std::int64_t(blockIdx.x) * kOwnRows;  // first key of the tile
    if (j0 >= seq.len_k) continue;  // the same for the whole CTA
    KeyWindow const win = key_window(a, seq, p.left, p.right);
    std::int64_t const q_row0 = varlen ? seq.q_first : 0, k_row0 = varlen ? seq.k_first : 0;
    RowRange const rows = rows_seeing(win, j0, std::min(j0 + kOwnRows, seq.len_k) - 1, seq.len_q);
    std::int64_t const i_begin = rows.begin, i_end = rows.end;
    bool const any_row = i_begin < i_end;  // else Q, K, V may not exist (S_q = 0)

    __syncthreads();  // the previous (b, g)'s readers of the tiles are done
    if (any_row) {
      load_rows<T>(sK, lda, a.k, kOwnRows, d, varlen, b, k_row0, j0, seq.len_k, g, tid, nthreads);
      load_rows<T>(sV, ldb, a.v, kOwnRows, dv, varlen, b, k_row0, j0, seq.len_k, g, tid, nthreads);
    }

    A acc_k[kRowsPerWarp][kMaxColsPerLane] = {}, acc_v[kRowsPerWarp][kMaxColsPerLane] = {};
    for (std::int64_t h = g * group; h < (g + 1) * group && any_row; ++h)
      for (std::int64_t i0 = i_begin; i0 < i_end; i0 += kWalkRows) {
        __syncthreads();  // the previous tile's readers are done (and sK, sV are written)
        load_rows<T>(sQ, lda, a.q, kWalkRows, d, varlen, b, q_row0, i0, i_end, h, tid, nthreads);
        load_rows<T>(sDO, ldb, p.d_o, kWalkRows, dv, varlen, b, q_row0, i0, i_end, h, tid, nthreads);
        __syncthreads();

        // This lane's query row, its statistics, and its pairs with the warp's keys.
        std::int64_t const i = i0 + lane;
        bool const row_ok = i < i_end;
        std::int64_t const stat = h * p.rows_cap + seq.q_first + i;
        A const lse_i = row_ok ? A(p.lse[stat]) : neg_inf;
        A const dsum_i = row_ok ? A(p.dsum[stat]) : A(0);
        A dot[kRowsPerWarp] = {}, dp[kRowsPerWarp] = {};
        float const* q_row = sQ + lane * lda;
        float const* do_row = sDO + lane * ldb;
        for (int c = 0; c < d; ++c) {
          A const qc = q_row[c];
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) dot[r] += A(sK[(warp * kRowsPerWarp + r) * lda + c]) * qc;
        }
        for (int c = 0; c < dv; ++c) {
          A const oc = do_row[c];
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) dp[r] += A(sV[(warp * kRowsPerWarp + r) * ldb + c]) * oc;
        }
        A pr[kRowsPerWarp], ds[kRowsPerWarp];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          std::int64_t const j = j0 + warp * kRowsPerWarp + r;
          A dz = 0;
          A const z = softmax_input<T, Low>(dot[r], p, &dz);
          bool const keep = row_ok && j < seq.len_k && lse_i != neg_inf && win.keeps(i, j);
          pr[r] = keep ? rounded<T, Low>(math_exp(z - lse_i)) : A(0);
          ds[r] = rounded<T, Low>(pr[r] * (rounded<T, Low>(dp[r]) - dsum_i) * dz);
        }

        for (int ii = 0; ii < kWalkRows; ++ii) {
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) {
            A const pi = __shfl_sync(kFullWarp, pr[r], ii), si = __shfl_sync(kFullWarp, ds[r], ii);
#pragma unroll
            for (int t = 0; t < kMaxColsPerLane; ++t) {
              if (t < ncols_k) acc_k[r][t] += si * A(sQ[ii * lda + t * 32 + lane]);
              if (t < ncols_v) acc_v[r][t] += pi * A(sDO[ii * ldb + t * 32 + lane]);
            }
          }
        }
      }

    // dK, dV (0 for keys no row sees).
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      std::int64_t const j = j0 + warp * kRowsPerWarp + r;
      if (j >= seq.len_k) continue;
      std::int64_t const key = varlen ? seq.k_first + j : b * a.seqlen_k + j;  // packed row
      float* dk_row = p.dk + (key * a.kv_heads + g) * d;
      float* dv_row = p.dv_out + (key * a.kv_heads + g) * dv;
#pragma unroll
      for (int t = 0; t < kMaxColsPerLane; ++t) {
        if (t < ncols_k) dk_row[t * 32 + lane] = float(rounded<T, Low>(acc_k[r][t]));
        if (t < ncols_v) dv_row[t * 32 + lane] = float(rounded<T, Low>(acc_v[r][t]));
      }
    }
  }
}

template <class T, bool Low>
Status launch_backward_reference(BackwardParams const& p, CUstream_st* stream) {
  std::size_t const smem = backward_smem_bytes(p.d, p.dv);
  auto dq = dq_kernel<T, Low>;
  auto dkdv = dkdv_kernel<T, Low>;
  for (auto kernel : {dq, dkdv})
    if (Status s = cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
                               "cudaFuncSetAttribute (reference attention backward)");
        !s)
      return s;
  AttentionArguments const& a = p.a;
  unsigned const batches = static_cast<unsigned>(std::min<std::int64_t>(a.batch, 65535));
  if (a.seqlen_q > 0) {  // dQ (0 when S_k = 0) and the statistics
    dim3 const grid(static_cast<unsigned>((a.seqlen_q + kOwnRows - 1) / kOwnRows),
                    static_cast<unsigned>(std::min<std::int64_t>(a.heads, 65535)), batches);
    dq<<<grid, kWarps * 32, smem, stream>>>(p);
    if (Status s = cuda_status(cudaGetLastError(), "launch of the reference attention backward (dQ)"); !s) return s;
  }
  if (a.seqlen_k > 0) {  // dK, dV (0 when S_q = 0)
    dim3 const grid(static_cast<unsigned>((a.seqlen_k + kOwnRows - 1) / kOwnRows),
                    static_cast<unsigned>(std::min<std::int64_t>(a.kv_heads, 65535)), batches);
    dkdv<<<grid, kWarps * 32, smem, stream>>>(p);
    if (Status s = cuda_status(cudaGetLastError(), "launch of the reference attention backward (dK, dV)"); !s) return s;
  }
  return Status::success();
}

// ---- the judge --------------------------------------------------------------------------------------

// Element idx of a gradient in the references' packed order, idx = (row * heads + h) * cols + c,
// as an offset into the kernel's strided gradient.
struct GradientView {
  void const* ptr;
  std::int64_t seqlen;  // S (dense rows per sequence)
  bool varlen;
  std::int64_t heads;
  int cols;
  std::int64_t batch_stride, row_stride, head_stride;

  __host__ __device__ std::int64_t offset(std::int64_t idx) const {
    std::int64_t const c = idx % cols, h = (idx / cols) % heads, row = idx / (std::int64_t(cols) * heads);
    std::int64_t const base = varlen ? row * row_stride : (row / seqlen) * batch_stride + (row % seqlen) * row_stride;
    return base + h * head_stride + c;
  }
};

template <class T>
struct GradientReader {
  GradientView v;
  __device__ float operator()(std::int64_t idx) const { return load_element<T>(v.ptr, v.offset(idx)); }
};

__attribute__((format(printf, 2, 3))) void set_what(AttentionBackwardCheck* out, char const* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(out->what, sizeof out->what, fmt, args);
  va_end(args);
}

// The offsets of a variable-length batch, on the host.
Status host_offsets(std::int32_t const* device, std::int64_t batch, CUstream_st* stream, std::vector<std::int32_t>* out) {
  out->resize(std::size_t(batch) + 1);
  if (Status s = cuda_status(cudaMemcpyAsync(out->data(), device, out->size() * sizeof(std::int32_t),
                                             cudaMemcpyDeviceToHost, stream),
                             "cudaMemcpyAsync (cu_seqlens)");
      !s)
    return s;
  return cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize (cu_seqlens)");
}

}  // namespace

Status attention_backward_device(AttentionBackwardArguments const& b, AttentionPrecision precision,
                                 AttentionGradients const& out, CUstream_st* stream) {
  if (Status s = attention_backward_validate(b); !s) return s;
  AttentionArguments const& a = b.problem;
  if (attention_backward_is_noop(a)) return Status::success();
  if ((a.seqlen_q > 0 && out.dq == nullptr) || (a.seqlen_k > 0 && (out.dk == nullptr || out.dv == nullptr)))
    return Status::error(StatusCode::invalid_argument, "out: a null dq, dk or dv; the reference writes every gradient");
  BackwardParams p{a,
                   b.d_o,
                   a.head_dim,
                   attention_head_dim_v(a),
                   attention_softmax_scale(a),
                   clamp_window(attention_window_left(a)),
                   clamp_window(attention_window_right(a)),
                   a.batch * a.seqlen_q,
                   nullptr,
                   nullptr,
                   out.dq,
                   out.dk,
                   out.dv};
  std::size_t const stat_bytes = std::size_t(a.heads) * std::size_t(p.rows_cap) * sizeof(double);
  void* stats = nullptr;
  if (stat_bytes > 0) {
    if (Status s = cuda_status(cudaMallocAsync(&stats, 2 * stat_bytes, stream), "cudaMallocAsync (reference statistics)");
        !s)
      return s;
    p.lse = static_cast<double*>(stats);
    p.dsum = p.lse + a.heads * p.rows_cap;
  }
  bool const low = precision == AttentionPrecision::low;
  Status s = a.dtype == DType::bf16
                 ? (low ? launch_backward_reference<__nv_bfloat16, true>(p, stream)
                        : launch_backward_reference<__nv_bfloat16, false>(p, stream))
                 : (low ? launch_backward_reference<__half, true>(p, stream) : launch_backward_reference<__half, false>(p, stream));
  if (stats != nullptr) {
    Status const freed = cuda_status(cudaFreeAsync(stats, stream), "cudaFreeAsync (reference statistics)");
    if (s) s = freed;
  }
  return s;
}

Status check_attention_backward(AttentionBackwardArguments const& b, AttentionGradients const& exact,
                                AttentionGradients const& low, AttentionBackwardCheck* out, CUstream_st* stream) {
  *out = AttentionBackwardCheck{};
  if (Status s = attention_backward_validate(b); !s) return s;
  AttentionArguments const& a = b.problem;
  if (attention_backward_is_noop(a)) {
    out->pass = true;
    set_what(out, "pass: nothing to write");
    return Status::success();
  }

  // Packed rows of Q and K, and for variable length the sequences' first rows (to name a bad one).
  bool const varlen = attention_is_varlen(a);
  std::int64_t rows_q = a.batch * a.seqlen_q, rows_k = a.batch * a.seqlen_k;
  std::vector<std::int32_t> cu_q, cu_k;
  if (varlen) {
    if (Status s = host_offsets(a.cu_seqlens_q, a.batch, stream, &cu_q); !s) return s;
    if (Status s = host_offsets(a.cu_seqlens_k, a.batch, stream, &cu_k); !s) return s;
    rows_q = cu_q.back(), rows_k = cu_k.back();
  }
  int const dv = attention_head_dim_v(a);
  struct Gradient {
    char const* name;
    char const* row_name;  // "i" (a query row) or "j" (a key)
    GradientView view;
    std::int64_t rows;
    float const* exact;
    float const* low;
  };
  Gradient const grads[3] = {
      {"dQ", "i", {b.dq.ptr, a.seqlen_q, varlen, a.heads, a.head_dim, b.dq.batch_stride, b.dq.row_stride, b.dq.head_stride},
       rows_q, exact.dq, low.dq},
      {"dK", "j", {b.dk.ptr, a.seqlen_k, varlen, a.kv_heads, a.head_dim, b.dk.batch_stride, b.dk.row_stride, b.dk.head_stride},
       rows_k, exact.dk, low.dk},
      {"dV", "j", {b.dv.ptr, a.seqlen_k, varlen, a.kv_heads, dv, b.dv.batch_stride, b.dv.row_stride, b.dv.head_stride},
       rows_k, exact.dv, low.dv},
  };
  Verdict v[3];
  for (int n = 0; n < 3; ++n) {
    Gradient const& g = grads[n];
    std::int64_t const total = g.rows * g.view.heads * g.view.cols;
    if (total == 0) continue;
    if (g.exact == nullptr || g.low == nullptr)
      return Status::error(StatusCode::invalid_argument,
                           std::string("exact/low: a null ") + g.name + "; pass both references of every gradient");
    Status const s = a.dtype == DType::bf16
                         ? judge(GradientReader<__nv_bfloat16>{g.view}, total, g.exact, g.low, a.dtype, stream, &v[n])
                         : judge(GradientReader<__half>{g.view}, total, g.exact, g.low, a.dtype, stream, &v[n]);
    if (!s) return s;
    out->max_err[n] = v[n].max_err, out->max_err_low[n] = v[n].max_low, out->bound[n] = v[n].bound;
    out->nan = out->nan || v[n].nonfinite;
  }
  int bad = -1;
  for (int n = 2; n >= 0; --n)
    if (v[n].first_bad >= 0) bad = n;
  out->pass = bad < 0;
  if (out->pass) {
    set_what(out, "pass: dQ err %.3g <= %.3g; dK err %.3g <= %.3g; dV err %.3g <= %.3g", v[0].max_err, v[0].bound,
             v[1].max_err, v[1].bound, v[2].max_err, v[2].bound);
    return Status::success();
  }

  // The first bad element of the first failing gradient, named (b, row, h, d).
  Gradient const& g = grads[bad];
  std::int64_t const idx = v[bad].first_bad;
  int const col = int(idx % g.view.cols);
  std::int64_t const head = (idx / g.view.cols) % g.view.heads, row = idx / (std::int64_t(g.view.cols) * g.view.heads);
  std::int64_t seq = 0, r = row;
  if (varlen) {
    std::vector<std::int32_t> const& cu = bad == 0 ? cu_q : cu_k;
    seq = std::int64_t(std::upper_bound(cu.begin(), cu.end(), std::int32_t(row)) - cu.begin()) - 1;
    r = row - cu[std::size_t(seq)];
  } else {
    seq = row / g.view.seqlen, r = row % g.view.seqlen;
  }
  float value = 0.0f, expected = 0.0f;
  Status s = cuda_status(cudaMemcpy(&expected, g.exact + idx, sizeof expected, cudaMemcpyDeviceToHost),
                         "cudaMemcpy (first bad reference)");
  if (s)
    s = a.dtype == DType::bf16 ? copy_element<__nv_bfloat16>(&value, g.view.ptr, g.view.offset(idx))
                               : copy_element<__half>(&value, g.view.ptr, g.view.offset(idx));
  if (!s) return s;
  char where[80];
  std::snprintf(where, sizeof where, "%s[b %lld, %s %lld, h %lld, d %d]", g.name, (long long)seq, g.row_name,
                (long long)r, (long long)head, col);
  if (!std::isfinite(value))
    set_what(out, "%s = %g where the exact reference is %g", where, value, expected);
  else
    set_what(out, "%s = %g vs exact %g: err %.3g > bound %.3g (2 x low %.3g + floor %.3g)", where, value, expected,
             std::fabs(double(value) - expected), v[bad].bound, v[bad].max_low, v[bad].floor);
  return Status::success();
}

}  // namespace tessel::reference
