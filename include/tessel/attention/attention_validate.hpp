// tessel/attention/attention_validate.hpp -- the argument rules of the attention-forward host API.
//
// FlashAttention's rules, with reasons. Accepted: any B, S_q, S_k, H, H_kv >= 0 with H a multiple
// of H_kv (GQA, MQA); any window (a negative side is unbounded); any finite softmax scale;
// B, H or S_q = 0 is a no-op that touches no memory; S_k = 0 writes O = 0 and LSE = -inf without
// reading Q, K or V. Rejected, each with a reason that starts with the argument's name and states
// the rule:
//   invalid_argument
//     a negative size; H_kv = 0 with H > 0, or H not a multiple of H_kv; a dtype other than bf16
//     or fp16; head dims (D, D_v) outside (64, 64), (96, 96), (128, 128), (192, 192), (256, 256),
//     (192, 128); a negative stride; a Q, K, V or O stride that is not a multiple of 8 elements
//     or a pointer that is not 16-byte aligned (every row must be 16-byte aligned); an LSE pointer
//     that is not 4-byte aligned; a null Q, K or V when they are read (B, H, S_q, S_k > 0) or a
//     null O when it is written (B, H, S_q > 0); a NaN or infinite softmax_scale; a softcap that
//     is negative or not finite; causal with window_right > 0 (causal means window_right = 0);
//     an align that is neither enumerator; cu_seqlens_q without cu_seqlens_k or the reverse;
//     an element offset (or its byte offset) that overflows 64 bits.
//   not_supported
//     seqlen_q or seqlen_k above 2^31 - 1 (the kernels index rows with 32-bit integers).
// With cu_seqlens (variable length) the batch strides of Q, K, V, O and LSE are ignored, so they
// are not checked; B then counts sequences and the packed row dimension spans up to B * S rows.
// Plain C++ and no CUDA calls, so a bad call is refused on any machine, GPU or not.
#pragma once

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessel {

// Head dims (D, D_v) the attention kernels are built for.
struct AttentionHeadDims {
  int d, d_v;
};
inline constexpr AttentionHeadDims kAttentionHeadDims[] = {{64, 64},   {96, 96},   {128, 128},
                                                           {192, 192}, {256, 256}, {192, 128}};

constexpr bool attention_head_dims_supported(int d, int d_v) {
  for (AttentionHeadDims const& h : kAttentionHeadDims)
    if (h.d == d && h.d_v == d_v) return true;
  return false;
}

// True when the call has nothing to write (B, H or S_q is 0).
constexpr bool attention_is_noop(AttentionArguments const& a) {
  return a.batch == 0 || a.heads == 0 || a.seqlen_q == 0;
}

// True when Q, K and V are read: something is written and there are keys (S_k > 0).
constexpr bool attention_reads_qkv(AttentionArguments const& a) { return !attention_is_noop(a) && a.seqlen_k > 0; }

// The scale applied to Q K^T: softmax_scale, or 1 / sqrt(head_dim) when it is 0.
inline float attention_softmax_scale(AttentionArguments const& a) {
  return a.softmax_scale == 0.0f ? 1.0f / std::sqrt(float(a.head_dim)) : a.softmax_scale;
}

namespace detail {

inline std::string attention_num(std::int64_t v) { return std::to_string(v); }
inline std::string attention_num(int v) { return std::to_string(v); }
inline std::string attention_num(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

inline Status attention_invalid(std::string why) { return Status::error(StatusCode::invalid_argument, std::move(why)); }

// The rows of one operand as the strides see them: `rows` of a sequence (B * S when
// variable-length, the batch dimension folded into the packed rows), `batches` of them.
struct AttentionExtent {
  std::int64_t batches, rows, heads, cols;
};

// Largest element offset of a [batches, rows, heads, cols] operand with the given strides (the
// last dimension contiguous), or -1 on 64-bit overflow; 0 when it is empty.
inline std::int64_t attention_last_offset(AttentionExtent e, std::int64_t batch_stride, std::int64_t row_stride,
                                          std::int64_t head_stride) {
  if (e.batches == 0 || e.rows == 0 || e.heads == 0 || e.cols == 0) return 0;
  std::int64_t x = 0, y = 0, z = 0, r = 0;
  if (__builtin_mul_overflow(e.batches - 1, batch_stride, &x)) return -1;
  if (__builtin_mul_overflow(e.rows - 1, row_stride, &y)) return -1;
  if (__builtin_mul_overflow(e.heads - 1, head_stride, &z)) return -1;
  if (__builtin_add_overflow(x, y, &r) || __builtin_add_overflow(r, z, &r)) return -1;
  if (__builtin_add_overflow(r, e.cols - 1, &r)) return -1;
  return r;
}

// The stride and alignment rules of one of Q, K, V, O.
inline Status attention_check_operand(char const* name, char const* what, void const* ptr, AttentionExtent e,
                                      std::int64_t batch_stride, std::int64_t row_stride, std::int64_t head_stride,
                                      bool varlen, std::size_t elem_bytes) {
  struct Stride {
    char const* field;
    std::int64_t v;
  };
  Stride const strides[] = {{"batch_stride", batch_stride}, {"row_stride", row_stride}, {"head_stride", head_stride}};
  std::int64_t const align_elems = 16 / std::int64_t(elem_bytes);  // 8 for bf16 and fp16
  for (Stride const& s : strides) {
    if (varlen && &s == &strides[0]) continue;  // batch strides are ignored with cu_seqlens
    std::string const arg = std::string(name) + s.field;
    if (s.v < 0) return attention_invalid(arg + ": " + attention_num(s.v) + " is negative; strides must be >= 0");
    if (s.v % align_elems != 0)
      return attention_invalid(arg + ": " + attention_num(s.v) + " is not a multiple of " + attention_num(align_elems) +
                               " elements (16 bytes); rows of " + what + " must be 16-byte aligned");
  }
  std::string const base(name, std::string(name).size() - 1);  // "q." -> "q"; "o_" -> "o"
  if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
    return attention_invalid(base + ": the pointer is not 16-byte aligned; rows of " + what + " must be 16-byte aligned");
  std::int64_t const last = attention_last_offset(e, varlen ? 0 : batch_stride, row_stride, head_stride);
  std::int64_t bytes = 0;
  if (last < 0 || __builtin_mul_overflow(last, std::int64_t(elem_bytes), &bytes))
    return attention_invalid(base + ": the offset of the last element of " + what + " overflows 64 bits");
  return Status::success();
}

}  // namespace detail

namespace detail {

// Every rule of attention_validate but the null pointers (which the backward states its own way:
// it reads O instead of writing it).
inline Status attention_validate_shapes(AttentionArguments const& a) {
  using detail::attention_invalid;
  using detail::attention_num;
  struct Size {
    char const* name;
    std::int64_t v;
  };
  for (Size s : {Size{"batch", a.batch}, Size{"seqlen_q", a.seqlen_q}, Size{"seqlen_k", a.seqlen_k},
                 Size{"heads", a.heads}, Size{"kv_heads", a.kv_heads}})
    if (s.v < 0) return attention_invalid(std::string(s.name) + ": " + attention_num(s.v) + " is negative; sizes must be >= 0");
  constexpr std::int64_t kMaxSeqlen = 0x7fffffffLL;
  for (Size s : {Size{"seqlen_q", a.seqlen_q}, Size{"seqlen_k", a.seqlen_k}})
    if (s.v > kMaxSeqlen)
      return Status::error(StatusCode::not_supported, std::string(s.name) + ": " + attention_num(s.v) +
                                                          " is above 2^31 - 1, the longest sequence the kernels index");
  if (a.heads > 0 && a.kv_heads == 0)
    return attention_invalid("kv_heads: 0 with heads " + attention_num(a.heads) +
                             "; every query head needs a key/value head (H a multiple of H_kv >= 1)");
  if (a.kv_heads > 0 && a.heads % a.kv_heads != 0)
    return attention_invalid("heads: " + attention_num(a.heads) + " is not a multiple of kv_heads " +
                             attention_num(a.kv_heads) + "; query head h reads key/value head h / (H / H_kv)");

  if (a.dtype != DType::bf16 && a.dtype != DType::f16)
    return attention_invalid(std::string("dtype: ") + to_string(a.dtype) +
                             " is not supported; Q, K, V and O are bf16 or fp16");
  int const dv = attention_head_dim_v(a);
  if (!attention_head_dims_supported(a.head_dim, dv)) {
    bool d_known = false;
    for (AttentionHeadDims const& h : kAttentionHeadDims) d_known = d_known || h.d == a.head_dim;
    std::string const list =
        "; head dims (D, D_v) are (64,64), (96,96), (128,128), (192,192), (256,256) and (192,128)";
    if (!d_known) return attention_invalid("head_dim: " + attention_num(a.head_dim) + " is not supported" + list);
    return attention_invalid("head_dim_v: " + attention_num(dv) + " with head_dim " + attention_num(a.head_dim) +
                             " is not supported" + list);
  }

  if ((a.cu_seqlens_q == nullptr) != (a.cu_seqlens_k == nullptr))
    return attention_invalid(a.cu_seqlens_q ? "cu_seqlens_k: null while cu_seqlens_q is set; pass both or neither"
                                            : "cu_seqlens_q: null while cu_seqlens_k is set; pass both or neither");
  bool const varlen = attention_is_varlen(a);

  // With cu_seqlens, the batch folds into the packed row dimension (at most B * S rows).
  auto extent = [&](std::int64_t seqlen, std::int64_t heads, std::int64_t cols) {
    std::int64_t rows = seqlen;
    if (varlen && __builtin_mul_overflow(a.batch, seqlen, &rows)) rows = -1;
    return detail::AttentionExtent{varlen ? 1 : a.batch, rows, heads, cols};
  };
  std::size_t const eb = size_of(a.dtype);
  struct Operand {
    char const* name;  // the prefix of its stride fields
    char const* what;
    void const* ptr;
    detail::AttentionExtent e;
    std::int64_t bs, rs, hs;
  };
  Operand const ops[] = {
      {"q.", "Q", a.q.ptr, extent(a.seqlen_q, a.heads, a.head_dim), a.q.batch_stride, a.q.row_stride, a.q.head_stride},
      {"k.", "K", a.k.ptr, extent(a.seqlen_k, a.kv_heads, a.head_dim), a.k.batch_stride, a.k.row_stride, a.k.head_stride},
      {"v.", "V", a.v.ptr, extent(a.seqlen_k, a.kv_heads, dv), a.v.batch_stride, a.v.row_stride, a.v.head_stride},
      {"o_", "O", a.o, extent(a.seqlen_q, a.heads, dv), a.o_batch_stride, a.o_row_stride, a.o_head_stride},
  };
  for (Operand const& op : ops) {
    if (op.e.rows < 0)
      return attention_invalid(std::string(op.name, 1) + ": the offset of the last element of " + op.what +
                               " overflows 64 bits");
    if (Status s = detail::attention_check_operand(op.name, op.what, op.ptr, op.e, op.bs, op.rs, op.hs, varlen, eb); !s)
      return s;
  }

  if (!varlen && a.lse_batch_stride < 0)
    return attention_invalid("lse_batch_stride: " + attention_num(a.lse_batch_stride) + " is negative; strides must be >= 0");
  if (a.lse_head_stride < 0)
    return attention_invalid("lse_head_stride: " + attention_num(a.lse_head_stride) + " is negative; strides must be >= 0");
  if (a.lse != nullptr) {
    if (reinterpret_cast<std::uintptr_t>(a.lse) % 4 != 0)
      return attention_invalid("lse: the pointer is not 4-byte aligned (LSE is fp32)");
    // LSE is [B, H, S_q] with contiguous rows, or [H, total_q] when variable-length.
    // As an operand: heads of (1 x rows) with the rows contiguous.
    detail::AttentionExtent const e = extent(a.seqlen_q, a.heads, 1);
    std::int64_t const last =
        e.rows < 0 ? -1
                   : detail::attention_last_offset({e.batches, e.heads, 1, e.rows}, varlen ? 0 : a.lse_batch_stride,
                                                   a.lse_head_stride, 0);
    std::int64_t bytes = 0;
    if (last < 0 || __builtin_mul_overflow(last, std::int64_t(4), &bytes))
      return attention_invalid("lse: the offset of the last element of LSE overflows 64 bits");
  }

  if (std::isnan(a.softmax_scale) || std::isinf(a.softmax_scale))
    return attention_invalid("softmax_scale: " + attention_num(a.softmax_scale) +
                             " is not finite; pass a finite scale, or 0 for 1 / sqrt(head_dim)");
  if (!(a.softcap >= 0.0f) || std::isinf(a.softcap))
    return attention_invalid("softcap: " + attention_num(a.softcap) +
                             " is not a finite value >= 0; pass 0 for none or the cap (e.g. 30)");
  if (a.causal && a.window_right > 0)
    return attention_invalid("window_right: " + attention_num(a.window_right) +
                             " with causal contradicts it (causal is window_right = 0); drop one of them");
  if (a.align != MaskAlign::bottom_right && a.align != MaskAlign::top_left)
    return attention_invalid("align: " + attention_num(std::int64_t(a.align)) + " is neither bottom_right nor top_left");
  return Status::success();
}

}  // namespace detail

// Every argument rule of the attention-forward host API (see the file comment). No CUDA calls.
inline Status attention_validate(AttentionArguments const& a) {
  using detail::attention_invalid;
  if (Status s = detail::attention_validate_shapes(a); !s) return s;
  if (attention_reads_qkv(a)) {
    if (a.q.ptr == nullptr) return attention_invalid("q: null, but Q is read (B, H, S_q, S_k > 0)");
    if (a.k.ptr == nullptr) return attention_invalid("k: null, but K is read (B, H, S_q, S_k > 0)");
    if (a.v.ptr == nullptr) return attention_invalid("v: null, but V is read (B, H, S_q, S_k > 0)");
  }
  if (!attention_is_noop(a) && a.o == nullptr) return attention_invalid("o: null, but O is written (B, H, S_q > 0)");
  return Status::success();
}

}  // namespace tessel
