// src/attention/reference_attention.cu -- the two attention references (exact, low) and their judge.
//
// The references evaluate attention_arguments.hpp's definition directly: every (row, key) score,
// the mask from p(i) and the window, softcap before the mask, GQA's g = h / (H / H_kv), each
// variable-length sequence from cu_seqlens (read on the device). One warp owns a query row; the
// 32 rows of a CTA share K and V tiles of 32 keys in shared memory (fp32), so K and V are read
// once per 32 rows instead of once per row. A lane computes the score of one key of the tile
// (the whole dot product over D), then owns D_v / 32 columns of O for the P V update.
//
// Two passes over the keys per row: the first finds the row's max m and sum l = sum exp(s - m)
// (online, in fp32), the second forms p = exp(s - m) / l and accumulates p V. The low reference
// needs the final m and l before it rounds p (as torch's softmax does: normalise, then round),
// and both references share the same code, so both take two passes.
//
// The judge reduces |x - exact| and |low - exact| over the whole output on the GPU, forms FA3's
// bound, and then finds the first element past it in a second sweep.
#include "reference_attention_parts.cuh"

#include <tessel/attention/attention_validate.hpp>
#include <tessel/gemm/kernel/element_io.hpp>
#include <tessel/reference/attention_device.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace tessel::reference {

namespace {

using namespace detail;

constexpr int kRowsPerWarp = 4;
constexpr int kWarps = 8;
constexpr int kTileRows = kRowsPerWarp * kWarps;  // query rows per CTA
constexpr int kTileKeys = 32;                      // keys per tile: one per lane
constexpr int kMaxHeadDim = 256;
constexpr int kMaxColsPerLane = kMaxHeadDim / 32;  // columns of O a lane owns (D_v / 32)

// Everything the reference kernel reads besides the arguments.
struct ReferenceParams {
  AttentionArguments a;
  int d, dv;
  float scale;
  std::int64_t left, right;  // the window, causal folded in, clamped to kUnboundedWindow
  float* o;                  // [rows_total, H, D_v]
  float* lse;                // [H, rows_total], or null
};

// Grid: (query tiles of 32 rows, heads, batches); heads and batches past 65535 loop.
// Shared memory: sQ (32, D + 1), sK (32, D + 1), sV (32, D_v), fp32. The odd row length of sQ
// and sK makes lane j's reads of sK[j][d] fall in distinct banks.
template <class T, bool Low>
__global__ void __launch_bounds__(kWarps * 32) reference_attention_kernel(ReferenceParams p) {
  extern __shared__ float smem[];
  AttentionArguments const& a = p.a;
  int const d = p.d, dv = p.dv, ld = d + 1;
  float* sQ = smem;                    // (kTileRows, D + 1)
  float* sK = sQ + kTileRows * ld;     // (kTileKeys, D + 1)
  float* sV = sK + kTileKeys * ld;     // (kTileKeys, D_v)
  int const warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  int const ncols = dv / 32;
  bool const varlen = a.cu_seqlens_q != nullptr;
  std::int64_t const rows_total = varlen ? std::int64_t(a.cu_seqlens_q[a.batch]) : a.batch * a.seqlen_q;
  std::int64_t const group = a.heads / a.kv_heads;  // query heads per key/value head
  float const neg_inf = -INFINITY;

  for (std::int64_t b = blockIdx.z; b < a.batch; b += gridDim.z)
  for (std::int64_t h = blockIdx.y; h < a.heads; h += gridDim.y) {
    SequenceRows const seq = sequence_rows(a, b);
    std::int64_t const i0 = std::int64_t(blockIdx.x) * kTileRows;  // first query row of the tile
    if (i0 >= seq.len_q) continue;  // the same for the whole CTA
    std::int64_t const g = h / group;
    KeyWindow const win = key_window(a, seq, p.left, p.right);
    std::int64_t const q_row0 = varlen ? seq.q_first : 0, k_row0 = varlen ? seq.k_first : 0;
    RowRange const keys = keys_seen(win, i0, std::min(i0 + kTileRows, seq.len_q) - 1, seq.len_k);
    std::int64_t const j_begin = keys.begin, j_end = keys.end;

    __syncthreads();  // the previous (b, h)'s readers of sQ are done
    for (int idx = threadIdx.x; idx < kTileRows * d; idx += blockDim.x) {
      int const r = idx / d, c = idx % d;
      std::int64_t const i = i0 + r;
      sQ[r * ld + c] = i < seq.len_q ? load_element<T>(a.q.ptr, row_offset(varlen, b, q_row0 + i, h, a.q.batch_stride,
                                                                           a.q.row_stride, a.q.head_stride) + c)
                                     : 0.0f;
    }

    // The tile of keys [j0, j0 + 32) into sK (and sV): zeros past j_end.
    auto load_keys = [&](std::int64_t j0, bool with_v) {
      __syncthreads();  // the previous tile's readers are done (and sQ is written)
      load_rows<T>(sK, ld, a.k, kTileKeys, d, varlen, b, k_row0, j0, j_end, g, int(threadIdx.x), int(blockDim.x));
      if (with_v) load_rows<T>(sV, dv, a.v, kTileKeys, dv, varlen, b, k_row0, j0, j_end, g, int(threadIdx.x), int(blockDim.x));
      __syncthreads();
    };

    // s[r]: the score of this lane's key j0 + lane for the warp's row r, -inf where masked.
    auto scores = [&](std::int64_t j0, float (&s)[kRowsPerWarp]) {
      float dot[kRowsPerWarp] = {};
      float const* k_row = sK + lane * ld;
      for (int c = 0; c < d; ++c) {
        float const kc = k_row[c];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) dot[r] = fmaf(sQ[(warp * kRowsPerWarp + r) * ld + c], kc, dot[r]);
      }
      std::int64_t const j = j0 + lane;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        float x = dot[r] * p.scale;
        if constexpr (Low) x = round_to<T>(x);
        if (a.softcap > 0.0f) {
          x = a.softcap * tanhf(x / a.softcap);
          if constexpr (Low) x = round_to<T>(x);
        }
        std::int64_t const i = i0 + warp * kRowsPerWarp + r;
        s[r] = (j < j_end && win.keeps(i, j)) ? x : neg_inf;
      }
    };

