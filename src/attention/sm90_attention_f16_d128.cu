// src/attention/sm90_attention_f16_d128.cu -- sm_90a attention forward, f16, head dims (128, 128):
// query tile 128 (two consumer warpgroups, ping-pong), key tile 192, 2 stages of K and V (224 KiB of
// shared memory). The automatic choice from 2048 keys without a sliding window (causal or not);
// sm90_attention_f16_d128_k128 otherwise.
// Key tile 192 (not 128): the per-block costs (barrier waits, row reductions, the O rescale) spread
// over more keys. On the H200, bf16, same process, orders rotated over six rounds: B4 H32 S4096 600
// TFLOP/s against 593 for key tile 176 (GQA 32/8 601 against 595, causal 539 against 529; 176 was
// +2% over 128 at S 4096 and +4% at S 16384); under a causal mask 176 keys against 128: 529 against
// 512 at S 4096, 601 against 571 at S 8192, even at S 2048.
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 128, 128, /*BlkN=*/192>>();
}

}  // namespace tessel::kernel::detail
