// src/gemm/sm90_f16_64x64x64_promoted.cu -- sm_90a GEMM, f16: as sm90_f16_64x64x64 with promoted accumulation (each
// k-tile's wgmma result added to fp32 registers) for an fp32 D with a long K, where the tensor core's own sum drifted
// past cuBLAS's error (docs/sm90_gemm.md, "Accuracy of long, unsplit K"); MN-major operands are staged.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_64x64x64_promoted() {
  using Config = Sm90GemmConfig<half_t, 64, /*Stages=*/12, /*ClusterM=*/1, /*ClusterN=*/1, Sm90Accumulation::Promoted,
                                /*EpilogueSlabs=*/1, /*PromotionKTiles=*/1, /*LoadsC=*/false, /*Consumers=*/1>;
  return make_sm90_instance<Config>();
}

}  // namespace tessel::kernel::detail
