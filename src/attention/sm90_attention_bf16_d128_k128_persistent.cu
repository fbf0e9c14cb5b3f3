// src/attention/sm90_attention_bf16_d128_k128_persistent.cu -- sm_90a attention forward, bf16, head
// dims (128, 128): sm90_attention_bf16_d128_k128's configuration run persistently -- one CTA per SM
// walking the (query tile, head, batch) tiles, the next tile's Q loaded into a second buffer (192
// KiB of shared memory) and its K and V into the ring while this tile finishes, its first GEMMs
// issued while the other warpgroup stores this tile's O. The automatic choice without a mask below
// 2048 keys. Against the one-CTA kernels (bf16, H200, one process, six rotated rounds): B16 H16
// S1024 0.268 ms against 0.291 (128-key blocks) and 0.304 (192), B32 H16 S512 0.157 against 0.183
// and 0.193; B8 H32 S2048 0.969 against 1.000 and 0.962 (the 192-key kernel takes 2048 keys on);
// under a causal mask 6% slower than either (a fixed walk over tiles of unequal cost leaves SMs
// idle at the end).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d128_k128_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 128, 128, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/2, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
