// src/gemm/simt_f32_64x64x8.cu -- simt_64x64x8 for fp32 (and tf32) inputs: fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_f32_64x64x8(DType c_type) {
  using Tile = SimtTile64x64x8;
  if (c_type == DType::f32) return make_simt_instance<SimtDoubleBufferedKernel<Tile, float, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
