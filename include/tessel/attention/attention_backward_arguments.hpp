// tessel/attention/attention_backward_arguments.hpp -- the problem an attention-backward call
// describes: the gradients of attention_arguments.hpp's forward.
//
//   given dO = dL/dO, for each batch b, head h, query row i, key j (g = h / (H / H_kv)):
//     P[i,j]   = exp(z_ij - LSE[b,h,i])        z_ij the forward's softmax input (softcap applied),
//                                               0 where the mask removes j or LSE = -inf
//     dP[i,j]  = <dO[b,i,h,:], V[b,j,g,:]>
//     Dsum[i]  = <dO[b,i,h,:], O[b,i,h,:]>     ( = sum_j P[i,j] dP[i,j] )
//     dZ[i,j]  = P[i,j] * (dP[i,j] - Dsum[i])
//     dT[i,j]  = dZ[i,j] * dz/dt               t = <Q, K>: scale, times 1 - tanh^2 under a softcap
//     dQ[b,i,h,:]  = sum_j dT[i,j] K[b,j,g,:]
//     dK[b,j,g,:]  = sum over the query heads h of g, sum_i dT[i,j] Q[b,i,h,:]
//     dV[b,j,g,:]  = sum over the query heads h of g, sum_i P[i,j] dO[b,i,h,:]
//
// `problem` is the forward's call: Q, K, V, O, LSE (required: the forward's fp32 [B, H, S_q] or
// [H, total_q] output), the mask, softcap, scale, GQA, variable length -- every forward feature
// carries over; problem.o and problem.lse are read here, not written. dO is shaped and strided
// like O; dQ like Q; dK like K; dV like V (the last dimension contiguous, rows 16-byte aligned).
// Keys no query row sees get dK = dV = 0 exactly; rows that see no key get dQ = 0.
//
// deterministic: dQ, dK and dV are bitwise identical run to run (the default accumulates dQ with
// fp32 atomics in an order that varies). workspace: the scratch the call needs,
// attention_backward_workspace_size() bytes, 256-byte aligned; null allocates it stream-ordered
// (cudaMallocAsync / cudaFreeAsync on the call's stream). Plain C++: no CUDA headers needed.
#pragma once

#include <tessel/attention/attention_arguments.hpp>

#include <cstddef>
#include <cstdint>

namespace tessel {

// One gradient [B, S, H, D] the backward writes, with its strides in elements.
struct AttentionGradient {
  void* ptr = nullptr;
  std::int64_t batch_stride = 0, row_stride = 0, head_stride = 0;
};

struct AttentionBackwardArguments {
  AttentionArguments problem;  // the forward's call; its `kernel` field is not read here
  AttentionOperand d_o;        // dO [B, S_q, H, D_v]
  AttentionGradient dq;        // [B, S_q, H, D]
  AttentionGradient dk;        // [B, S_k, H_kv, D]
  AttentionGradient dv;        // [B, S_k, H_kv, D_v]
  bool deterministic = false;
  void* workspace = nullptr;   // null: allocated stream-ordered
  std::size_t workspace_bytes = 0;
  // A backward registry name (attention_backward_kernel_info), or nullptr / "auto".
  char const* kernel = nullptr;
};

// The backward of a packed forward problem (make_packed_attention): dO, dQ, dK, dV contiguous
// with the strides of O, Q, K, V. Pointers unset.
inline AttentionBackwardArguments make_packed_attention_backward(AttentionArguments const& problem) {
  AttentionBackwardArguments b;
  b.problem = problem;
  AttentionArguments const& a = problem;
  b.d_o = {nullptr, a.o_batch_stride, a.o_row_stride, a.o_head_stride};
  b.dq = {nullptr, a.q.batch_stride, a.q.row_stride, a.q.head_stride};
  b.dk = {nullptr, a.k.batch_stride, a.k.row_stride, a.k.head_stride};
  b.dv = {nullptr, a.v.batch_stride, a.v.row_stride, a.v.head_stride};
  return b;
}

}  // namespace tessel
