// src/attention/sm90_attention_bf16_d192.cu -- sm_90a attention forward, bf16, head dims (192, 192):
// query tile 128 (two consumer warpgroups), key tile 64, 2 stages of K and V (144 KiB of shared memory).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d192() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 192, 192, /*BlkN=*/64>>();
}

}  // namespace tessel::kernel::detail
