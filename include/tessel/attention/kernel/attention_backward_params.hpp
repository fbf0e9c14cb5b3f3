// tessel/attention/kernel/attention_backward_params.hpp -- what the host passes the
// attention-backward kernels (sm_80's, and sm_90a's beside its tensor maps): the forward's
// AttentionParams (Q, K, V, O, LSE, the mask and the score constants), the gradients' pointers
// and strides, and the workspace (attention_backward_validate.hpp has its layout). Host-compilable.
#pragma once

#include <tessel/attention/kernel/attention_params.hpp>
#include <tessel/config.hpp>

#include <cstdint>

namespace tessel::kernel {

struct AttentionBackwardParams {
  AttentionParams fwd;  // o and lse are read
  void const* d_o;
  std::int64_t do_batch_stride, do_row_stride, do_head_stride;
  void* dq;
  std::int64_t dq_batch_stride, dq_row_stride, dq_head_stride;
  void* dk;
  std::int64_t dk_batch_stride, dk_row_stride, dk_head_stride;
  void* dv;
  std::int64_t dv_batch_stride, dv_row_stride, dv_head_stride;
  float* lse_log2;   // [H, B, stat_seqlen]: LSE * log2(e), +inf where LSE = -inf or past S_q
  float* dsum;       // [H, B, stat_seqlen]: rowsum(dO * O), 0 past S_q (variable length: rows packed)
  float* dq_accum;   // [rows, H, D], or nullptr (deterministic: the dQ kernel writes dQ)
  std::int64_t rows; // B * S_q: the packed query rows of dq_accum
  std::int64_t stat_rows;    // B * stat_seqlen: lse_log2's and dsum's rows per head
  std::int64_t stat_seqlen;  // S_q rounded up to 64: a sequence's rows there (fixed lengths)
  int head_dim, head_dim_v;
  int kv_heads;
  int n_blocks;      // key tiles per (batch, KV head): ceil(S_k / BLK_N)
  // dt = dz/dt of the softmax input z by t = <q, k>: grad_scale, times 1 - tanh^2 under a softcap
  // (the signed softmax scale: a negative scale's negated scores fold back in here).
  float grad_scale;
};

// Where query row i of a sequence has its LSE * log2(e) and Dsum in the workspace: per head
// stat_rows rows, in them b * S_q' + i (S_q' = stat_seqlen) for fixed lengths, or q_row0 + i
// (q_row0 = cu_seqlens_q[b], the sequence's first packed row) for variable lengths.
TESSEL_HOST_DEVICE constexpr std::int64_t attention_bwd_stat_row(AttentionBackwardParams const& p, int batch, int head,
                                                                 std::int64_t q_row0, std::int64_t i) {
  return std::int64_t(head) * p.stat_rows + (p.fwd.cu_seqlens_q ? q_row0 + i : std::int64_t(batch) * p.stat_seqlen + i);
}

}  // namespace tessel::kernel
