// src/gemm/sm90_bf16_128x64x64_promoted_c1x2.cu -- sm_90a GEMM, bfp16: 128x64x64 tiles, 8 stages, cluster 1x2, promoted
// accumulation (each k-tile's products added to fp32 registers): the 1x2 kernel for an fp32 D with a long K.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x64x64_promoted_c1x2() {
  return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 64, 8, 1, 2, Sm90Accumulation::Promoted>>();
}

}  // namespace tessel::kernel::detail
