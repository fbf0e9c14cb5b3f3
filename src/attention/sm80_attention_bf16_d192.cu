// src/attention/sm80_attention_bf16_d192.cu -- sm_80 attention forward, bf16, head dims (192, 192):
// query tile 128, key tile 64, 8 warps.
// 16 query rows per warp: a wide head's accumulators fit in registers (4 warps of 32 rows spill
// more and measured slower on the H200). The softmax rescales O after every block: lazy
// rescaling measured 11% slower at D 256 with 8 warps (and +3-7% with the 4-warp tiles).
#include "sm80_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm80_attention_instance_bf16_d192() {
  return make_sm80_attention_instance<Sm80AttentionConfig<bfloat16_t, 192, 192, /*BlkM=*/128, /*BlkN=*/64, /*Warps=*/8, /*LazyRescale=*/false>>();
}

}  // namespace tessel::kernel::detail
