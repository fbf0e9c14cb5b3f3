// src/gemm/simt_gemm_f32.cu -- SIMT GEMM instances for fp32 (and tf32) inputs: fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_instance_f32(SimtTileShape tile, DType c_type) {
  if (c_type == DType::f32) return make_simt_instance<float, float>(tile);
  return {};
}

}  // namespace tessel::kernel::detail
