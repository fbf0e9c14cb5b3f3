// src/gemm/sm90_e4m3_128x192x128_c2.cu -- sm_90a GEMM, fp8 e4m3 x e4m3: 192-wide tiles, 128-deep k-tiles, 4 stages, cluster 2x1, Promoted accumulation (one partial tile).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x192x128_c2() {
  return make_sm90_instance<Sm90GemmConfig<float_e4m3_t, 192, 4, 2, 1, Sm90Accumulation::Promoted>>();
}

}  // namespace tessel::kernel::detail
