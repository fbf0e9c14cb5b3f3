// src/attention/sm90_attention_bf16_d128.cu -- sm_90a attention forward, bf16, head dims (128, 128):
// query tile 128 (two consumer warpgroups, ping-pong), key tile 176, 2 stages of K and V (208 KiB of
// shared memory).
// Key tile 176 (not 128): measured on the H200, +2% at S 4096 and +4% at S 16384 -- the per-block
// costs (barrier waits, row reductions, the O rescale) spread over more keys. The automatic choice
// without a mask from 2048 keys; sm90_attention_bf16_d128_k128 otherwise.
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d128() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 128, 128, /*BlkN=*/176>>();
}

}  // namespace tessel::kernel::detail
