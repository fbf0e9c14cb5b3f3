// src/attention/sm80_attention_bwd_bf16.cu -- sm_80 attention backward, bf16, every head-dim pair:
// 64 x 64 query and key tiles, 8 warps as a 4 x 2 grid over each GEMM's output.
// One TU per dtype rather than per head dims: the six configurations share the header parse and
// the preprocess and conversion kernels (compile times in docs/attention.md).
#include "sm80_attention_bwd_launch.cuh"

namespace tessel::kernel::detail {

template Status attention_bwd_preprocess<bfloat16_t>(AttentionBackwardArguments const&, AttentionBackwardParams const&, cudaStream_t);
template Status attention_bwd_dq_convert<bfloat16_t>(AttentionBackwardArguments const&, AttentionBackwardParams const&, cudaStream_t);

AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d64() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 64, 64>>();
}
AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d96() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 96, 96>>();
}
AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d128() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 128, 128>>();
}
AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d192() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 192, 192>>();
}
AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d192x128() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 192, 128>>();
}
AttentionBackwardInstance sm80_attention_bwd_instance_bf16_d256() {
  return make_sm80_attention_bwd_instance<Sm80AttentionBackwardConfig<bfloat16_t, 256, 256>>();
}

}  // namespace tessel::kernel::detail
