// src/attention/sm90_attention_bf16_d128_k128_persistent.cu -- sm_90a attention forward, bf16, head
// dims (128, 128): sm90_attention_bf16_d128_k128's configuration run persistently -- one CTA per SM
// walking the (query tile, head, batch) tiles, the next tile's Q loaded into a second buffer (192
// KiB of shared memory) and its K and V into the ring while this tile finishes, its first GEMMs
// issued while the other warpgroup stores this tile's O. The automatic choice without a mask
// below 3072 keys: bf16 on the H200, one process, six rotated rounds, against the one-CTA-per-tile
// kernel with 128-key (and 192-key) blocks: B16 H16 S1024 +10% (+19%), B32 H16 S512 +17% (+29%),
// B2 H32 S1536 +6% (+4%), B8 H32 S2048 +4% (+4%); equal at S 4096, where the 192-key blocks
// are 4% faster (the crossover taken halfway). Under a causal mask the tiles' costs differ and a
// fixed walk leaves SMs idle at the end: 3% slower at B16 H16 S1024, so masked problems keep one
// CTA per tile.
// Here by name only: the kernel change that makes it persistent made the one-CTA-per-tile kernels
// 3-5% slower on the H200 (D 128 S4096 -3.3%, D 64 -4.8%; R2UR 4 -> 15 in the D 128 kernel).
#include "sm90_attention_launch.cuh"

namespace tessel::kernel::detail {

AttentionInstance sm90_attention_instance_bf16_d128_k128_persistent() {
  return make_sm90_attention_instance<Sm90AttentionConfig<bfloat16_t, 128, 128, /*BlkN=*/128, /*Stages=*/2, /*PingPong=*/true,
                                                           /*ConsumerWarpgroups=*/2, /*Persistent=*/true>>();
}

}  // namespace tessel::kernel::detail
