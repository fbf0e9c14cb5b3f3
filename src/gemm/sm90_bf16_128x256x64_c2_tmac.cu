// src/gemm/sm90_bf16_128x256x64_c2_tmac.cu -- sm_90a GEMM, bf16: 128x256x64 tiles, 3 stages + TMA-store staging,
// cluster 2x1, and C (read when beta != 0) loaded by TMA into the staging buffer during the mainloop.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x256x64_c2_tmac() {
  return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 256, 3, 2, 1, Sm90Accumulation::Fast, 1, 1, true>>();
}

}  // namespace tessel::kernel::detail
