// src/gemm/simt_fp8_128x128x8_128t.cu -- simt_128x128x8_128t for fp8 inputs (e4m3 or e5m2 per
// operand, chosen at run time through RuntimeFp8): bf16, fp16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_fp8_128x128x8_128t(DType c_type) {
  using Tile = SimtTile128x128x8_128t;
  if (c_type == DType::bf16) return make_simt_instance<SimtPipelinedKernel<Tile, RuntimeFp8, __nv_bfloat16>, Tile>();
  if (c_type == DType::f16) return make_simt_instance<SimtPipelinedKernel<Tile, RuntimeFp8, __half>, Tile>();
  if (c_type == DType::f32) return make_simt_instance<SimtPipelinedKernel<Tile, RuntimeFp8, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
