// src/gemm/sm90_bf16_128x64x64_c1x2.cu -- sm_90a GEMM, bf16: 128x64x64 tiles, 8 stages, cluster 1x2 (a D 65 to
// 128 wide: the two CTAs of a tile row multicast halves of the A strip they share, so the long operand
// leaves L2 once instead of twice).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x64x64_c1x2() { return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 64, 8, 1, 2>>(); }

}  // namespace tessel::kernel::detail
