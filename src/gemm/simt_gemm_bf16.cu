// src/gemm/simt_gemm_bf16.cu -- SIMT GEMM instances for bf16 inputs: bf16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_instance_bf16(SimtTileShape tile, DType c_type) {
  if (c_type == DType::bf16) return make_simt_instance<__nv_bfloat16, __nv_bfloat16>(tile);
  if (c_type == DType::f32) return make_simt_instance<__nv_bfloat16, float>(tile);
  return {};
}

}  // namespace tessel::kernel::detail
