// src/gemm/simt_f16_128x128x8_128t.cu -- simt_128x128x8_128t for fp16 inputs: fp16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_f16_128x128x8_128t(DType c_type) {
  using Tile = SimtTile128x128x8_128t;
  if (c_type == DType::f16) return make_simt_instance<SimtPipelinedKernel<Tile, __half, __half>, Tile>();
  if (c_type == DType::f32) return make_simt_instance<SimtPipelinedKernel<Tile, __half, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
