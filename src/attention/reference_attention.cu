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

Status cuda_status(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

constexpr int kRowsPerWarp = 4;
constexpr int kWarps = 8;
constexpr int kTileRows = kRowsPerWarp * kWarps;  // query rows per CTA
constexpr int kTileKeys = 32;                      // keys per tile: one per lane
constexpr int kMaxHeadDim = 256;
constexpr int kMaxColsPerLane = kMaxHeadDim / 32;  // columns of O a lane owns (D_v / 32)
constexpr unsigned kFullWarp = 0xffffffffu;

// A window side beyond this is unbounded: |p(i) - j| < 2^32 for sequences below 2^31 rows.
// Clamping keeps p(i) +- window inside 64 bits.
constexpr std::int64_t kUnboundedWindow = std::int64_t(1) << 40;

// Query row i of a sequence sees key j (attention_arguments.hpp):
//   p(i) - left <= j <= p(i) + right,  p(i) = i + shift,  a negative side unbounded.
struct KeyWindow {
  std::int64_t shift;  // S_k - S_q (bottom-right) or 0 (top-left), of this sequence
  std::int64_t left, right;

  __device__ bool keeps(std::int64_t i, std::int64_t j) const {
    std::int64_t const p = i + shift;
    return (left < 0 || p - j <= left) && (right < 0 || j - p <= right);
  }
};

// Everything the reference kernel reads besides the arguments.
struct ReferenceParams {
  AttentionArguments a;
  int d, dv;
  float scale;
  std::int64_t left, right;  // the window, causal folded in, clamped to kUnboundedWindow
  float* o;                  // [rows_total, H, D_v]
  float* lse;                // [H, rows_total], or null
};

template <class T>
__device__ float load_element(void const* base, std::int64_t offset) {
  return kernel::to_float(static_cast<T const*>(base)[offset]);
}

// x rounded to T (nearest even), back in fp32.
template <class T>
__device__ float round_to(float x) {
  return kernel::to_float(kernel::from_float<T>(x));
}

__device__ float warp_max(float x) {
  for (int off = 16; off > 0; off /= 2) x = fmaxf(x, __shfl_xor_sync(kFullWarp, x, off));
  return x;
}
__device__ float warp_sum(float x) {
  for (int off = 16; off > 0; off /= 2) x += __shfl_xor_sync(kFullWarp, x, off);
  return x;
}

// The packed row of query i of sequence b: b * S_q + i, or cu_seqlens_q[b] + i.
struct SequenceRows {
  std::int64_t q_first, k_first;  // the packed row of the sequence's first query / key (varlen)
  std::int64_t len_q, len_k;
};

__device__ SequenceRows sequence_rows(AttentionArguments const& a, std::int64_t b) {
  if (a.cu_seqlens_q == nullptr) return {b * a.seqlen_q, 0, a.seqlen_q, a.seqlen_k};
  std::int64_t const q0 = a.cu_seqlens_q[b], k0 = a.cu_seqlens_k[b];
  return {q0, k0, a.cu_seqlens_q[b + 1] - q0, a.cu_seqlens_k[b + 1] - k0};
}

// Element offset of (sequence b, row r of it, head h) in an operand: its batch stride applies only
// without cu_seqlens, where the row is the sequence's own; with them, r is packed.
__device__ std::int64_t row_offset(bool varlen, std::int64_t b, std::int64_t r, std::int64_t h, std::int64_t bs,
                                   std::int64_t rs, std::int64_t hs) {
  return (varlen ? 0 : b * bs) + r * rs + h * hs;
}

// Rows [j0, j0 + 32) of K or V (sequence b, head g), `cols` wide, into s (row length ld) as fp32;
// zeros at rows past j_end. Thread `thread` of `threads` (the whole CTA) copies every threads-th element.
template <class T>
__device__ void load_key_rows(float* s, int ld, AttentionOperand const& x, int cols, bool varlen, std::int64_t b,
                              std::int64_t row0, std::int64_t j0, std::int64_t j_end, std::int64_t g, int thread,
                              int threads) {
  for (int idx = thread; idx < kTileKeys * cols; idx += threads) {
    int const r = idx / cols, c = idx % cols;
    std::int64_t const j = j0 + r;
    s[r * ld + c] =
        j < j_end ? load_element<T>(x.ptr, row_offset(varlen, b, row0 + j, g, x.batch_stride, x.row_stride, x.head_stride) + c)
                  : 0.0f;
  }
}

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
    KeyWindow const win{a.align == MaskAlign::top_left ? 0 : seq.len_k - seq.len_q, p.left, p.right};
    std::int64_t const q_row0 = varlen ? seq.q_first : 0, k_row0 = varlen ? seq.k_first : 0;

    // Keys some row of the tile may see (the mask is still evaluated for every element).
    std::int64_t const i_last = std::min(i0 + kTileRows, seq.len_q) - 1;
    std::int64_t j_begin = 0, j_end = seq.len_k;
    if (win.left >= 0) j_begin = std::max<std::int64_t>(0, i0 + win.shift - win.left);
    if (win.right >= 0) j_end = std::min(j_end, std::max<std::int64_t>(0, i_last + win.shift + win.right + 1));

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
      load_key_rows<T>(sK, ld, a.k, d, varlen, b, k_row0, j0, j_end, g, int(threadIdx.x), int(blockDim.x));
      if (with_v) load_key_rows<T>(sV, dv, a.v, dv, varlen, b, k_row0, j0, j_end, g, int(threadIdx.x), int(blockDim.x));
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

// Maxima as the bit patterns of non-negative doubles (they order like the values).
struct CheckStats {
  unsigned long long max_err;  // max |x - exact| over finite x where exact is finite
  unsigned long long max_low;  // max |low - exact| where exact is finite
  unsigned long long max_ref;  // max |exact| over finite exact
  unsigned long long nonfinite;  // NaN or infinite x where exact is finite
  unsigned long long first_bad;
};

__device__ void atomic_max_double(unsigned long long* p, double v) {
  atomicMax(p, static_cast<unsigned long long>(__double_as_longlong(v)));
}

template <class Reader>
__global__ void check_stats_kernel(Reader x, std::int64_t total, float const* exact, float const* low, CheckStats* out) {
  double err = 0.0, lo = 0.0, ref = 0.0;
  unsigned long long nonfinite = 0;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    float const e = exact[idx];
    if (!isfinite(e)) continue;
    float const v = x(idx), w = low[idx];
    ref = fmax(ref, fabs(double(e)));
    if (isfinite(w)) lo = fmax(lo, fabs(double(w) - e));
    if (isfinite(v))
      err = fmax(err, fabs(double(v) - e));
    else
      ++nonfinite;
  }
  for (int off = 16; off > 0; off /= 2) {
    err = fmax(err, __shfl_down_sync(kFullWarp, err, off));
    lo = fmax(lo, __shfl_down_sync(kFullWarp, lo, off));
    ref = fmax(ref, __shfl_down_sync(kFullWarp, ref, off));
    nonfinite += __shfl_down_sync(kFullWarp, nonfinite, off);
  }
  if (threadIdx.x % 32 == 0) {
    atomic_max_double(&out->max_err, err);
    atomic_max_double(&out->max_low, lo);
    atomic_max_double(&out->max_ref, ref);
    if (nonfinite) atomicAdd(&out->nonfinite, nonfinite);
  }
}

