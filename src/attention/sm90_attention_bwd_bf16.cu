// src/attention/sm90_attention_bwd_bf16.cu -- the sm_90a attention backward, bf16, head dims 64 and 128 (256: _d256.cu)
// (sm90_attention_backward.hpp): query block 64, 64 keys per consumer warpgroup; the default mode at
// D 64 three consumers (key block 192: 8% faster than two at B4 H32 S4096 on an H200), the rest two
// (128); a Q/dO ring of 3 stages at D 64, 2 at D 128.
#include "sm90_attention_bwd_launch.cuh"

namespace tessel::kernel::detail {

AttentionBackwardInstance sm90_attention_bwd_instance_bf16_d64() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<bfloat16_t, 64, 3, false, 3>>();
}

AttentionBackwardInstance sm90_attention_bwd_instance_bf16_d128() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<bfloat16_t, 128>>();
}

AttentionBackwardInstance sm90_attention_bwd_instance_bf16_d64_deterministic() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<bfloat16_t, 64, 3, true>>();
}

AttentionBackwardInstance sm90_attention_bwd_instance_bf16_d128_deterministic() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<bfloat16_t, 128, 2, true>>();
}

}  // namespace tessel::kernel::detail
