// src/gemm/simt_f32_cp_async_128x128x8.cu -- simt_cp_async_128x128x8: fp32 (and tf32) inputs, fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_f32_cp_async_128x128x8(DType c_type) {
  using Tile = SimtTile128x128x8;
  if (c_type == DType::f32) return make_simt_instance<SimtCpAsyncKernel<Tile, /*Stages=*/3>, Tile>();
  return {};
}

}  // namespace tessel::kernel::detail
