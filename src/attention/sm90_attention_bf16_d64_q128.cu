// src/attention/sm90_attention_bf16_d64_q128.cu -- sm_90a attention forward, bf16, head dims (64, 64):
// query tile 128 (two consumer warpgroups, ping-pong), key tile 128, 2 stages of K and V (80 KiB of
// shared memory). The automatic choice below 1536 query rows, where the 192-row tiles of
// sm90_attention_bf16_d64 leave more rows empty (bf16 B16 H16 S1024: 228 TFLOP/s against 198, H200).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d64_q128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 64, 64, /*BlkN=*/128>>();
}

}  // namespace tessel::kernel::detail
