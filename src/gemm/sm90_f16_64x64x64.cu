// src/gemm/sm90_f16_64x64x64.cu -- sm_90a GEMM, fp16: 64x64x64 tiles, one consumer warpgroup, 12 stages,
// cluster 1x1 (skinny problems: a narrow side of at most 64; the 64-row tiles put twice as many CTAs
// as 128x64x64 on the long operand, each streaming it through a deep TMA pipeline).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_64x64x64() {
  using Config = Sm90GemmConfig<half_t, 64, /*Stages=*/12, /*ClusterM=*/1, /*ClusterN=*/1, Sm90Accumulation::Fast,
                                /*EpilogueSlabs=*/1, /*PromotionKTiles=*/1, /*LoadsC=*/false, /*Consumers=*/1>;
  return make_sm90_instance<Config>();
}

}  // namespace tessel::kernel::detail
