// src/gemm/simt_instances.hpp -- the compiled SIMT GEMM instances (one dtype family per TU).
//
// simt_gemm_f32.cu, simt_gemm_f16.cu, simt_gemm_bf16.cu and simt_gemm_fp8.cu each instantiate
// the kernels of tessel/gemm/kernel/simt_gemm.hpp for their input dtype, every output dtype the
// API allows with it, both CTA tiles and the four operand orders (simt_gemm_f32.cu also the
// cp.async kernel of simt_gemm_cp_async.hpp). The fp8 instances read RuntimeFp8 operands: each
// operand's format (e4m3/e5m2) is a flag in SimtGemmParams, so one set serves every fp8 pair.
// gemm.cpp (plain C++) reaches them through this table.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

// The kernels compiled: register-staged 128x128x8 (256 threads) and 64x64x8 (64 threads), every
// dtype; the fp32-only cp.async multistage 128x128x8. All 8x8 outputs per thread.
enum class SimtTileShape { t128x128x8, t64x64x8, t128x128x8_cp_async };

struct SimtInstance {
  int bm = 0, bn = 0;
  cudaError_t (*launch)(SimtGemmParams p, cudaStream_t stream) = nullptr;  // fills tiles_m/n
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
};

// Empty (launch == nullptr) when the dtype pair is not compiled.
SimtInstance simt_instance_f32(SimtTileShape tile, DType c_type);
SimtInstance simt_instance_f16(SimtTileShape tile, DType c_type);
SimtInstance simt_instance_bf16(SimtTileShape tile, DType c_type);
SimtInstance simt_instance_fp8(SimtTileShape tile, DType c_type);  // e4m3 and e5m2 operands

// Seed 004's kernel written with tessel tensors (tensor_simt_f32.cu): fp32, any strides.
// Pre: M < 2^31 * 128, N <= 65535 * 128.
cudaError_t launch_tensor_simt(GemmArguments const& args, cudaStream_t stream);
cudaError_t tensor_simt_attributes(cudaFuncAttributes* attr);

// D = beta * C (or 0 when beta == 0) in place of a product: K = 0 or alpha = 0. Any order.
cudaError_t launch_gemm_scale(GemmArguments const& args, cudaStream_t stream);

}  // namespace tessel::kernel::detail
