// src/gemm/sm80_f16_256x128x32.cu -- sm_80 tensor-core GEMM, fp16 inputs, fp16 or fp32 output: CTA tile
// 256x128x32, 4x2 warps, 4 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_f16_256x128x32() {
  using Config = collective::Sm80GemmConfig<half_t, 256, 128, 32, /*WarpsM=*/4, /*WarpsN=*/2, /*Stages=*/4>;
  return make_sm80_instance<Config, half_t>();
}

}  // namespace tessel::kernel::detail
