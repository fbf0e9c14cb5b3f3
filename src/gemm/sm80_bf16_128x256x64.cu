// src/gemm/sm80_bf16_128x256x64.cu -- sm_80 tensor-core GEMM, bf16 inputs, bf16 or fp32 output: CTA
// tile 128x256x64, 2x4 warps, 3 stages (144 KiB): half the k-tiles (barriers) of 128x256x32; interior
// tiles copy without predicates and spread the next k-tile's cp.async over the k-blocks (the
// schedule the sm_80 mainloop experiment measured fastest: 0.615x cuBLAS at 4096^3 on the H100,
// with the whole-tile epilogue).
#include "sm80_launch.cuh"

namespace tessel::kernel::detail {

Sm80Instance sm80_instance_bf16_128x256x64() {
  using Schedule = collective::Sm80MainloopSchedule</*UnpredicatedInterior=*/true, /*SpreadCopies=*/true>;
  using Config = collective::Sm80GemmConfig<bfloat16_t, 128, 256, 64, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/3, Schedule>;
  return make_sm80_instance<Config, bfloat16_t>();
}

}  // namespace tessel::kernel::detail
