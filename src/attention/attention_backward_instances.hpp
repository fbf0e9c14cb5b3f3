// src/attention/attention_backward_instances.hpp -- the compiled attention-backward
// configurations as the host API sees them: sm80_attention_bwd_<dtype>.cu, one TU per dtype
// holding every head-dim pair (mma.sync, every GPU from sm_80), and sm90_attention_bwd_<dtype>.cu
// with sm90_attention_bwd_<dtype>_d256.cu (TMA + wgmma, head dims 64, 128 and 256, sm_90a only).
#pragma once

#include <tessel/attention/attention_backward_arguments.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tessel::kernel::detail {

struct AttentionBackwardInstance {
  int d, dv, blk_m, blk_n, threads, smem_bytes;
  // Every kernel of the call on `stream`: preprocess, dK/dV (with dQ atomics unless
  // deterministic), then the dQ kernel (deterministic) or the dQ conversion. The workspace in
  // `p` is ready (dq_accum zeroed).
  Status (*launch)(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream);
  cudaError_t (*attributes)(cudaFuncAttributes* attr);  // of the dK/dV kernel
};

#define TESSEL_SM80_ATTENTION_BWD_INSTANCES(X) \
  X(bf16, d64) X(bf16, d96) X(bf16, d128) X(bf16, d192) X(bf16, d192x128) X(bf16, d256) \
  X(f16, d64) X(f16, d96) X(f16, d128) X(f16, d192) X(f16, d192x128) X(f16, d256)

#define TESSEL_SM90_ATTENTION_BWD_INSTANCES(X)                                                                      \
  X(bf16, d64) X(bf16, d128) X(bf16, d256) X(bf16, d256_softcap) X(bf16, d64_deterministic) X(bf16, d128_deterministic) X(f16, d64)     \
      X(f16, d128) X(f16, d256) X(f16, d256_softcap) X(f16, d64_deterministic) X(f16, d128_deterministic)

#define TESSEL_DECLARE_SM80_BWD(dtype, dims) AttentionBackwardInstance sm80_attention_bwd_instance_##dtype##_##dims();
TESSEL_SM80_ATTENTION_BWD_INSTANCES(TESSEL_DECLARE_SM80_BWD)
#undef TESSEL_DECLARE_SM80_BWD
#define TESSEL_DECLARE_SM90_BWD(dtype, dims) AttentionBackwardInstance sm90_attention_bwd_instance_##dtype##_##dims();
TESSEL_SM90_ATTENTION_BWD_INSTANCES(TESSEL_DECLARE_SM90_BWD)
#undef TESSEL_DECLARE_SM90_BWD

// A launch's CUDA error as its Status.
inline Status attention_bwd_status(cudaError_t err) {
  if (err == cudaSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
}

// The two small kernels around the dK/dV kernel, for Element = bfloat16_t or half_t: the
// preprocess (Dsum = <dO, O> and LSE * log2 e into the workspace) and the default mode's dQ
// conversion (dQ = scale * dq_accum). Compiled once, with the sm_80 kernels (every architecture:
// sm80_attention_bwd_<dtype>.cu instantiates them), and launched by the sm_90a path too.
template <class Element>
Status attention_bwd_preprocess(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream);
template <class Element>
Status attention_bwd_dq_convert(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream);

}  // namespace tessel::kernel::detail
