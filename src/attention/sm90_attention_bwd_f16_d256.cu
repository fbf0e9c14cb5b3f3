// src/attention/sm90_attention_bwd_f16_d256.cu -- the sm_90a attention backward, f16, head dim 256
// (sm90_attention_backward.hpp, Config::ColumnSplit): query block 64, key block 64, both consumer
// warpgroups on the block's keys, each owning half of the columns of dK, dV and dQ; a Q/dO ring of
// 2 stages. Two kernels: the consumers sharing the score tiles (SharedScores), and each forming
// both itself, for a softcap (its dz/dt needs S^T where dS^T is formed). A TU of its own, so that
// it compiles beside the D 64 and 128 kernels.
#include "sm90_attention_bwd_launch.cuh"

namespace tessel::kernel::detail {

AttentionBackwardInstance sm90_attention_bwd_instance_f16_d256() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<half_t, 256, 2, false, 2, true>>();
}

AttentionBackwardInstance sm90_attention_bwd_instance_f16_d256_softcap() {
  return make_sm90_attention_bwd_instance<Sm90AttentionBackwardConfig<half_t, 256>>();
}

}  // namespace tessel::kernel::detail
