// src/gemm/simt_gemm_f16.cu -- SIMT GEMM instances for fp16 inputs: fp16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_instance_f16(SimtTileShape tile, DType c_type) {
  if (c_type == DType::f16) return make_simt_instance<__half, __half>(tile);
  if (c_type == DType::f32) return make_simt_instance<__half, float>(tile);
  return {};
}

}  // namespace tessel::kernel::detail
