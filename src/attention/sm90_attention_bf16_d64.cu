// src/attention/sm90_attention_bf16_d64.cu -- sm_90a attention forward, bf16, head dims (64, 64):
// query tile 192 (three consumer warpgroups, ping-pong), key tile 128, 2 stages of K and V (88 KiB
// of shared memory), at every length: against 128-row tiles (two consumer warpgroups), bf16 on the
// H200, one process, six rotated rounds: B4 H32 S4096 +17%, B12 H32 S1536 +17%, B16 H16 S1024 +14%
// (causal +8%), B32 H16 S512 +16%. Each K/V block loaded serves 192 rows instead of 128.
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d64() {
  return make_sm90_attention_instance<
      Sm90AttentionConfig<bfloat16_t, 64, 64, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true, /*ConsumerWarpgroups=*/3>>();
}

}  // namespace tessel::kernel::detail
