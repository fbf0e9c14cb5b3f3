// src/gemm/sm90_e4m3_128x256x128_c2.cu -- sm_90a GEMM, fp8: 256-wide tiles, 128-deep k-tiles, 4 stages, cluster 2x1, Promoted accumulation in two 128-column halves;
// the epilogue stages each tile in two 128-column slabs (room for the fourth stage).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x256x128_c2() {
  return make_sm90_instance<Sm90GemmConfig<float_e4m3_t, 256, 4, 2, 1, Sm90Accumulation::Promoted, 2>>();
}

}  // namespace tessel::kernel::detail
