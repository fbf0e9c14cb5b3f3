// src/attention/sm90_attention_bf16_d256.cu -- sm_90a attention forward, bf16, head dims (256, 256):
// query tile 128 (two consumer warpgroups, no ping-pong), key tile 80, 2 stages of K and V (224 KiB of
// shared memory).
// Key tile 80 (not 64): measured on the H200, +10% (621 -> 687 TFLOP/s at B4 H32 S4096).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d256() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 256, 256, /*BlkN=*/80>>();
}

}  // namespace tessel::kernel::detail