    // Pass 1: the row max m and l = sum_j exp(s_j - m), online.
    float m[kRowsPerWarp], l[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) m[r] = neg_inf, l[r] = 0.0f;
    for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kTileKeys) {
      load_keys(j0, false);
      float s[kRowsPerWarp];
      scores(j0, s);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        float const m_new = fmaxf(m[r], warp_max(s[r]));
        if (m_new == neg_inf) continue;  // no key of the row seen yet (warp-uniform)
        float const e = s[r] == neg_inf ? 0.0f : expf(s[r] - m_new);
        l[r] = l[r] * expf(m[r] - m_new) + warp_sum(e);
        m[r] = m_new;
      }
    }

    // Pass 2: O = sum_j p_j V_j with p_j = exp(s_j - m) / l (rounded to T in the low reference).
    float acc[kRowsPerWarp][kMaxColsPerLane] = {};
    for (std::int64_t j0 = j_begin; j0 < j_end; j0 += kTileKeys) {
      load_keys(j0, true);
      float s[kRowsPerWarp], pr[kRowsPerWarp];
      scores(j0, s);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        pr[r] = s[r] == neg_inf ? 0.0f : expf(s[r] - m[r]) / l[r];
        if constexpr (Low) pr[r] = round_to<T>(pr[r]);
      }
      for (int jj = 0; jj < kTileKeys; ++jj) {
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          float const pj = __shfl_sync(kFullWarp, pr[r], jj);
#pragma unroll
          for (int t = 0; t < kMaxColsPerLane; ++t)
            if (t < ncols) acc[r][t] = fmaf(pj, sV[jj * dv + t * 32 + lane], acc[r][t]);
        }
      }
    }

    // O (0 for a row that sees no key) and LSE (-inf for it).
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      std::int64_t const i = i0 + warp * kRowsPerWarp + r;
      if (i >= seq.len_q) continue;
      std::int64_t const row = seq.q_first + i;  // packed: b * S_q + i, or cu_seqlens_q[b] + i
      bool const seen = l[r] > 0.0f;
      float* o_row = p.o + (row * a.heads + h) * dv;
#pragma unroll
      for (int t = 0; t < kMaxColsPerLane; ++t) {
        if (t >= ncols) continue;
        float x = seen ? acc[r][t] : 0.0f;
        if constexpr (Low) x = round_to<T>(x);
        o_row[t * 32 + lane] = x;
      }
      if (p.lse != nullptr && lane == 0) p.lse[h * rows_total + row] = seen ? m[r] + logf(l[r]) : neg_inf;
    }
  }
}

std::size_t reference_smem_bytes(int d, int dv) {
  return sizeof(float) * (std::size_t(kTileRows + kTileKeys) * (d + 1) + std::size_t(kTileKeys) * dv);
}

