// src/attention/sm90_attention_f16_d256.cu -- sm_90a attention forward, f16, head dims (256, 256):
// query tile 128 (two consumer warpgroups), key tile 64, 2 stages of K and V (192 KiB of shared memory).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d256() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 256, 256, /*BlkN=*/64>>();
}

}  // namespace tessel::kernel::detail
