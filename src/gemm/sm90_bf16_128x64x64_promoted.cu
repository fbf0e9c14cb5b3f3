// src/gemm/sm90_bf16_128x64x64_promoted.cu -- sm_90a GEMM, bf16: as sm90_bf16_128x64x64 with promoted accumulation (each
// k-tile's wgmma result added to fp32 registers) for an fp32 D with a long K (docs/sm90_gemm.md, "Accuracy of long,
// unsplit K"); MN-major operands are staged.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x64x64_promoted() {
  return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 64, 8, 1, 1, Sm90Accumulation::Promoted>>();
}

}  // namespace tessel::kernel::detail
