// tessel/attention/kernel/attention_params.hpp -- what the host passes an attention kernel (sm_80
// and, beside its tensor maps, sm_90a): AttentionArguments reduced to pointers, strides and the
// constants the inner loop uses. Host-compilable.
#pragma once

#include <cstdint>

namespace tessel::kernel {

struct AttentionParams {
  void const* q;
  void const* k;
  void const* v;
  void* o;
  float* lse;  // nullptr: no LSE
  std::int64_t q_batch_stride, q_row_stride, q_head_stride;
  std::int64_t k_batch_stride, k_row_stride, k_head_stride;
  std::int64_t v_batch_stride, v_row_stride, v_head_stride;
  std::int64_t o_batch_stride, o_row_stride, o_head_stride;
  std::int64_t lse_batch_stride, lse_head_stride;
  std::int32_t const* cu_seqlens_q;  // both nullptr unless variable-length
  std::int32_t const* cu_seqlens_k;
  int seqlen_q, seqlen_k;  // fixed lengths (the maxima when variable-length)
  int heads;
  int kv_group;  // H / H_kv: query heads per key/value head
  int m_blocks;  // query tiles per (batch, head): ceil(seqlen_q / BLK_M)
  bool bottom_right;
  std::int64_t window_left, window_right;  // causal folded in; negative: unbounded
  // Scores: s = <q, k>; with a softcap, s = softcap * tanh(s * softcap_scale) (softcap_scale =
  // scale / softcap) and the softmax runs on s unscaled. exp(scale' * (s - max)) is computed as
  // exp2(s * score_log2 - max * score_log2), score_log2 = scale' * log2(e) > 0; LSE = max * scale' + log(sum).
  float softcap;        // 0: none
  bool negate_scores;   // no softcap and a negative scale: s -> -s, scale' = |scale|
  float softcap_scale;
  float score_log2;
  float lse_scale;      // scale'
  bool longest_first;   // walk query tiles from the last (masks that give later rows more keys)
};

}  // namespace tessel::kernel
