// tessel/attention/attention_backward_validate.hpp -- the argument rules of the attention-backward
// host API, and the workspace it needs.
//
// The forward's rules apply to `problem` (attention_validate.hpp: sizes, dtype, head dims,
// strides and alignment of Q, K, V, O and LSE, the mask, softcap, scale, cu_seqlens), and the
// same stride and alignment rules to dO ("d_o"), dQ, dK and dV. Nothing to do: B = 0 or H = 0.
// S_q = 0 writes dK = dV = 0; S_k = 0 writes dQ = 0; neither reads anything else. Rejected
// (invalid_argument), each reason starting with the argument's name:
//   a null Q, K, V, O, dO or LSE when they are read (B, H, S_q, S_k > 0); a null dQ when it is
//   written (B, H, S_q > 0), a null dK or dV when they are (B, H, S_k > 0); a workspace that is
//   not 256-byte aligned or smaller than attention_backward_workspace_bytes().
// Plain C++ and no CUDA calls.
#pragma once

#include <tessel/attention/attention_backward_arguments.hpp>
#include <tessel/attention/attention_validate.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel {

// B = 0 or H = 0: no gradient has an element.
constexpr bool attention_backward_is_noop(AttentionArguments const& a) { return a.batch == 0 || a.heads == 0; }

// Q, K, V, O, dO and LSE are read: some query row meets some key.
constexpr bool attention_backward_reads(AttentionArguments const& a) {
  return !attention_backward_is_noop(a) && a.seqlen_q > 0 && a.seqlen_k > 0;
}

inline constexpr std::size_t kAttentionWorkspaceAlign = 256;

// Each sequence's rows of LSE * log2(e) and Dsum start a multiple of this many rows apart, so that
// a query block's 64 values are one aligned bulk copy (the sm_90a kernel's); the rows past S_q hold
// +inf and 0 (P = 0 there).
inline constexpr std::int64_t kAttentionBackwardStatRowAlign = 64;

// The rows per sequence of the workspace's LSE * log2(e) and Dsum: S_q rounded up to 64.
constexpr std::int64_t attention_backward_stat_seqlen(AttentionArguments const& a) {
  return (a.seqlen_q + kAttentionBackwardStatRowAlign - 1) / kAttentionBackwardStatRowAlign * kAttentionBackwardStatRowAlign;
}

// The workspace's parts, each 256-byte aligned, for `rows` = B * S_q packed query rows (an upper
// bound on total_q when variable-length) and S_q' = attention_backward_stat_seqlen:
//   lse_log2  fp32 [H, B, S_q']  LSE * log2(e), +inf where LSE = -inf (P = 0 on those rows);
//                                variable length: [H, B * S_q'] with the sequences' rows packed
//   dsum      fp32 [H, B, S_q']  rowsum(dO * O), the same rows
//   dq_accum  fp32 [rows, H, D]  the dQ accumulator (deterministic: only where the sm_90a kernel
//                                may run the problem, attention_backward_ordered_dq)
//   dq_turns  u32 [H, B, S_q' / 64]  that kernel's turns, one per query block
struct AttentionBackwardWorkspace {
  std::size_t lse_log2 = 0, dsum = 0, dq_accum = 0, dq_turns = 0;  // byte offsets (dq_turns: 0 if none)
  std::size_t bytes = 0;                              // total; 0 when nothing is read
};

// The problems whose deterministic mode the sm_90a kernel may run (its dQ additions ordered by
// turns in the workspace): head dims (64, 64) and (128, 128), fixed lengths. Their deterministic
// workspace holds the fp32 dQ accumulator and the turns as well.
constexpr bool attention_backward_ordered_dq(AttentionArguments const& a) {
  return (a.head_dim == 64 || a.head_dim == 128) && attention_head_dim_v(a) == a.head_dim && !attention_is_varlen(a);
}

// Pre: attention_backward_validate's size rules hold (the products fit: the operands' offsets do).
constexpr AttentionBackwardWorkspace attention_backward_workspace_layout(AttentionArguments const& a, bool deterministic) {
  AttentionBackwardWorkspace w;
  if (!attention_backward_reads(a)) return w;
  auto const round_up = [](std::size_t x) { return (x + kAttentionWorkspaceAlign - 1) / kAttentionWorkspaceAlign * kAttentionWorkspaceAlign; };
  std::size_t const rows = std::size_t(a.batch) * std::size_t(a.seqlen_q);
  std::size_t const stat_rows = std::size_t(a.batch) * std::size_t(attention_backward_stat_seqlen(a));
  std::size_t const per_row = round_up(stat_rows * std::size_t(a.heads) * sizeof(float));
  w.lse_log2 = 0;
  w.dsum = per_row;
  w.dq_accum = 2 * per_row;
  std::size_t const dq = round_up(rows * std::size_t(a.heads) * std::size_t(a.head_dim) * sizeof(float));
  if (!deterministic) {
    w.bytes = w.dq_accum + dq;
  } else if (attention_backward_ordered_dq(a)) {  // the deterministic sm_90a kernel may run it
    w.dq_turns = w.dq_accum + dq;
    w.bytes = w.dq_turns + round_up(stat_rows / 64 * std::size_t(a.heads) * sizeof(unsigned));
  } else {
    w.bytes = w.dq_accum;
  }
  return w;
}

