// src/gemm/sm90_e4m3_128x256x128_c2_promote2.cu -- sm_90a GEMM, fp8: 256-wide tiles, 128-deep k-tiles, 4 stages, cluster 2x1, a two-slab epilogue, Promoted accumulation every 2 k-tiles (256 products) in two 128-column halves.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x256x128_c2_promote2() {
  return make_sm90_instance<Sm90GemmConfig<float_e4m3_t, 256, 4, 2, 1, Sm90Accumulation::Promoted, 2, 2>>();
}

}  // namespace tessel::kernel::detail
