// src/gemm/sm90_bf16_128x64x128.cu -- sm_90a GEMM, bf16: 128x64x128 tiles (two 128-byte boxes of K
// per k-tile, so each row of the long operand is read 256 contiguous bytes at a time), 4 stages,
// cluster 1x1: the skinny kernel's deep-k-tile variant.
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x64x128() {
  return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 64, 4, 1, 1, Sm90Accumulation::Fast, 1, 1, 2>>();
}

}  // namespace tessel::kernel::detail