template <class T, bool Low>
Status launch_reference(ReferenceParams const& p, CUstream_st* stream) {
  auto kernel = reference_attention_kernel<T, Low>;
  std::size_t const smem = reference_smem_bytes(p.d, p.dv);
  if (Status s = cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
                             "cudaFuncSetAttribute (reference attention)");
      !s)
    return s;
  std::int64_t const tiles = (p.a.seqlen_q + kTileRows - 1) / kTileRows;
  dim3 const grid(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min<std::int64_t>(p.a.heads, 65535)),
                  static_cast<unsigned>(std::min<std::int64_t>(p.a.batch, 65535)));
  kernel<<<grid, kWarps * 32, smem, stream>>>(p);
  return cuda_status(cudaGetLastError(), "launch of the reference attention");
}

// ---- the judge --------------------------------------------------------------------------------------

// Element idx of the kernel's output, in the references' order, as a float:
//   O:   idx = (row * H + h) * D_v + c   (row packed)
//   LSE: idx = h * rows_total + row
struct OutputView {
  AttentionArguments a;
  std::int64_t rows_total;
  int dv;

  __host__ __device__ std::int64_t o_offset(std::int64_t idx) const {
    std::int64_t const c = idx % dv, h = (idx / dv) % a.heads, row = idx / (std::int64_t(dv) * a.heads);
    if (a.cu_seqlens_q != nullptr) return row * a.o_row_stride + h * a.o_head_stride + c;
    return (row / a.seqlen_q) * a.o_batch_stride + (row % a.seqlen_q) * a.o_row_stride + h * a.o_head_stride + c;
  }
  __host__ __device__ std::int64_t lse_offset(std::int64_t idx) const {
    std::int64_t const h = idx / rows_total, row = idx % rows_total;
    if (a.cu_seqlens_q != nullptr) return h * a.lse_head_stride + row;
    return (row / a.seqlen_q) * a.lse_batch_stride + h * a.lse_head_stride + row % a.seqlen_q;
  }
};

template <class T>
struct OReader {
  OutputView v;
  __device__ float operator()(std::int64_t idx) const { return load_element<T>(v.a.o, v.o_offset(idx)); }
};
struct LseReader {
  OutputView v;
  __device__ float operator()(std::int64_t idx) const { return v.a.lse[v.lse_offset(idx)]; }
};

// out->what, printf-style, cut to its length.
__attribute__((format(printf, 2, 3))) void set_what(AttentionCheck* out, char const* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(out->what, sizeof out->what, fmt, args);
  va_end(args);
}

}  // namespace

Status attention_device(AttentionArguments const& a, AttentionPrecision precision, float* o, float* lse,
                        CUstream_st* stream) {
  if (Status s = attention_validate(a); !s) return s;
  if (attention_is_noop(a)) return Status::success();
  if (o == nullptr) return Status::error(StatusCode::invalid_argument, "o: null; the reference writes O");
  ReferenceParams p{a, a.head_dim, attention_head_dim_v(a), attention_softmax_scale(a),
                    clamp_window(attention_window_left(a)), clamp_window(attention_window_right(a)), o, lse};
  bool const low = precision == AttentionPrecision::low;
  if (a.dtype == DType::bf16)
    return low ? launch_reference<__nv_bfloat16, true>(p, stream) : launch_reference<__nv_bfloat16, false>(p, stream);
  return low ? launch_reference<__half, true>(p, stream) : launch_reference<__half, false>(p, stream);
}

