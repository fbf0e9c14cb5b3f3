// src/gemm/sm80_f16_128x256x32.cu -- sm_80 tensor-core GEMM, fp16 inputs, fp16 or fp32 output: CTA tile
// 128x256x32, 2x4 warps, 4 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_f16_128x256x32() {
  using Config = collective::Sm80GemmConfig<half_t, 128, 256, 32, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/4>;
  return make_sm80_instance<Config, half_t>();
}

}  // namespace tessel::kernel::detail
