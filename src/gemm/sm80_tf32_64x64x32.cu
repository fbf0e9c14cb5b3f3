// src/gemm/sm80_tf32_64x64x32.cu -- sm_80 tensor-core GEMM, fp32 inputs in tf32 mode, fp32 output: CTA tile
// 64x64x32, 2x2 warps, 3 stages.
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_tf32_64x64x32() {
  using Config = collective::Sm80GemmConfig<float, 64, 64, 32, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/3,
                                                collective::Sm80MainloopSchedule<false, false, collective::Tf32Rounding::nearest_even>>;
  return make_sm80_instance<Config, void>();
}

}  // namespace tessel::kernel::detail
