// src/attention/sm80_attention_f16_d128.cu -- sm_80 attention forward, f16, head dims (128, 128):
// query tile 128, key tile 64, 4 warps.
// 32 query rows per warp: each K/V block read from shared memory serves 32 rows, and two
// CTAs share an SM; measured faster on the H200 than 8 warps of 16 rows, though ptxas spills a little.
#include "sm80_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm80_attention_instance_f16_d128() {
  return make_sm80_attention_instance<Sm80AttentionConfig<half_t, 128, 128, /*BlkM=*/128, /*BlkN=*/64, /*Warps=*/4>>();
}

}  // namespace tessel::kernel::detail
