// src/capi/attention_problem.hpp -- a C ABI attention problem (strided tensors) as the host API's
// AttentionArguments.
//
// The mapping (tessel/c_api.h): q [B, S_q, H, D] gives B, S_q, H and D; k [B, S_k, H_kv, D] gives
// S_k and H_kv; v's last extent is D_v. Strides map dimension by dimension (batch, row, head); the
// stride of an extent-1 dimension, and every stride of a tensor with no elements, forms no address
// and is replaced by its packed value, so that a view's arbitrary stride there (torch gives size-1
// dimensions any stride) never trips an alignment rule. With cu_seqlens the tensors are packed
// [total, H, D]: B is the offsets' length - 1, S_q and S_k are max_seqlen_q/k (0: the totals),
// and batch strides are 0. The C ABI's own rules (presence, ranks, dtypes, shapes that agree, unit
// last strides, distinct output addresses) come first, then attention_validate's; every refusal
// starts with the tensor's name (its `name`) or the argument's. No CUDA calls.
//
// A backward problem maps its `forward` the same way (lse required, o and lse read: their elements
// need not be distinct), then d_o, dq, dk and dv: present, of q's dtype, shaped like o, q, k and v,
// strides non-negative with the last one 1, the written gradients' elements distinct; then
// attention_backward_validate, whose "problem.q: ..." reasons name the caller's "q".
#pragma once

#include <tessel/c_api.h>

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/attention/attention_backward_arguments.hpp>

#include "refusal.hpp"

namespace tessel::capi {

// Checks p against every rule of tessel_attention_check and, when it passes, fills *out.
// Pointers are copied, never dereferenced.
Refusal attention_arguments_from_problem(tessel_attention_problem const& p, AttentionArguments* out);

// Checks p against every rule of tessel_attention_backward_check and, when it passes, fills *out.
Refusal attention_backward_arguments_from_problem(tessel_attention_backward_problem const& p,
                                                  AttentionBackwardArguments* out);

}  // namespace tessel::capi
