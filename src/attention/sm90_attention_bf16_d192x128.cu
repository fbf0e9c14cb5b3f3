// src/attention/sm90_attention_bf16_d192x128.cu -- sm_90a attention forward, bf16, head dims (192, 128):
// query tile 128 (two consumer warpgroups, no ping-pong), key tile 128, 2 stages of K and V (208 KiB of
// shared memory).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d192x128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 192, 128, /*BlkN=*/128>>();
}

}  // namespace tessel::kernel::detail