Status check_attention(AttentionArguments const& a, float const* o_exact, float const* lse_exact, float const* o_low,
                       float const* lse_low, AttentionCheck* out, CUstream_st* stream) {
  *out = AttentionCheck{};
  if (Status s = attention_validate(a); !s) return s;
  if (attention_is_noop(a)) {
    out->pass = true;
    set_what(out, "pass: nothing to write");
    return Status::success();
  }
  if (o_exact == nullptr || o_low == nullptr)
    return Status::error(StatusCode::invalid_argument, "o_exact/o_low: null; pass both references of O");
  if (a.lse != nullptr && (lse_exact == nullptr || lse_low == nullptr))
    return Status::error(StatusCode::invalid_argument, "lse_exact/lse_low: null while a.lse is set; pass both references of LSE");

  // The packed rows, and for variable length the sequences' first rows (to name the bad one).
  bool const varlen = attention_is_varlen(a);
  std::int64_t rows_total = a.batch * a.seqlen_q;
  std::vector<std::int32_t> cu_q;
  if (varlen) {
    cu_q.resize(std::size_t(a.batch) + 1);
    if (Status s = cuda_status(cudaMemcpyAsync(cu_q.data(), a.cu_seqlens_q, cu_q.size() * sizeof(std::int32_t),
                                               cudaMemcpyDeviceToHost, stream),
                               "cudaMemcpyAsync (cu_seqlens_q)");
        !s)
      return s;
    if (Status s = cuda_status(cudaStreamSynchronize(stream), "cudaStreamSynchronize (cu_seqlens_q)"); !s) return s;
    rows_total = cu_q.back();
  }
  int const dv = attention_head_dim_v(a);
  OutputView const view{a, rows_total, dv};

  Verdict vo, vl;
  std::int64_t const total_o = rows_total * a.heads * dv, total_lse = rows_total * a.heads;
  Status s = a.dtype == DType::bf16 ? judge(OReader<__nv_bfloat16>{view}, total_o, o_exact, o_low, a.dtype, stream, &vo)
                                    : judge(OReader<__half>{view}, total_o, o_exact, o_low, a.dtype, stream, &vo);
  if (s && a.lse != nullptr) s = judge(LseReader{view}, total_lse, lse_exact, lse_low, a.dtype, stream, &vl);
  if (!s) return s;

  out->max_err_o = vo.max_err, out->max_err_o_low = vo.max_low, out->bound_o = vo.bound;
  out->max_err_lse = vl.max_err, out->max_err_lse_low = vl.max_low, out->bound_lse = vl.bound;
  out->nan = vo.nonfinite || vl.nonfinite;
  out->pass = vo.first_bad < 0 && vl.first_bad < 0;
  if (out->pass) {
    set_what(out, "pass: O err %.3g <= %.3g; LSE err %.3g <= %.3g", vo.max_err, vo.bound,
                  vl.max_err, vl.bound);
    return Status::success();
  }

  // The first bad element: O's before LSE's. Name it as (b, i, h[, d]).
  bool const in_o = vo.first_bad >= 0;
  std::int64_t const idx = in_o ? vo.first_bad : vl.first_bad;
  std::int64_t row = 0;
  if (in_o) {
    out->bad_col = int(idx % dv);
    out->bad_head = (idx / dv) % a.heads;
    row = idx / (std::int64_t(dv) * a.heads);
  } else {
    out->bad_head = idx / rows_total;
    row = idx % rows_total;
  }
  out->bad_row = row;
  std::int64_t b = 0, i = row;
  if (varlen) {
    b = std::int64_t(std::upper_bound(cu_q.begin(), cu_q.end(), std::int32_t(row)) - cu_q.begin()) - 1;
    i = row - cu_q[std::size_t(b)];
  } else {
    b = row / a.seqlen_q, i = row % a.seqlen_q;
  }
  float value = 0.0f, expected = 0.0f;
  float const* ref = in_o ? o_exact : lse_exact;
  s = cuda_status(cudaMemcpy(&expected, ref + idx, sizeof expected, cudaMemcpyDeviceToHost), "cudaMemcpy (first bad reference)");
  if (s) {
    if (in_o)
      s = a.dtype == DType::bf16 ? copy_element<__nv_bfloat16>(&value, a.o, view.o_offset(idx))
                                 : copy_element<__half>(&value, a.o, view.o_offset(idx));
    else
      s = copy_element<float>(&value, a.lse, view.lse_offset(idx));
  }
  if (!s) return s;
  Verdict const& v = in_o ? vo : vl;
  char where[64];
  if (in_o)
    std::snprintf(where, sizeof where, "O[b %lld, i %lld, h %lld, d %d]", (long long)b, (long long)i,
                  (long long)out->bad_head, out->bad_col);
  else
    std::snprintf(where, sizeof where, "LSE[b %lld, h %lld, i %lld]", (long long)b, (long long)out->bad_head,
                  (long long)i);
  if (std::isinf(expected) && expected < 0)
    set_what(out, "%s = %g, but the row sees no key (exact -inf)", where, value);
  else if (std::isfinite(expected) && !std::isfinite(value))
    set_what(out, "%s = %g where the exact reference is %g", where, value, expected);
  else
    set_what(out, "%s = %g vs exact %g: err %.3g > bound %.3g (2 x low %.3g + floor %.3g)",
                  where, value, expected, std::fabs(double(value) - expected), v.bound, v.max_low, v.floor);
  return Status::success();
}

}  // namespace tessel::reference
