// src/gemm/sm90_grouped_instances.hpp -- the compiled sm_90a grouped GEMM instances as the host
// adapter (grouped_gemm.cpp, plain C++) sees them: one configuration per input type
// (sm90_grouped_{bf16,f16}.cu, tessel/gemm/kernel/sm90_grouped_gemm.hpp), for sm_90a only.
#pragma once

#include <tessel/gemm/kernel/sm90_grouped_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct Sm90GroupedInstance {
  int tile_m = 0, tile_n = 0, tile_k = 0, stages = 0;
  // Launches `grid` CTAs (one per SM at most) that walk every group's tiles. Pre: p complete.
  cudaError_t (*launch)(Sm90GroupedGemmParams const& p, int grid, cudaStream_t stream) = nullptr;
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
  // How many of its CTAs fit one SM of the current device.
  cudaError_t (*ctas_per_sm)(int* ctas) = nullptr;
};

Sm90GroupedInstance sm90_grouped_instance_bf16();
Sm90GroupedInstance sm90_grouped_instance_f16();

}  // namespace tessel::kernel::detail
