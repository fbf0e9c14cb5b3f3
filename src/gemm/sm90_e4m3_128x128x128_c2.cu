// src/gemm/sm90_e4m3_128x128x128_c2.cu -- sm_90a GEMM, fp8 e4m3 x e4m3: 128-wide tiles, 128-deep k-tiles, 5 stages, cluster 2x1, Promoted accumulation.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x128x128_c2() {
  return make_sm90_instance<Sm90GemmConfig<float_e4m3_t, 128, 5, 2, 1, Sm90Accumulation::Promoted>>();
}

}  // namespace tessel::kernel::detail
