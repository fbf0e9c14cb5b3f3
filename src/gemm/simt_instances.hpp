// src/gemm/simt_instances.hpp -- the compiled SIMT GEMM instances (one dtype family per TU).
//
// simt_gemm_f32.cu, simt_gemm_f16.cu and simt_gemm_bf16.cu each instantiate the kernel of
// tessel/gemm/kernel/simt_gemm.hpp for their input dtype, every output dtype the API allows
// with it, and both CTA tiles. gemm.cpp (plain C++) reaches them through this table.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

// The CTA tiles compiled: 128x128x8 with 256 threads, 64x64x8 with 64 threads (8x8 per thread).
enum class SimtTileShape { t128x128x8, t64x64x8 };

struct SimtInstance {
  int bm = 0, bn = 0;
  cudaError_t (*launch)(SimtGemmParams p, cudaStream_t stream) = nullptr;  // fills tiles_m/n
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
};

// Empty (launch == nullptr) when the dtype pair is not compiled.
SimtInstance simt_instance_f32(SimtTileShape tile, DType c_type);
SimtInstance simt_instance_f16(SimtTileShape tile, DType c_type);
SimtInstance simt_instance_bf16(SimtTileShape tile, DType c_type);

// D = beta * C (or 0 when beta == 0) in place of a product: K = 0 or alpha = 0. Any order.
cudaError_t launch_gemm_scale(GemmArguments const& args, cudaStream_t stream);

}  // namespace tessel::kernel::detail
