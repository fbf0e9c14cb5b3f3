// src/attention/sm80_attention_bf16_d64.cu -- sm_80 attention forward, bf16, head dims (64, 64):
// query tile 128, key tile 128, 4 warps.
// 32 query rows per warp: each K/V block read from shared memory serves 32 rows, and two
// CTAs share an SM; measured faster on the H200 than 8 warps of 16 rows, though ptxas spills a little.
#include "sm80_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm80_attention_instance_bf16_d64() {
  return make_sm80_attention_instance<Sm80AttentionConfig<bfloat16_t, 64, 64, /*BlkM=*/128, /*BlkN=*/128, /*Warps=*/4>>();
}

}  // namespace tessel::kernel::detail
