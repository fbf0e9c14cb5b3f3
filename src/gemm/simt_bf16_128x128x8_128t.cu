// src/gemm/simt_bf16_128x128x8_128t.cu -- simt_128x128x8_128t for bf16 inputs: bf16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_bf16_128x128x8_128t(DType c_type) {
  using Tile = SimtTile128x128x8_128t;
  if (c_type == DType::bf16) return make_simt_instance<SimtPipelinedKernel<Tile, __nv_bfloat16, __nv_bfloat16>, Tile>();
  if (c_type == DType::f32) return make_simt_instance<SimtPipelinedKernel<Tile, __nv_bfloat16, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
