// src/gemm/sm80_bf16_256x128x32.cu -- sm_80 tensor-core GEMM, bf16 inputs, bf16 or fp32 output: CTA tile
// 256x128x32, 4x2 warps, 4 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_bf16_256x128x32() {
  using Config = collective::Sm80GemmConfig<bfloat16_t, 256, 128, 32, /*WarpsM=*/4, /*WarpsN=*/2, /*Stages=*/4>;
  return make_sm80_instance<Config, bfloat16_t>();
}

}  // namespace tessel::kernel::detail
