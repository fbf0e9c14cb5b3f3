// src/gemm/sm80_instances.hpp -- the compiled sm_80 tensor-core GEMM instances and the operand
// staging kernels, as the host adapter (sm80_gemm.cpp, plain C++) sees them.
//
// Each sm80_<dtype>_<tile>.cu compiles one configuration (tessel/gemm/kernel/sm80_gemm.hpp) and
// defines its sm80_instance_* function; sm80_stage.cu compiles the staging copies.
#pragma once

#include <tessel/gemm/kernel/sm80_gemm_params.hpp>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tessel::kernel::detail {

struct Sm80Instance {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int warps_m = 0, warps_n = 0;  // the warps' arrangement over the tile (threads = 32 warps_m warps_n)
  int stages = 0;
  int threads = 0;
  int smem_bytes = 0;
  int element_bytes = 0;  // of A and B (2: bf16/fp16, 4: tf32)
  // Launches the kernel on grid (tiles * batch, 1, splits). Pre: p complete, splits >= 1.
  cudaError_t (*launch)(Sm80GemmParams const& p, cudaStream_t stream) = nullptr;
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
};

// clang-format off
Sm80Instance sm80_instance_bf16_128x256x64();
Sm80Instance sm80_instance_bf16_128x128x32();
Sm80Instance sm80_instance_bf16_64x64x64();
Sm80Instance sm80_instance_f16_128x128x32();
Sm80Instance sm80_instance_f16_64x64x64();
Sm80Instance sm80_instance_tf32_128x128x32();
Sm80Instance sm80_instance_tf32_64x64x32();
// clang-format on

// An operand copied into the form the kernels read: dst[b][r][k] (rows x kp, K-major, kp a multiple
// of 16 bytes) = src element (r, k) of batch b at src + b*src_batch + r*src_row + k*src_k, for
// k < K; zero for K <= k < kp.
struct Sm80StageParams {
  void const* src = nullptr;
  std::int64_t src_batch = 0, src_row = 0, src_k = 0;  // element strides
  void* dst = nullptr;
  std::int64_t rows = 0, k = 0, kp = 0;
  int batch = 1;
  int element_bytes = 2;  // 1, 2 or 4
};
// Stages `count` (1 or 2) operands; K-major ones (src_k == 1) of one element size share a launch.
cudaError_t sm80_stage_operands(Sm80StageParams const* ops, int count, cudaStream_t stream);

}  // namespace tessel::kernel::detail
