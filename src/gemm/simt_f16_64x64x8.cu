// src/gemm/simt_f16_64x64x8.cu -- simt_64x64x8 for fp16 inputs: fp16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_f16_64x64x8(DType c_type) {
  using Tile = SimtTile64x64x8;
  if (c_type == DType::f16) return make_simt_instance<SimtDoubleBufferedKernel<Tile, __half, __half>, Tile>();
  if (c_type == DType::f32) return make_simt_instance<SimtDoubleBufferedKernel<Tile, __half, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
