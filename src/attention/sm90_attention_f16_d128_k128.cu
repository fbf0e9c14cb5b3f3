// src/attention/sm90_attention_f16_d128_k128.cu -- sm_90a attention forward, f16, head dims (128, 128):
// query tile 128 (two consumer warpgroups, ping-pong), key tile 128, 2 stages of K and V (160 KiB
// of shared memory). The automatic choice under a causal mask or a window, and below 2048 keys,
// where sm90_attention_f16_d128's 176-key blocks cost more: bf16 on the H200, `tessel attention` by
// name in one process, B8 H16 S2048 causal 0.289-0.290 ms against 0.347-0.355, B16 H16 S1024
// 493-515 TFLOP/s against 407-421, B10 H16 S1536 0.338 ms against 0.352; the same at S 2048 and
// 3072 without a mask. (FlashAttention-3 makes the same choice: 128 keys with a mask, 176 without.)
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d128_k128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 128, 128, /*BlkN=*/128>>();
}

}  // namespace tessel::kernel::detail
