// tessel/attention/attention.hpp -- the attention-forward host API.
//
//   tessel::AttentionArguments a = tessel::make_packed_attention(B, S_q, S_k, H, H_kv, 128);
//   a.q.ptr = dQ; a.k.ptr = dK; a.v.ptr = dV; a.o = dO; a.lse = dLSE;   // device pointers
//   a.causal = true;
//   if (tessel::Status s = tessel::attention_forward(a, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//
// attention_forward() validates (attention_validate.hpp: every refusal names the argument and
// the rule), returns at once when there is nothing to write (B, H or S_q is 0), and otherwise
// launches the kernel the library picks for the GPU and head dims (or AttentionArguments::kernel,
// by registry name): on sm_90, the TMA + wgmma kernel (kernel/sm90_attention.hpp) for head dims
// 64, 128, 192, (192, 128) and 256 on fixed-length batches with 16-byte-aligned tensors; otherwise
// the mma.sync kernel (kernel/sm80_attention.hpp). It never launches a kernel that has no image for the current GPU
// (StatusCode::arch_mismatch). The launch is asynchronous on `stream`, takes no workspace and
// does not synchronise; launch errors and errors left pending by earlier work come back as
// StatusCode::cuda_error.
#pragma once

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/attention/attention_validate.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

namespace tessel {

// Whether attention_forward(args) would run: the argument rules, a kernel that takes the
// problem, and an image of it for the current device. Makes no launch.
Status can_implement(AttentionArguments const& args);

// The registry name of the kernel attention_forward(args) would run: args.kernel when it names
// one that takes the problem, else the library's choice for the dtype, the head dims and the
// current device (the sm_90a kernel on an sm_90 GPU when its TMA loads take the tensors, else the
// sm_80 kernel; with no device, the sm_80 kernel). The argument rules first; it launches nothing.
Status attention_kernel_name(AttentionArguments const& args, char const** name);
// The same choice for a GPU of compute capability `cc` (major * 10 + minor; 0: none), whether or
// not one is present: the heuristic on its own (tests/host/attention_choice_test.cpp).
Status attention_kernel_name_for(AttentionArguments const& args, int cc, char const** name);

// O (and LSE) for Q, K, V on `stream` (attention_arguments.hpp has the definition).
Status attention_forward(AttentionArguments const& args, cudaStream_t stream = nullptr);

// The registry: every attention kernel's name and what it covers, in the order `tessel list` prints.
struct AttentionKernelInfo {
  char const* name;
  char const* description;
  int min_sm;  // the lowest compute capability (major * 10 + minor) it runs on
};
int attention_kernel_count();
AttentionKernelInfo attention_kernel_info(int i);

}  // namespace tessel
