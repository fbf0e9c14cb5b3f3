// src/gemm/sm90_f16_128x64x64.cu -- sm_90a GEMM, f16: 128x64x64 tiles, 8 stages, cluster 1x1 (skinny problems:
// a narrow side of at most 64 streams the long operand through a deep TMA pipeline).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_128x64x64() { return make_sm90_instance<Sm90GemmConfig<half_t, 64, 8, 1>>(); }

}  // namespace tessel::kernel::detail
