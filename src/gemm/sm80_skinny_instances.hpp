// src/gemm/sm80_skinny_instances.hpp -- the compiled sm_80 skinny GEMM instances, as the host
// adapter (sm80_gemm.cpp, plain C++) sees them.
//
// sm80_skinny_bf16.cu and sm80_skinny_f16.cu each compile the three small-side tiles (16, 32 and
// 64 rows; tessel/gemm/kernel/sm80_skinny_gemm.hpp) of their input type.
#pragma once

#include <tessel/gemm/kernel/sm80_skinny_gemm_params.hpp>

#include <cuda_runtime_api.h>

namespace tessel::kernel::detail {

struct Sm80SkinnyInstance {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int threads = 0, stages = 0;
  int smem_bytes = 0;
  int element_bytes = 0;
  // Launches grid tiles_m * splits * tiles_n * batch. Pre: p complete.
  cudaError_t (*launch)(Sm80SkinnyParams const& p, cudaStream_t stream) = nullptr;
  cudaError_t (*attributes)(cudaFuncAttributes* attr) = nullptr;
  // CTAs of this kernel one SM of the current device holds at once.
  cudaError_t (*ctas_per_sm)(int* ctas) = nullptr;
};

// tile_m: 16, 32 or 64 (anything else: 64).
Sm80SkinnyInstance sm80_skinny_instance_bf16(int tile_m);
Sm80SkinnyInstance sm80_skinny_instance_f16(int tile_m);

}  // namespace tessel::kernel::detail
