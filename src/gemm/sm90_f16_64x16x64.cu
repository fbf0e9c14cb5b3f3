// src/gemm/sm90_f16_64x16x64.cu -- sm_90a GEMM, f16: 64x16x64 tiles, one consumer warpgroup, 21 stages, cluster 1x1
// (skinny problems with a narrow side of at most 16: a stage carries the long operand's 8 KiB and only 2 KiB of the
// narrow one, so more of the long operand is in flight than with 64-wide tiles; each k-tile's products added to fp32
// registers -- promoted accumulation: the tensor core's own sum over a long K drifted 3-15x past cuBLAS's error with
// an fp32 D, docs/sm90_gemm.md "Accuracy of long, unsplit K"; D from registers).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_64x16x64() {
  using Config = Sm90GemmConfig<half_t, 16, /*Stages=*/21, /*ClusterM=*/1, /*ClusterN=*/1, Sm90Accumulation::Promoted,
                                /*EpilogueSlabs=*/1, /*PromotionKTiles=*/1, /*LoadsC=*/false, /*Consumers=*/1>;
  return make_sm90_instance<Config>();
}

}  // namespace tessel::kernel::detail
