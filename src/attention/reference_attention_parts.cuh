// src/attention/reference_attention_parts.cuh -- what the attention references share
// (reference_attention.cu: the forward's; reference_attention_backward.cu: the gradients'): the
// mask as the definition states it, the sequences of a (variable-length) batch, element loads and
// roundings, warp reductions, and the judge that applies FlashAttention-3's rule to one output on
// the GPU. Internal to tessel::kernels; nothing here is a library kernel.
#pragma once

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/core/status.hpp>
#include <tessel/gemm/kernel/element_io.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tessel::reference::detail {

inline Status cuda_status(cudaError_t err, char const* what) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

inline constexpr unsigned kFullWarp = 0xffffffffu;

// A window side beyond this is unbounded: |p(i) - j| < 2^32 for sequences below 2^31 rows.
// Clamping keeps p(i) +- window inside 64 bits.
inline constexpr std::int64_t kUnboundedWindow = std::int64_t(1) << 40;

// A window side as the references take it: negative (unbounded), else at most kUnboundedWindow.
inline std::int64_t clamp_window(std::int64_t w) { return w < 0 ? std::int64_t(-1) : std::min(w, kUnboundedWindow); }

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

// Rows [begin, end) of one sequence: the keys some query row of a tile may see, or the query rows
// that may see some key of a tile (the mask is still evaluated for every pair inside).
struct RowRange {
  std::int64_t begin, end;
};

// Keys that query rows i0..i_last may see: p(i) - left <= j <= p(i) + right, inside [0, len_k).
__device__ inline RowRange keys_seen(KeyWindow const& w, std::int64_t i0, std::int64_t i_last, std::int64_t len_k) {
  RowRange r{0, len_k};
  if (w.left >= 0) r.begin = std::max<std::int64_t>(0, i0 + w.shift - w.left);
  if (w.right >= 0) r.end = std::min(len_k, std::max<std::int64_t>(0, i_last + w.shift + w.right + 1));
  return r;
}

// Query rows that may see keys j0..j_last, inside [0, len_q).
__device__ inline RowRange rows_seeing(KeyWindow const& w, std::int64_t j0, std::int64_t j_last, std::int64_t len_q) {
  RowRange r{0, len_q};
  if (w.right >= 0) r.begin = std::max<std::int64_t>(0, j0 - w.right - w.shift);
  if (w.left >= 0) r.end = std::min(len_q, std::max<std::int64_t>(0, j_last + w.left - w.shift + 1));
  return r;
}

template <class T>
__device__ float load_element(void const* base, std::int64_t offset) {
  return kernel::to_float(static_cast<T const*>(base)[offset]);
}

// x rounded to T (nearest even), back in fp32.
template <class T>
__device__ float round_to(float x) {
  return kernel::to_float(kernel::from_float<T>(x));
}

// The warp's max and sum of x (float or double), in every lane.
template <class A>
__device__ A warp_max(A x) {
  for (int off = 16; off > 0; off /= 2) {
    A const y = __shfl_xor_sync(kFullWarp, x, off);
    if constexpr (std::is_same_v<A, float>)
      x = fmaxf(x, y);
    else
      x = fmax(x, y);
  }
  return x;
}
template <class A>
__device__ A warp_sum(A x) {
  for (int off = 16; off > 0; off /= 2) x += __shfl_xor_sync(kFullWarp, x, off);
  return x;
}

// The packed rows of sequence b: its first query is packed row q_first (b * S_q, or
// cu_seqlens_q[b]); k_first is cu_seqlens_k[b] when variable-length and 0 otherwise (a dense
// operand's rows are the sequence's own, after its batch stride).
struct SequenceRows {
  std::int64_t q_first, k_first;
  std::int64_t len_q, len_k;
};

__device__ inline SequenceRows sequence_rows(AttentionArguments const& a, std::int64_t b) {
  if (a.cu_seqlens_q == nullptr) return {b * a.seqlen_q, 0, a.seqlen_q, a.seqlen_k};
  std::int64_t const q0 = a.cu_seqlens_q[b], k0 = a.cu_seqlens_k[b];
  return {q0, k0, a.cu_seqlens_q[b + 1] - q0, a.cu_seqlens_k[b + 1] - k0};
}

// Sequence seq's window: its shift (S_k - S_q of the sequence, or 0 top-left) and the sides.
__device__ inline KeyWindow key_window(AttentionArguments const& a, SequenceRows const& seq, std::int64_t left,
                                       std::int64_t right) {
  return {a.align == MaskAlign::top_left ? 0 : seq.len_k - seq.len_q, left, right};
}

// Element offset of (sequence b, row r of it, head h) in an operand: its batch stride applies only
// without cu_seqlens, where the row is the sequence's own; with them, r is packed.
__device__ inline std::int64_t row_offset(bool varlen, std::int64_t b, std::int64_t r, std::int64_t h, std::int64_t bs,
                                          std::int64_t rs, std::int64_t hs) {
  return (varlen ? 0 : b * bs) + r * rs + h * hs;
}

// Rows [j0, j0 + rows) of an operand (sequence b, head g), `cols` wide, into s (row length ld) as
// fp32; zeros at rows past j_end. Thread `thread` of `threads` (the whole CTA) copies every
// threads-th element.
template <class T>
__device__ void load_rows(float* s, int ld, AttentionOperand const& x, int rows, int cols, bool varlen, std::int64_t b,
                          std::int64_t row0, std::int64_t j0, std::int64_t j_end, std::int64_t g, int thread,
                          int threads) {
  for (int idx = thread; idx < rows * cols; idx += threads) {
    int const r = idx / cols, c = idx % cols;
    std::int64_t const j = j0 + r;
    s[r * ld + c] =
        j < j_end ? load_element<T>(x.ptr, row_offset(varlen, b, row0 + j, g, x.batch_stride, x.row_stride, x.head_stride) + c)
                  : 0.0f;
  }
}

// ---- the judge --------------------------------------------------------------------------------------

// Maxima as the bit patterns of non-negative doubles (they order like the values).
struct CheckStats {
  unsigned long long max_err;  // max |x - exact| over finite x where exact is finite
  unsigned long long max_low;  // max |low - exact| where exact is finite
  unsigned long long max_ref;  // max |exact| over finite exact
  unsigned long long nonfinite;  // NaN or infinite x where exact is finite
  unsigned long long first_bad;
};

__device__ inline void atomic_max_double(unsigned long long* p, double v) {
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
__device__ inline bool is_bad(float v, float e, double bound) {
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

inline unsigned grid_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + threads - 1) / threads, 1, 65535LL * 32));
}

// One unit in the last place of T at magnitude 1: 2^-7 (bf16, 8 significant bits), 2^-10 (fp16).
inline double ulp_at_one(DType t) { return t == DType::bf16 ? 0x1p-7 : 0x1p-10; }

// The absolute part of the floor (the references' fp32 noise on outputs near 0).
inline constexpr double kFloorAbsolute = 1e-6;

struct Verdict {
  double max_err = 0, max_low = 0, floor = 0, bound = 0;
  bool nonfinite = false;  // a NaN or infinity where the exact reference is finite
  std::int64_t first_bad = -1;
};

// Both sweeps over one output of `total` elements (x(idx) reads the kernel's, exact and low the
// references', in the same order): the maxima, the bound 2 * low + floor, the first element past
// it. Synchronizes `stream`.
template <class Reader>
Status judge(Reader x, std::int64_t total, float const* exact, float const* low, DType t, cudaStream_t stream,
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

// Element `offset` of a device array of T, read to the host as fp32.
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

}  // namespace tessel::reference::detail
