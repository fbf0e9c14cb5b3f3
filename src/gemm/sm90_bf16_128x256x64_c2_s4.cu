// src/gemm/sm90_bf16_128x256x64_c2_s4.cu -- sm_90a GEMM, bf16: 128x256x64 tiles, 4 stages, cluster 2x1; the epilogue
// stages each tile in two 128-column slabs (a 32 KiB buffer instead of 64) to make room for the fourth stage. The
// heuristic's pick for large bf16 problems: it carries the lean fused build (bias, activation).
#include "sm90_launch.cuh"

namespace tessel::kernel::detail {

Sm90Instance sm90_instance_bf16_128x256x64_c2_s4() {
  return make_sm90_instance<Sm90GemmConfig<bfloat16_t, 256, 4, 2, 1, Sm90Accumulation::Fast, 2>, Sm90Build::lean_fused>();
}

}  // namespace tessel::kernel::detail
