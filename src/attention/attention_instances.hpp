// src/attention/attention_instances.hpp -- the compiled attention configurations as the host API
// sees them: one per TU, sm80_attention_<dtype>_d<D>[x<D_v>].cu (mma.sync, every GPU from sm_80)
// and sm90_attention_<dtype>_d<D>[x<D_v>].cu (TMA + wgmma, sm_90a only).
#pragma once

#include <tessel/attention/attention_arguments.hpp>
#include <tessel/attention/kernel/attention_params.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct AttentionInstance {
  int d, dv, blk_m, blk_n, threads, smem_bytes;
  // grid (query tiles, heads, batch); the sm_90a kernels also make their tensor maps from `args`
  Status (*launch)(AttentionArguments const& args, AttentionParams const& p, cudaStream_t stream);
  cudaError_t (*attributes)(cudaFuncAttributes* attr);
};

// The kernels' view of a validated call (forward and backward): pointers, strides, the mask and
// the score constants, with query tiles of blk_m rows (attention.cpp).
AttentionParams attention_params(AttentionArguments const& args, int blk_m);

// Whether the kernel `name` runs on the current GPU: from sm_80, or (min_sm 90) on sm_90 only, and
// with an image this GPU loads (`attributes` probes it; the answer is cached per kernel and device).
// Shared by the forward's and the backward's registries.
Status attention_kernel_runs_here(char const* name, int min_sm, cudaError_t (*attributes)(cudaFuncAttributes*));

// Whether a TMA tensor map can describe one [B, S, H, D] operand (forward and backward): 16-byte
// aligned, strides of whole 16-byte units, none zero where its extent is more than 1.
bool sm90_tma_loads(AttentionOperand const& t, std::int64_t heads, std::int64_t batch);

// The grids' limits: heads (or KV heads) on y and batch on z, 65535 each.
Status attention_check_grid(AttentionArguments const& a);

#define TESSEL_SM80_ATTENTION_INSTANCES(X) \
  X(bf16, d64) X(bf16, d96) X(bf16, d128) X(bf16, d192) X(bf16, d192x128) X(bf16, d256) \
  X(f16, d64) X(f16, d96) X(f16, d128) X(f16, d192) X(f16, d192x128) X(f16, d256) \
  X(bf16, d64_persistent) X(f16, d64_persistent) X(bf16, d128_k128_persistent) X(f16, d128_k128_persistent)
#define TESSEL_SM90_ATTENTION_INSTANCES(X) \
  X(bf16, d64) X(bf16, d128) X(bf16, d128_k128) X(bf16, d192) X(bf16, d192x128) X(bf16, d256) \
  X(f16, d64) X(f16, d128) X(f16, d128_k128) X(f16, d192) X(f16, d192x128) X(f16, d256) \
  X(bf16, d64_persistent) X(f16, d64_persistent) X(bf16, d128_k128_persistent) X(f16, d128_k128_persistent)

#define TESSEL_DECLARE_SM80(dtype, dims) AttentionInstance sm80_attention_instance_##dtype##_##dims();
#define TESSEL_DECLARE_SM90(dtype, dims) AttentionInstance sm90_attention_instance_##dtype##_##dims();
TESSEL_SM80_ATTENTION_INSTANCES(TESSEL_DECLARE_SM80)
TESSEL_SM90_ATTENTION_INSTANCES(TESSEL_DECLARE_SM90)
#undef TESSEL_DECLARE_SM80
#undef TESSEL_DECLARE_SM90

}  // namespace tessel::kernel::detail