// Bad: where exact is -inf (a row that sees no key), anything but -inf; where exact is finite, a
// NaN, an infinity, or |x - exact| > bound.
__device__ bool is_bad(float v, float e, double bound) {
  if (isinf(e) && e < 0) return !(isinf(v) && v < 0);
  if (!isfinite(e)) return true;
  return !(fabs(double(v) - e) <= bound);
}

template <class Reader>
__global__ void check_first_bad_kernel(Reader x, std::int64_t total, float const* exact, double bound, CheckStats* out) {
  unsigned long long first = ~0ull;
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += std::int64_t(gridDim.x) * blockDim.x)
    if (is_bad(x(idx), exact[idx], bound)) {
      first = static_cast<unsigned long long>(idx);
      break;  // a thread's indices increase
    }
  for (int off = 16; off > 0; off /= 2) first = min(first, __shfl_down_sync(kFullWarp, first, off));
  if (threadIdx.x % 32 == 0 && first != ~0ull) atomicMin(&out->first_bad, first);
}

unsigned grid_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + threads - 1) / threads, 1, 65535LL * 32));
}

// One unit in the last place of T at magnitude 1: 2^-7 (bf16, 8 significant bits), 2^-10 (fp16).
double ulp_at_one(DType t) { return t == DType::bf16 ? 0x1p-7 : 0x1p-10; }