// Every argument rule of the attention-backward host API (see the file comment). No CUDA calls.
inline Status attention_backward_validate(AttentionBackwardArguments const& b) {
  using detail::attention_invalid;
  AttentionArguments const& a = b.problem;
  if (Status s = detail::attention_validate_shapes(a); !s) return s;
  bool const varlen = attention_is_varlen(a);
  int const dv = attention_head_dim_v(a);
  auto extent = [&](std::int64_t seqlen, std::int64_t heads, std::int64_t cols) {
    std::int64_t rows = seqlen;
    if (varlen && __builtin_mul_overflow(a.batch, seqlen, &rows)) rows = -1;
    return detail::AttentionExtent{varlen ? 1 : a.batch, rows, heads, cols};
  };
  struct Operand {
    char const* name;
    char const* what;
    void const* ptr;
    detail::AttentionExtent e;
    std::int64_t bs, rs, hs;
  };
  Operand const ops[] = {
      {"d_o.", "dO", b.d_o.ptr, extent(a.seqlen_q, a.heads, dv), b.d_o.batch_stride, b.d_o.row_stride, b.d_o.head_stride},
      {"dq.", "dQ", b.dq.ptr, extent(a.seqlen_q, a.heads, a.head_dim), b.dq.batch_stride, b.dq.row_stride, b.dq.head_stride},
      {"dk.", "dK", b.dk.ptr, extent(a.seqlen_k, a.kv_heads, a.head_dim), b.dk.batch_stride, b.dk.row_stride, b.dk.head_stride},
      {"dv.", "dV", b.dv.ptr, extent(a.seqlen_k, a.kv_heads, dv), b.dv.batch_stride, b.dv.row_stride, b.dv.head_stride},
  };
  for (Operand const& op : ops) {
    std::string const base(op.name, std::string(op.name).size() - 1);
    if (op.e.rows < 0) return attention_invalid(base + ": the offset of the last element of " + op.what + " overflows 64 bits");
    if (Status s = detail::attention_check_operand(op.name, op.what, op.ptr, op.e, op.bs, op.rs, op.hs, varlen, size_of(a.dtype)); !s)
      return s;
  }

  if (attention_backward_reads(a)) {
    char const* const why = " is read (B, H, S_q, S_k > 0)";
    if (a.q.ptr == nullptr) return attention_invalid(std::string("problem.q: null, but Q") + why);
    if (a.k.ptr == nullptr) return attention_invalid(std::string("problem.k: null, but K") + why);
    if (a.v.ptr == nullptr) return attention_invalid(std::string("problem.v: null, but V") + why);
    if (a.o == nullptr) return attention_invalid(std::string("problem.o: null, but O (the forward's output)") + why);
    if (a.lse == nullptr) return attention_invalid(std::string("problem.lse: null, but the forward's LSE") + why);
    if (b.d_o.ptr == nullptr) return attention_invalid(std::string("d_o: null, but dO") + why);
  }
  if (!attention_backward_is_noop(a)) {
    if (a.seqlen_q > 0 && b.dq.ptr == nullptr) return attention_invalid("dq: null, but dQ is written (B, H, S_q > 0)");
    if (a.seqlen_k > 0 && b.dk.ptr == nullptr) return attention_invalid("dk: null, but dK is written (B, H, S_k > 0)");
    if (a.seqlen_k > 0 && b.dv.ptr == nullptr) return attention_invalid("dv: null, but dV is written (B, H, S_k > 0)");
  }
  if (b.workspace != nullptr) {
    if (reinterpret_cast<std::uintptr_t>(b.workspace) % kAttentionWorkspaceAlign != 0)
      return attention_invalid("workspace: the pointer is not 256-byte aligned");
    std::size_t const need = attention_backward_workspace_layout(a, b.deterministic).bytes;
    if (b.workspace_bytes < need)
      return attention_invalid("workspace_bytes: " + std::to_string(b.workspace_bytes) + " is less than the " +
                               std::to_string(need) + " bytes the call needs (attention_backward_workspace_size)");
  }
  return Status::success();
}

}  // namespace tessel
