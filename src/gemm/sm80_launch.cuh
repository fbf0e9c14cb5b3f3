// src/gemm/sm80_launch.cuh -- launching one sm_80 GEMM configuration (included by the per-
// configuration TUs only, each of which instantiates one kernel).
#pragma once

#include "sm80_instances.hpp"

#include <tessel/gemm/kernel/sm80_gemm.hpp>

namespace tessel::kernel::detail {

template <class Config, class ElementOut16>
cudaError_t sm80_launch(Sm80GemmParams const& p, cudaStream_t stream) {
  constexpr int smem = Sm80Gemm<Config, ElementOut16>::SmemBytes;
  auto* kernel = &sm80_gemm_kernel<Config, ElementOut16>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  std::int64_t const ctas = std::int64_t(p.tiles_m) * p.tiles_n * p.batch;
  dim3 const grid(static_cast<unsigned>(ctas), 1, static_cast<unsigned>(p.splits));
  kernel<<<grid, Config::Threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Config, class ElementOut16>
cudaError_t sm80_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_gemm_kernel<Config, ElementOut16>);
}

template <class Config, class ElementOut16>
Sm80Instance make_sm80_instance() {
  return {Config::TileM, Config::TileN, Config::TileK, Config::WarpsM, Config::WarpsN, Config::Stages, Config::Threads,
          Sm80Gemm<Config, ElementOut16>::SmemBytes,
          int(sizeof(typename Config::Element)), sm80_launch<Config, ElementOut16>, sm80_attributes<Config, ElementOut16>};
}

}  // namespace tessel::kernel::detail
