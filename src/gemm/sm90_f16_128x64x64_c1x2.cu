// src/gemm/sm90_f16_128x64x64_c1x2.cu -- sm_90a GEMM, fp16: 128x64x64 tiles, 8 stages, cluster 1x2 (as the bf16
// instance: a D 65 to 128 wide, whose long operand leaves L2 once for the two tile columns).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_128x64x64_c1x2() { return make_sm90_instance<Sm90GemmConfig<half_t, 64, 8, 1, 2>>(); }

}  // namespace tessel::kernel::detail
