// tessel/reference/attention_backward_device.hpp -- references of the attention gradients on the
// GPU, and their judge.
//
// FlashAttention-3's rule for dQ, dK and dV, as attention_device.hpp states it for O and LSE, needs
// two references of the gradients (attention_backward_arguments.hpp has the definition):
//   exact   fp64 arithmetic throughout from the bf16/fp16 inputs: the scores z (softcap applied),
//           the row's LSE of those scores (its own, never the forward kernel's), P = exp(z - LSE),
//           dP = <dO, V>, Dsum = sum_j P dP, dS = P (dP - Dsum) dz/dt; then dQ = dS K, dK = dS^T Q
//           and dV = P^T dO (summed over the query heads of a KV head); stored as fp32
//   low     a straightforward backward in the input precision: z, P, dP, dS and the gradients
//           rounded to the dtype, fp32 sums, LSE from the rounded scores, and Dsum = <dO, O> with
//           the O the call passes (the forward kernel's, as the backward kernel forms it)
// and a kernel's gradient g passes when max |g - g_exact| <= 2 max |g_low - g_exact| + floor
// (floor: one unit in the last place of the dtype at max |g_exact|, + 1e-6); a NaN or infinity
// fails. The definitions are the GPU test's (tests/gpu/attention_backward_test.cu), evaluated
// without materialising P: one warp per row (dQ: a query row; dK, dV: a key row), 16 rows of a CTA
// sharing tiles of 32 keys (or queries) in shared memory, each lane one (row, key) pair's scores.
// The mask, GQA and variable length are evaluated from the arguments independently of the kernels;
// nothing of the code under test runs. Implemented in src/attention/reference_attention_backward.cu.
#pragma once

#include <tessel/attention/attention_backward_arguments.hpp>
#include <tessel/core/status.hpp>
#include <tessel/reference/attention_device.hpp>  // AttentionPrecision

#include <cstdint>

struct CUstream_st;

namespace tessel::reference {

// Gradients as the references write them: device fp32, packed [rows, heads, cols], rows = B * S
// (or the totals cu_seqlens[B] when variable-length).
struct AttentionGradients {
  float* dq = nullptr;  // [rows_q, H, D]
  float* dk = nullptr;  // [rows_k, H_kv, D]
  float* dv = nullptr;  // [rows_k, H_kv, D_v]
};

// The gradients of b's problem for dO = b.d_o. Pre: attention_backward_validate(b) passes (checked:
// its refusal is returned). Reads Q, K, V, dO, cu_seqlens and (low) O; not the forward's LSE, nor
// dq/dk/dv. Scratch for its row statistics (fp64 [H, B * S_q] twice) is allocated and freed
// stream-ordered. Asynchronous on `stream`.
Status attention_backward_device(AttentionBackwardArguments const& b, AttentionPrecision precision,
                                 AttentionGradients const& out, CUstream_st* stream = nullptr);

struct AttentionBackwardCheck {
  double max_err[3] = {};      // dQ, dK, dV: the kernel's max |g - exact| over its finite g
  double max_err_low[3] = {};  // the low-precision reference's
  double bound[3] = {};        // 2 * low + floor
  bool nan = false;            // a NaN / inf where the exact reference is finite
  bool pass = false;
  char what[200] = {};         // one line: the errors and bounds, or the first failure
};

// Judge the kernel's b.dq, b.dk, b.dv (dtype b.problem.dtype, their own strides) against the two
// references. Returns success when the check ran, whatever its verdict (out->pass, out->what); an
// error only when it could not run. Synchronizes `stream`.
Status check_attention_backward(AttentionBackwardArguments const& b, AttentionGradients const& exact,
                                AttentionGradients const& low, AttentionBackwardCheck* out,
                                CUstream_st* stream = nullptr);

}  // namespace tessel::reference
