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
  float* dq_accum;   // [rows, H, D], or nullptr (deterministic on sm_80: the dQ kernel writes dQ)
  // The deterministic sm_90a kernel's turns, one per (head, batch, query block of 64 rows), at
  // attention_bwd_stat_row(...) / 64: the dQ parts added to that block so far (a key block adds
  // two at D 128, one per half of the columns; one at D 64), in the order of
  // attention_bwd_dq_turns_before. Zeroed by the host; else nullptr.
  unsigned* dq_turns;
  // That order: true, rotated; false, key blocks last to first (attention_bwd_dq_rotates).
  bool dq_rotated;
  // The default-mode sm_90a kernel's CTA order: 0, the grid's (a (batch, KV head)'s key blocks
  // together); G > 0, groups of G (batch, KV head) pairs, each group's CTAs by key block first
  // (attention_bwd_block_of, attention_bwd_block_group).
  int block_group;
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

// The deterministic sm_90a kernel's order of the key blocks' dQ additions to a query block: the
// order they arrive in, so that a turn is seldom waited for. A key block's CTA walks its query
// blocks in ascending order, from the first of them or, rotated, from its own start.
//  - Key blocks last to first, for any mask: under a causal mask or a window, key block j + 1
//    reaches a query block a step or two before key block j (its range of query blocks starts
//    later). The CTAs launch last to first too, so a CTA waits only on CTAs launched before it.
//  - Rotated, for a mask that keeps every key (each key block visits all M query blocks) where
//    M >= N_k and the N_k key blocks of a head fit on the GPU at once: key block j starts at query
//    block r_j = floor(j M / N_k) and wraps around, so query block i meets the key blocks at
//    distinct steps (i - r_j) mod M; it takes them in that order. (Without the rotation, every key
//    block would reach query block 0 at step 0, and the additions to it would wait on one another
//    one after the other.) A key block waits only on steps before its own, of CTAs that are resident
//    together: no wait can close a cycle.
//   e.g. M = 4 query blocks, N_k = 2 key blocks: r = {0, 2}; query block 1 takes key block 0 (step
//        1), then key block 1 (step 3); query block 3 takes key block 1 (step 1), then key block 0.
TESSEL_HOST_DEVICE constexpr int attention_bwd_dq_rotation(int j, int m, int nk) {
  return int(std::int64_t(j) * m / nk);
}

// Whether the rotated order applies: every key kept (no window side), m >= nk query blocks, and
// the nk key blocks' CTAs (one an SM) resident at once on `sms` SMs.
TESSEL_HOST_DEVICE constexpr bool attention_bwd_dq_rotates(AttentionParams const& fwd, std::int64_t m, std::int64_t nk, int sms) {
  return fwd.window_left < 0 && fwd.window_right < 0 && m >= nk && nk <= sms;
}

// How many key blocks add to query block i before key block j (seen_end: one past the last key
// block that sees query block i; rotated: m query blocks, nk key blocks, m >= nk). Rotated, those
// whose start r lies in (r_j, i] cyclically: ceil((i + 1) nk / m) key blocks start at or before
// query block i, j + 1 of them at or before r_j.
TESSEL_HOST_DEVICE constexpr int attention_bwd_dq_turns_before(bool rotated, int j, int i, int m, int nk, int seen_end) {
  if (!rotated) return seen_end - 1 - j;
  std::int64_t const upto = (std::int64_t(i) + 1) * nk, started = (upto + m - 1) / m;  // key blocks starting at or before i
  return int(started < nk ? started : nk) - (j + 1) + (i < attention_bwd_dq_rotation(j, m, nk) ? nk : 0);
}

// The lanes of a warp that share a query row in the preprocess (Dsum = <dO, O>): the least power of
// two that covers D_v in 16-byte pieces of 16-bit elements, at most 32.
//   e.g. D_v 64: 8 lanes, four rows a warp; 96 and 128: 16; 192 and 256: 32.
TESSEL_HOST_DEVICE constexpr int attention_bwd_preprocess_lanes(int head_dim_v) {
  int lanes = 1;
  while (lanes < 32 && 8 * lanes < head_dim_v) lanes *= 2;
  return lanes;
}

// The default mode's CTA order where the key blocks' work differs (attention_bwd_block_group):
// CTA `linear` (blockIdx.x fastest) of a grid of n_blocks key blocks by `pairs` (batch, KV head)
// pairs runs key block n_block of pair `pair`. The pairs go in groups of `group`; a group's CTAs
// take its key blocks in order, all of the group's pairs for each (the last group may hold fewer
// pairs). Under a causal mask key block j sees fewer query blocks than key block j - 1, so a
// group starts with its longest CTAs and ends with its shortest, and the grid's last wave is the
// shortest work instead of a mix that leaves SMs idle behind a long CTA; the group keeps the
// CTAs resident together on as few heads as the grid's order did (their Q and dO shared in L2).
//   e.g. n_blocks 3, pairs 3, group 2: CTAs 0-5 run (0, 0) (0, 1) (1, 0) (1, 1) (2, 0) (2, 1),
//        CTAs 6-8 run (0, 2) (1, 2) (2, 2) as (key block, pair).
struct AttentionBwdBlock {
  int n_block, pair;
};
TESSEL_HOST_DEVICE constexpr AttentionBwdBlock attention_bwd_block_of(int linear, int n_blocks, int pairs, int group) {
  int const per_group = group * n_blocks;
  int const g = linear / per_group, r = linear - g * per_group;
  int const in_group = pairs - g * group < group ? pairs - g * group : group;
  return {r / in_group, g * group + r % in_group};
}

// The group size of attention_bwd_block_of for the default mode, or 0 for the grid's order: 4
// pairs under a causal mask without a left window side (the key blocks' work falls with j) where
// the grid is at most 16 waves of CTAs (`ctas` of them, one an SM, on `sms` SMs). The longest CTA
// does twice a causal grid's mean, so it is 2 / waves of an SM's even share: at 7.8 waves (B4
// H32/8 S4096 D 128, each CTA four query heads) the grouped order measured 6-8% faster on an
// H200, at 31 waves (B4 H32 S4096, B1 H32 S16384, B16 H16 S1024) even to 1.5% slower (its
// co-resident CTAs span four heads' Q and dO in L2 instead of one).
TESSEL_HOST_DEVICE constexpr int attention_bwd_block_group(AttentionParams const& fwd, std::int64_t ctas, int sms) {
  return fwd.window_left < 0 && fwd.window_right >= 0 && ctas <= 16 * std::int64_t(sms) ? 4 : 0;
}

}  // namespace tessel::kernel
