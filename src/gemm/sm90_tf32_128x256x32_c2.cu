// src/gemm/sm90_tf32_128x256x32_c2.cu -- sm_90a GEMM, tf32 (fp32 operands, fp32 D): 128x256x32 tiles
// (one 128-byte swizzle row of fp32 per k-tile), 4 stages, cluster 2x1, wgmma m64n256k8. TMA rounds
// the operands to tf32 on their way into shared memory (tensor maps of type TFLOAT32); D leaves from
// registers (the staging buffer is for 16-bit D only).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_tf32_128x256x32_c2() {
  return make_sm90_instance<Sm90GemmConfig<tfloat32_t, 256, 4, 2, 1, Sm90Accumulation::Fast, 2>>();
}

}  // namespace tessel::kernel::detail
