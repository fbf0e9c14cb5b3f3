// src/gemm/simt_gemm_fp8.cu -- SIMT GEMM instances for fp8 inputs (e4m3 or e5m2 per operand,
// chosen at run time through RuntimeFp8): bf16, fp16 or fp32 out.
#include "simt_launch.cuh"

namespace tessel::kernel::detail {

SimtInstance simt_instance_fp8(SimtTileShape tile, DType c_type) {
  if (c_type == DType::bf16) return make_simt_instance<RuntimeFp8, __nv_bfloat16>(tile);
  if (c_type == DType::f16) return make_simt_instance<RuntimeFp8, __half>(tile);
  if (c_type == DType::f32) return make_simt_instance<RuntimeFp8, float>(tile);
  return {};
}

}  // namespace tessel::kernel::detail
