// src/attention/sm90_attention_bf16_d64_persistent.cu -- sm_90a attention forward, bf16, head dims
// (64, 64): sm90_attention_bf16_d64's configuration (query tile 192, three consumer warpgroups) run
// persistently, one CTA per SM walking the tiles with the next tile's Q in a second buffer (112 KiB
// of shared memory). The automatic choice without a mask: bf16 on the H200, one process, six
// rotated rounds, against the one-CTA-per-tile kernel: B16 H16 S1024 +3.5%, B32 H16 S512 +12%,
// B12 H32 S1536 +7%, equal at B4 H32 S4096. Under a causal mask 28% slower at B16 H16 S1024 (a
// fixed walk over tiles of unequal cost), so masked problems keep one CTA per tile.
// Here by name only: the kernel change that makes it persistent made the one-CTA-per-tile kernels
// 3-5% slower on the H200 (D 128 S4096 -3.3%, D 64 -4.8%; R2UR 4 -> 15 in the D 128 kernel).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d64_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 64, 64, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/3, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
