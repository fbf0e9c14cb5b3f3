// src/gemm/sm90_f16_128x256x64_c2.cu -- sm_90a GEMM, f16: 128x256x64 tiles, 3 stages + TMA-store staging, cluster 2x1.
// The heuristic's pick for large f16 problems: it carries the lean fused build (bias, activation).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_f16_128x256x64_c2() {
  return make_sm90_instance<Sm90GemmConfig<half_t, 256, 3, 2>, Sm90Build::lean_fused>();
}

}  // namespace tessel::kernel::detail
