// tessel/attention/attention_arguments.hpp -- the problem an attention-forward call describes.
//
//   for each batch b, head h, query row i of sequence b:
//     s_j   = scale * <Q[b,i,h,:], K[b,j,g,:]>              g = h / (H / H_kv)  (GQA / MQA)
//     s_j   = softcap * tanh(s_j / softcap)                 when softcap > 0
//     s_j   = -inf                                          for keys j the mask removes
//     O[b,i,h,:] = sum_j softmax(s)_j * V[b,j,g,:]          (0 when every key is masked)
//     LSE[b,h,i] = log(sum_j exp(s_j))                      (-inf when every key is masked)
//
// Shapes (FlashAttention's): Q [B, S_q, H, D], K [B, S_k, H_kv, D], V [B, S_k, H_kv, D_v],
// O [B, S_q, H, D_v], LSE [B, H, S_q] fp32. Each of Q, K, V and O has its own batch, row
// (sequence) and head strides, in elements; the last dimension is contiguous (stride 1) and
// its rows 16-byte aligned. LSE has batch and head strides; its rows (i) are contiguous.
//
// The mask. Query row i and key j of one sequence are aligned at the bottom-right corner, as
// FlashAttention does when S_q != S_k: query i sits at key position  p(i) = i + S_k - S_q
// (the last query sees the last key). `align = top_left` puts it at p(i) = i instead, which is
// torch's `is_causal`. Key j is kept when
//     p(i) - window_left <= j <= p(i) + window_right
// with a negative window side meaning unbounded; `causal` is window_right = 0 (and keeps any
// window_left). With neither, every key is kept.
//
// Variable-length batches. With cu_seqlens_q and cu_seqlens_k (device arrays of B + 1 int32,
// non-decreasing, starting at 0), sequence b's queries are rows [cu_q[b], cu_q[b+1]) of a packed
// Q [total_q, H, D] (batch strides ignored), its keys rows [cu_k[b], cu_k[b+1]) of K and V; O is
// packed like Q and LSE is [H, total_q] (lse_head_stride between heads, lse_batch_stride ignored).
// seqlen_q / seqlen_k are then the maximum lengths (FlashAttention's max_seqlen_q/k): every
// sequence's length must be at most them (the kernel does not check device memory).
//
// dtypes: Q, K, V and O share one dtype, bf16 or fp16. Head dims (D, D_v): (64, 64), (96, 96),
// (128, 128), (192, 192), (256, 256) and (192, 128). Accumulation and softmax are fp32.
// Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/core/dtype.hpp>

#include <cstdint>

namespace tessel {

enum class MaskAlign { bottom_right, top_left };

constexpr char const* to_string(MaskAlign a) { return a == MaskAlign::bottom_right ? "bottom-right" : "top-left"; }

// One operand [B, S, H, D] with its strides in elements (the last dimension contiguous).
struct AttentionOperand {
  void const* ptr = nullptr;
  std::int64_t batch_stride = 0, row_stride = 0, head_stride = 0;
};

struct AttentionArguments {
  std::int64_t batch = 1;                   // B (the number of sequences when variable-length)
  std::int64_t seqlen_q = 0, seqlen_k = 0;  // S_q, S_k (the maxima when variable-length)
  std::int64_t heads = 1, kv_heads = 1;     // H, H_kv; H a multiple of H_kv
  int head_dim = 128;                       // D of Q and K
  int head_dim_v = 0;                       // D_v of V and O (0: head_dim)
  DType dtype = DType::bf16;                // of Q, K, V and O

  AttentionOperand q, k, v;
  void* o = nullptr;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  float* lse = nullptr;                     // optional: nullptr writes no LSE
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0;

  float softmax_scale = 0.0f;               // 0: 1 / sqrt(head_dim)
  bool causal = false;
  std::int64_t window_left = -1, window_right = -1;  // negative: unbounded on that side
  MaskAlign align = MaskAlign::bottom_right;
  float softcap = 0.0f;                     // 0: none; > 0: softcap * tanh(s / softcap)

  std::int32_t const* cu_seqlens_q = nullptr;  // device, B + 1 entries; both or neither
  std::int32_t const* cu_seqlens_k = nullptr;

  // A registry name (`tessel list`), or nullptr / "auto" for the library's choice.
  char const* kernel = nullptr;
};

// D_v as the call means it.
constexpr int attention_head_dim_v(AttentionArguments const& a) { return a.head_dim_v == 0 ? a.head_dim : a.head_dim_v; }

constexpr bool attention_is_varlen(AttentionArguments const& a) { return a.cu_seqlens_q != nullptr; }

// The window the mask applies, causal folded in: right side 0 when causal (negative: unbounded).
constexpr std::int64_t attention_window_right(AttentionArguments const& a) {
  return a.causal ? 0 : a.window_right;
}
constexpr std::int64_t attention_window_left(AttentionArguments const& a) { return a.window_left; }

// A packed problem: Q, K, V and O as contiguous [B, S, H, D] tensors, LSE as [B, H, S_q].
// Pointers unset.
inline AttentionArguments make_packed_attention(std::int64_t batch, std::int64_t seqlen_q, std::int64_t seqlen_k,
                                                std::int64_t heads, std::int64_t kv_heads, int head_dim,
                                                int head_dim_v = 0, DType dtype = DType::bf16) {
  AttentionArguments a;
  a.batch = batch, a.seqlen_q = seqlen_q, a.seqlen_k = seqlen_k;
  a.heads = heads, a.kv_heads = kv_heads;
  a.head_dim = head_dim, a.head_dim_v = head_dim_v == 0 ? head_dim : head_dim_v;
  a.dtype = dtype;
  std::int64_t const dv = a.head_dim_v;
  a.q = {nullptr, seqlen_q * heads * head_dim, heads * head_dim, head_dim};
  a.k = {nullptr, seqlen_k * kv_heads * head_dim, kv_heads * head_dim, head_dim};
  a.v = {nullptr, seqlen_k * kv_heads * dv, kv_heads * dv, dv};
  a.o_batch_stride = seqlen_q * heads * dv, a.o_row_stride = heads * dv, a.o_head_stride = dv;
  a.lse_batch_stride = heads * seqlen_q, a.lse_head_stride = seqlen_q;
  return a;
}

}  // namespace tessel
