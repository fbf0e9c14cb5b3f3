// src/gemm/sm90_bf16_64x16x64_c2.cu -- sm_90a GEMM, bf16: as sm90_bf16_64x16x64 in 2x1 clusters: the two CTAs
// (consecutive 64-row tiles) multicast 8-row halves of the 16-row B tile, so the narrow operand, which every CTA
// reads whole, is read from L2 once per pair.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_64x16x64_c2() {
  using Config = Sm90GemmConfig<bfloat16_t, 16, /*Stages=*/21, /*ClusterM=*/2, /*ClusterN=*/1, Sm90Accumulation::Fast,
                                /*EpilogueSlabs=*/1, /*PromotionKTiles=*/1, /*LoadsC=*/false, /*Consumers=*/1>;
  return make_sm90_instance<Config>();
}

}  // namespace tessel::kernel::detail
