// src/attention/sm80_attention_bf16_d96.cu -- sm_80 attention forward, bf16, head dims (96, 96):
// query tile 128, key tile 64, 4 warps.
// 32 query rows per warp, as for D 64 and 128, where it measured faster on the H200 than 8 warps
// of 16 rows (each K/V block read from shared memory serves 32 rows; two CTAs share an SM).
#include "sm80_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm80_attention_instance_bf16_d96() {
  return make_sm80_attention_instance<Sm80AttentionConfig<bfloat16_t, 96, 96, /*BlkM=*/128, /*BlkN=*/64, /*Warps=*/4>>();
}

}  // namespace tessel::kernel::detail
