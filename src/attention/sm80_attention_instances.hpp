// src/attention/sm80_attention_instances.hpp -- the compiled sm_80 attention configurations, one
// per TU (sm80_attention_<dtype>_d<D>[x<D_v>].cu), as the host API sees them.
#pragma once

#include <tessel/attention/kernel/sm80_attention_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct Sm80AttentionInstance {
  int d, dv, blk_m, blk_n, threads, smem_bytes;
  // grid (query tiles, heads, batch)
  cudaError_t (*launch)(Sm80AttentionParams const& p, int batch, cudaStream_t stream);
  cudaError_t (*attributes)(cudaFuncAttributes* attr);
};

#define TESSEL_SM80_ATTENTION_INSTANCES(X) \
  X(bf16, d64) X(bf16, d96) X(bf16, d128) X(bf16, d192) X(bf16, d192x128) X(bf16, d256) \
  X(f16, d64) X(f16, d96) X(f16, d128) X(f16, d192) X(f16, d192x128) X(f16, d256)

#define TESSEL_DECLARE(dtype, dims) Sm80AttentionInstance sm80_attention_instance_##dtype##_##dims();
TESSEL_SM80_ATTENTION_INSTANCES(TESSEL_DECLARE)
#undef TESSEL_DECLARE

}  // namespace tessel::kernel::detail
