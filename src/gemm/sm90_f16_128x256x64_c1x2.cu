// src/gemm/sm90_f16_128x256x64_c1x2.cu -- sm_90a GEMM, f16: 128x256x64 tiles, 3 stages + TMA-store staging, cluster 1x2
// (two tile columns share the A tile by multicast).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_128x256x64_c1x2() { return make_sm90_instance<Sm90GemmConfig<half_t, 256, 3, 1, 2>>(); }

}  // namespace tessel::kernel::detail
