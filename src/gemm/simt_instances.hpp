// src/gemm/simt_instances.hpp -- the compiled SIMT GEMM instances (one configuration and input
// dtype family per TU).
//
// src/gemm/simt_<family>_<configuration>.cu instantiates one configuration's kernel for one input
// dtype family (f32: fp32 and tf32; f16; bf16; fp8: e4m3 and e5m2), every output dtype the API
// allows with it and the four operand orders. The fp8 instances read RuntimeFp8 operands: each
// operand's format (e4m3/e5m2) is a flag in SimtGemmParams, so one set serves every fp8 pair.
// gemm.cpp (plain C++) reaches them through these functions.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

// The configurations compiled, each a registry entry of the same name:
//   t128x128x8_128t      simt_gemm_pipelined.hpp, register-staged, 128 threads, 16x8 per thread; every dtype
//   t64x64x8             simt_gemm.hpp, 64 threads, 8x8 per thread; every dtype
//   t128x128x8_cp_async  simt_gemm_cp_async.hpp, 3 stages, 256 threads, 8x8 per thread; fp32 only
enum class SimtTileShape { t128x128x8_128t, t64x64x8, t128x128x8_cp_async };

struct SimtInstance {
  int bm = 0, bn = 0;
  cudaError_t (*launch)(SimtGemmParams p, cudaStream_t stream) = nullptr;  // fills tiles_m/n
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
};

// One per TU; empty (launch == nullptr) when c_type is not compiled for the family.
SimtInstance simt_f32_128x128x8_128t(DType c_type);
SimtInstance simt_f16_128x128x8_128t(DType c_type);
SimtInstance simt_bf16_128x128x8_128t(DType c_type);
SimtInstance simt_fp8_128x128x8_128t(DType c_type);
SimtInstance simt_f32_64x64x8(DType c_type);
SimtInstance simt_f16_64x64x8(DType c_type);
SimtInstance simt_bf16_64x64x8(DType c_type);
SimtInstance simt_fp8_64x64x8(DType c_type);
SimtInstance simt_f32_cp_async_128x128x8(DType c_type);

// Seed 004's kernel written with tessel tensors (tensor_simt_f32.cu): fp32, any strides.
// Pre: M < 2^31 * 128, N <= 65535 * 128.
cudaError_t launch_tensor_simt(GemmArguments const& args, cudaStream_t stream);
cudaError_t tensor_simt_attributes(cudaFuncAttributes* attr);

// D = beta * C (or 0 when beta == 0) in place of a product: K = 0 or alpha = 0. Any order.
cudaError_t launch_gemm_scale(GemmArguments const& args, cudaStream_t stream);

}  // namespace tessel::kernel::detail
