// src/gemm/sm90_e4m3_128x192x128_c2_fastacc.cu -- sm_90a GEMM, fp8: 192-wide tiles, 128-deep k-tiles, 4 stages, cluster 2x1, Fast accumulation.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x192x128_c2_fastacc() {
  return make_sm90_instance<Sm90GemmConfig<float_e4m3_t, 192, 4, 2, 1, Sm90Accumulation::Fast>>();
}

}  // namespace tessel::kernel::detail
