// tessel/reference/attention_device.hpp -- attention references on the GPU and their judge.
//
// FlashAttention-3's correctness rule needs two references of the same problem:
//   exact      O and LSE with fp32 arithmetic throughout (products of the bf16/fp16 inputs
//              accumulated in fp32, softmax in fp32, P kept in fp32)
//   low        a straightforward attention in the input precision: S = scale * Q K^T rounded to
//              the input dtype (and again after softcap), softmax in fp32, P = exp(S - m) / l
//              rounded to the input dtype before P V (accumulated in fp32), O rounded to it
// and a kernel passes when, elementwise over the whole output,
//   max |O - O_exact| <= 2 * max |O_low - O_exact| + floor      (the same for LSE)
// where floor is one unit in the last place of the input dtype at the output's largest magnitude
// plus the references' own fp32 noise: 2^-7 (bf16) or 2^-10 (fp16) times max |O_exact|, + 1e-6
// (LSE: the same with max |LSE_exact| over its finite entries). On top of the bound: where the
// exact LSE is -inf (a row that sees no key) the kernel's must be -inf, and a NaN or infinity
// where the exact reference is finite always fails.
// Both references evaluate the mask of attention_arguments.hpp independently of the kernels
// (one warp per (b, h, i) row, keys walked left to right; 32 rows of a CTA share K/V tiles in
// shared memory), including variable-length batches (cu_seqlens read on the device).
// Implemented in src/attention/reference_attention.cu (tessel::kernels).
#pragma once

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/core/status.hpp>

#include <cstdint>

struct CUstream_st;

namespace tessel::reference {

enum class AttentionPrecision { exact, low };

// o: device fp32 [rows_q_total, H, D_v] packed (rows_q_total = B * S_q, or total_q =
// cu_seqlens_q[B] when variable-length); O = 0 for rows whose keys are all masked.
// lse: device fp32 [H, rows_q_total] (-inf for rows whose keys are all masked), or null for none.
// Pre: attention_validate(a) passed (checked: its refusal is returned). Reads a.q/k/v and
// cu_seqlens; writes nothing of a.o/a.lse. Asynchronous on `stream`.
// B4 H32 S4096 D128: 0.24 s per reference on an H200 (no mask; 0.12 s causal).
Status attention_device(AttentionArguments const& a, AttentionPrecision precision, float* o, float* lse,
                        CUstream_st* stream = nullptr);

struct AttentionCheck {
  double max_err_o = 0, max_err_lse = 0;      // the kernel's max |x - exact| over its finite x
  double max_err_o_low = 0, max_err_lse_low = 0;  // the low-precision reference's
  double bound_o = 0, bound_lse = 0;          // 2 * low + floor
  std::int64_t bad_row = -1;                  // first (packed) query row of a failure, -1 if none
  std::int64_t bad_head = -1;
  int bad_col = -1;                           // column of O, or -1 for LSE
  bool nan = false;                           // a NaN / inf where the exact reference is finite
  bool pass = false;
  char what[160] = {};                        // one line: the errors and bounds, or the first failure
};

// Judge the kernel's a.o (dtype a.dtype, a's strides; packed rows when variable-length) and a.lse
// (when non-null; lse_exact and lse_low are then required) against the two references, as
// attention_device writes them. Returns success when the check ran, whatever its verdict
// (out->pass; out->what says why in one line); an error only when it could not run.
// Synchronizes `stream`.
Status check_attention(AttentionArguments const& a, float const* o_exact, float const* lse_exact, float const* o_low,
                       float const* lse_low, AttentionCheck* out, CUstream_st* stream = nullptr);

}  // namespace tessel::reference
