// src/gemm/sm80_skinny_f16.cu -- sm_80 skinny tensor-core GEMM, fp16 inputs, fp16 or fp32 output: small
// side 16, 32 or 64 rows, 128-column strips, 64-deep k-tiles, 4 warps (sm80_skinny_launch.cuh).
#include "sm80_skinny_launch.cuh"

namespace tessel::kernel::detail {

Sm80SkinnyInstance sm80_skinny_instance_f16(int tile_m) { return make_sm80_skinny_instance<half_t>(tile_m); }

}  // namespace tessel::kernel::detail
