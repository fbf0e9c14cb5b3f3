// src/attention/sm90_attention_f16_d64_persistent.cu -- sm_90a attention forward, f16, head dims
// (64, 64): sm90_attention_f16_d64's configuration (query tile 192, three consumer warpgroups) run
// persistently, one CTA per SM walking the tiles with the next tile's Q in a second buffer (112 KiB
// of shared memory). By name only until measured in this form. A first form read, bf16 on the H200,
// one process, six rotated rounds, against the one-CTA kernel of the same code: B16 H16 S1024
// +3.5%, B32 H16 S512 +12%, B12 H32 S1536 +7%, equal at B4 H32 S4096; under a causal mask 28%
// slower at B16 H16 S1024 (a fixed walk over tiles of unequal cost).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d64_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 64, 64, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/3, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
