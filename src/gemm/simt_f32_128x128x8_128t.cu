// src/gemm/simt_f32_128x128x8_128t.cu -- simt_128x128x8_128t for fp32 (and tf32) inputs: fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_f32_128x128x8_128t(DType c_type) {
  using Tile = SimtTile128x128x8_128t;
  if (c_type == DType::f32) return make_simt_instance<SimtPipelinedKernel<Tile, float, float>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
