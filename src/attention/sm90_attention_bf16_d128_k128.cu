// src/attention/sm90_attention_bf16_d128_k128.cu -- sm_90a attention forward, bf16, head dims (128, 128):
// query tile 128 (two consumer warpgroups, ping-pong), key tile 128, 2 stages of K and V (160 KiB
// of shared memory). The automatic choice below 2048 keys and under a sliding window, where
// sm90_attention_bf16_d128's wider key blocks leave more of the last block or the window's edges
// empty: bf16 on the H200, B16 H16 S1024 in one process 448 TFLOP/s against 437 for key tile 176.
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d128_k128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 128, 128, /*BlkN=*/128>>();
}

}  // namespace tessel::kernel::detail
