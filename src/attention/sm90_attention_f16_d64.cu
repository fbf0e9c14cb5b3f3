// src/attention/sm90_attention_f16_d64.cu -- sm_90a attention forward, f16, head dims (64, 64):
// query tile 192 (three consumer warpgroups, ping-pong), key tile 128, 2 stages of K and V (88 KiB
// of shared memory). The automatic choice from 1536 query rows: on the H200, bf16, against the
// 128-row tiles of sm90_attention_f16_d64_q128, B4 H32 S4096 497 TFLOP/s against 449 (causal 402
// against 394), B12 H32 S1536 455 against 403; at S 1024 the 128-row tiles win (below).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d64() {
  return make_sm90_attention_instance<
      Sm90AttentionConfig<half_t, 64, 64, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true, /*ConsumerWarpgroups=*/3>>();
}

}  // namespace tessel::kernel::detail
