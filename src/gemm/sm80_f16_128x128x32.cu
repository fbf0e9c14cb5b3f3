// src/gemm/sm80_f16_128x128x32.cu -- sm_80 tensor-core GEMM, fp16 inputs, fp16 or fp32 output: CTA tile
// 128x128x32, 2x2 warps, 4 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_f16_128x128x32() {
  using Config = collective::Sm80GemmConfig<half_t, 128, 128, 32, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/4>;
  return make_sm80_instance<Config, half_t>();
}

}  // namespace tessel::kernel::detail
