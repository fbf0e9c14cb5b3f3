// src/gemm/sm90_bf16_128x128x64_pingpong_c2.cu -- sm_90a GEMM, bf16, ping-pong schedule: the two consumer
// warpgroups take 128x128x64 tiles in turn, 5 stages + a 32 KiB staging buffer per consumer, cluster 2x1.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x128x64_pingpong_c2() {
  return make_sm90_instance<Sm90PingpongConfig<bfloat16_t, 128, 128, 5, 2>>();
}

}  // namespace tessel::kernel::detail
