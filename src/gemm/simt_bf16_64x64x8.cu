// src/gemm/simt_bf16_64x64x8.cu -- simt_64x64x8 for bf16 inputs: bf16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_bf16_64x64x8(DType c_type) {
  using Tile = SimtTile64x64x8;
  if (c_type == DType::bf16) return make_simt_instance<SimtDoubleBufferedKernel<Tile, __nv_bfloat16, __nv_bfloat16>, Tile>();
  if (c_type == DType::f32) return make_simt_instance<SimtDoubleBufferedKernel<Tile, __nv_bfloat16, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
