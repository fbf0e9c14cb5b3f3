// src/attention/sm90_attention_f16_d128_k128_persistent.cu -- sm_90a attention forward, f16, head
// dims (128, 128): sm90_attention_f16_d128_k128's configuration run persistently -- one CTA per SM
// walking the (query tile, head, batch) tiles, the next tile's Q loaded into a second buffer (192
// KiB of shared memory) and its K and V into the ring while this tile finishes, its first GEMMs
// issued while the other warpgroup stores this tile's O. By name only until measured in this form.
// A first form (which also slowed the one-CTA kernels; the kernel was rebuilt so that their PTX is
// unchanged) read, bf16 on the H200, one process, six rotated rounds, against the one-CTA kernel of
// the same code: B16 H16 S1024 +10%, B32 H16 S512 +17%, B2 H32 S1536 +6%, B8 H32 S2048 +4% (and
// +4% over the 192-key kernel there), equal at S 4096; under a causal mask 3% slower (a fixed walk
// over tiles of unequal cost leaves SMs idle at the end).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_f16_d128_k128_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<half_t, 128, 128, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/2, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
