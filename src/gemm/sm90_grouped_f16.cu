// src/gemm/sm90_grouped_f16.cu -- sm_90a grouped GEMM, f16 inputs: 128x256x64 tiles, 3 stages + TMA-store staging.
#include "sm90_grouped_launch.cuh"

namespace tessel::kernel::detail {

Sm90GroupedInstance sm90_grouped_instance_f16() { return make_sm90_grouped_instance<Sm90GroupedGemmConfig<half_t, 256, 3>>(); }

}  // namespace tessel::kernel::detail
