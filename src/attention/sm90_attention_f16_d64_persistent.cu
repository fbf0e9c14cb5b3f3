// src/attention/sm90_attention_f16_d64_persistent.cu -- sm_90a attention forward, f16, head dims
// (64, 64): sm90_attention_f16_d64's configuration (query tile 192, three consumer warpgroups) run
// persistently, one CTA per SM walking the tiles with the next tile's Q in a second buffer (112 KiB
// of shared memory). The automatic choice without a mask up to 1024 keys. Against the one-CTA
// kernel (bf16, H200, one process, six rotated rounds): B32 H16 S512 0.101 ms against 0.109, B16
// H16 S1024 0.170 against 0.171, B4 H32 S4096 1.097 against 1.079; a first form read 28% slower
// under a causal mask at B16 H16 S1024 (a fixed walk over tiles of unequal cost).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d64_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 64, 64, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/3, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
