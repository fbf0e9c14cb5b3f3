// tessel/attention/attention_backward.hpp -- the attention-backward host API.
//
//   tessel::AttentionArguments a = tessel::make_packed_attention(B, S_q, S_k, H, H_kv, 128);
//   a.q.ptr = q; a.k.ptr = k; a.v.ptr = v; a.o = o; a.lse = lse; a.causal = true;  // as the forward ran
//   tessel::AttentionBackwardArguments g = tessel::make_packed_attention_backward(a);
//   g.d_o.ptr = d_o; g.dq.ptr = dq; g.dk.ptr = dk; g.dv.ptr = dv;
//   if (tessel::Status s = tessel::attention_backward(g, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//
// attention_backward() validates (attention_backward_validate.hpp: every refusal names the
// argument), returns at once when there is nothing to write (B or H is 0), and otherwise runs
// FlashAttention-2's backward. On an sm_90 GPU a fixed-length problem at head dims (64, 64) or
// (128, 128) whose operands TMA can load and whose dK and dV it can store runs the sm_90a kernel
// (kernel/sm90_attention_backward.hpp: a producer warpgroup, two consumer warpgroups -- three at
// D 64 in the default mode -- dQ's parts added to the fp32 workspace by TMA reductions;
// deterministic: those additions in a fixed order, turn counters in the workspace); everything
// else runs the mma.sync kernels
// (kernel/sm80_attention_backward.hpp) on every GPU from sm_80:
//   preprocess   LSE * log2(e) and Dsum = rowsum(dO * O) per query row, into the workspace
//   dK, dV       one CTA per (key block, KV head, batch), looping over the KV head's query heads
//                and the query blocks that see the block: dK and dV stay in registers, summed in
//                a fixed order (deterministic in both modes)
//   dQ           default: the same CTAs add dS K into an fp32 workspace (sm_80: atomics), then a
//                conversion kernel writes dQ; deterministic on sm_80: a second kernel per (query
//                block, head, batch) walks the key blocks and recomputes S and dP (no atomics)
// The launches are asynchronous on `stream` and nothing synchronises; with no caller workspace
// it is allocated with cudaMallocAsync and freed with cudaFreeAsync on `stream`. CUDA errors
// (launches, the allocation, errors left pending by earlier work) come back as
// StatusCode::cuda_error; a GPU below sm_80 or a build without its image as arch_mismatch.
#pragma once

#include <tessel/attention/attention_backward_arguments.hpp>
#include <tessel/attention/attention_backward_validate.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace tessel {

// The workspace attention_backward(args) needs, in bytes (0 when it reads nothing); validates
// args first (its refusal is returned).
Status attention_backward_workspace_size(AttentionBackwardArguments const& args, std::size_t* bytes);

// Whether attention_backward(args) would run: the rules, a kernel for the dtype and head dims, an
// image of it for the current device. Launches nothing.
Status can_implement(AttentionBackwardArguments const& args);

// The registry name of the kernel attention_backward(args) would run: args.kernel when it names
// one that takes the problem, else the one built for the dtype and head dims. The argument rules
// first; no CUDA calls (the kernel's image for the device is can_implement's question).
Status attention_backward_kernel_name(AttentionBackwardArguments const& args, char const** name);
// The same choice for a GPU of compute capability `cc` (major * 10 + minor; 0: none), whether or
// not one is present: the heuristic on its own (tests/host/attention_choice_test.cpp).
Status attention_backward_kernel_name_for(AttentionBackwardArguments const& args, int cc, char const** name);

// dQ, dK, dV on `stream` (attention_backward_arguments.hpp has the definition).
Status attention_backward(AttentionBackwardArguments const& args, cudaStream_t stream = nullptr);

// The backward registry, in the order of the automatic choice.
struct AttentionBackwardKernelInfo {
  char const* name;
  char const* description;
  int min_sm;
};
int attention_backward_kernel_count();
AttentionBackwardKernelInfo attention_backward_kernel_info(int i);

}  // namespace tessel
