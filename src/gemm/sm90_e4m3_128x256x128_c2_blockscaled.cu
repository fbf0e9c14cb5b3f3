// src/gemm/sm90_e4m3_128x256x128_c2_blockscaled.cu -- sm_90a GEMM, fp8 with block scales (1 x 128
// for A, 128 x 128 for B): the sm90_e4m3_128x256x128_c2 configuration (256-wide tiles, 128-deep
// k-tiles, 4 stages, cluster 2x1, promoted every k-tile in two 128-column halves, two-slab
// epilogue) with each half's partial scaled by its rows' and its column block's scales as it joins
// the sum (kernel/sm90_gemm_block_scales.hpp).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_e4m3_128x256x128_c2_blockscaled() {
  return make_sm90_instance<
      Sm90GemmConfig<float_e4m3_t, 256, 4, 2, 1, Sm90Accumulation::Promoted, 2, 1, false, 2, Sm90Build::general, true>>();
}

}  // namespace tessel::kernel::detail