// The absolute part of the floor (the references' fp32 noise on outputs near 0).
constexpr double kFloorAbsolute = 1e-6;

struct Verdict {
  double max_err = 0, max_low = 0, floor = 0, bound = 0;
  bool nonfinite = false;  // a NaN or infinity where the exact reference is finite
  std::int64_t first_bad = -1;
};

// Both sweeps over one output: the maxima, the bound 2 * low + floor, the first element past it.
template <class Reader>
Status judge(Reader x, std::int64_t total, float const* exact, float const* low, DType t, CUstream_st* stream,
             Verdict* v) {
  CheckStats* dev = nullptr;
  if (Status s = cuda_status(cudaMalloc(&dev, sizeof(CheckStats)), "cudaMalloc (attention check)"); !s) return s;
  CheckStats h{0, 0, 0, 0, ~0ull};
  Status s = cuda_status(cudaMemcpyAsync(dev, &h, sizeof h, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (check)");
  if (s) {
    check_stats_kernel<<<grid_for(total, 256), 256, 0, stream>>>(x, total, exact, low, dev);
    s = cuda_status(cudaGetLastError(), "launch of the attention check");
  }
  if (s) s = cuda_status(cudaMemcpyAsync(&h, dev, sizeof h, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (check)");
  if (s) s = cuda_status(cudaStreamSynchronize(stream), "the attention check");
  if (s) {
    v->max_err = __builtin_bit_cast(double, h.max_err);
    v->max_low = __builtin_bit_cast(double, h.max_low);
    v->floor = ulp_at_one(t) * __builtin_bit_cast(double, h.max_ref) + kFloorAbsolute;
    v->bound = 2.0 * v->max_low + v->floor;
    v->nonfinite = h.nonfinite > 0;
    check_first_bad_kernel<<<grid_for(total, 256), 256, 0, stream>>>(x, total, exact, v->bound, dev);
    s = cuda_status(cudaGetLastError(), "launch of the attention check");
  }
  if (s) s = cuda_status(cudaMemcpyAsync(&h, dev, sizeof h, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (check)");
  if (s) s = cuda_status(cudaStreamSynchronize(stream), "the attention check");
  cudaFree(dev);
  if (s && h.first_bad != ~0ull) v->first_bad = static_cast<std::int64_t>(h.first_bad);
  return s;
}

// out->what, printf-style, cut to its length.
__attribute__((format(printf, 2, 3))) void set_what(AttentionCheck* out, char const* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(out->what, sizeof out->what, fmt, args);
  va_end(args);
}

template <class T>
Status copy_element(float* out, void const* base, std::int64_t offset) {
  T raw;
  if (Status s = cuda_status(cudaMemcpy(&raw, static_cast<T const*>(base) + offset, sizeof raw, cudaMemcpyDeviceToHost),
                             "cudaMemcpy (first bad element)");
      !s)
    return s;
  *out = kernel::to_float(raw);
  return Status::success();
}

}  // namespace

Status attention_device(AttentionArguments const& a, AttentionPrecision precision, float* o, float* lse,
                        CUstream_st* stream) {
  if (Status s = attention_validate(a); !s) return s;
  if (attention_is_noop(a)) return Status::success();
  if (o == nullptr) return Status::error(StatusCode::invalid_argument, "o: null; the reference writes O");
  auto clamp_window = [](std::int64_t w) { return w < 0 ? std::int64_t(-1) : std::min(w, kUnboundedWindow); };
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
