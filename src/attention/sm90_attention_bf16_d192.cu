// src/attention/sm90_attention_bf16_d192.cu -- sm_90a attention forward, bf16, head dims (192, 192):
// query tile 128 (two consumer warpgroups, no ping-pong), key tile 80, 2 stages of K and V (168 KiB of
// shared memory).
// Key tile 80, as D 256 (where it measured 10% faster than 64); 112 has no wgmma width here.
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d192() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 192, 192, /*BlkN=*/80>>();
}

}  // namespace tessel::kernel::detail
