// src/gemm/sm80_bf16_64x64x64.cu -- sm_80 tensor-core GEMM, bf16 inputs, bf16 or fp32 output: CTA tile
// 64x64x64, 2x2 warps, 3 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_bf16_64x64x64() {
  using Config = collective::Sm80GemmConfig<bfloat16_t, 64, 64, 64, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/3>;
  return make_sm80_instance<Config, bfloat16_t>();
}

}  // namespace tessel::kernel::detail
