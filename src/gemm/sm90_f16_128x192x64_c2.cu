// src/gemm/sm90_f16_128x192x64_c2.cu -- sm_90a GEMM, f16: 128x192x64 tiles, 4 stages + TMA-store staging, cluster 2x1.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_128x192x64_c2() { return make_sm90_instance<Sm90GemmConfig<half_t, 192, 4, 2>>(); }

}  // namespace tessel::kernel::detail
