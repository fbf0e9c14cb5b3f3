// src/gemm/sm90_grouped_launch.cuh -- launching one sm_90a grouped GEMM configuration (included by
// the per-configuration TUs sm90_grouped_{bf16,f16}.cu only, each of which instantiates one kernel).
#pragma once

#include "sm90_grouped_instances.hpp"

#include <tessel/gemm/kernel/sm90_grouped_gemm.hpp>

namespace tessel::kernel::detail {

template <class Config>
cudaError_t sm90_grouped_prepare_launch() {
  return cudaFuncSetAttribute(&sm90_grouped_gemm_kernel<Config>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              Config::SmemBytes);
}

template <class Config>
cudaError_t sm90_grouped_launch(Sm90GroupedGemmParams const& p, int grid, cudaStream_t stream) {
  if (cudaError_t err = sm90_grouped_prepare_launch<Config>(); err != cudaSuccess) return err;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(grid), 1, 1);
  cfg.blockDim = dim3(Config::Threads, 1, 1);
  cfg.dynamicSmemBytes = Config::SmemBytes;
  cfg.stream = stream;
  // Programmatic dependent launch: the CTAs may start while the kernel before them (the router
  // that wrote the offsets, say) finishes; they wait in griddepcontrol.wait before reading memory.
  cudaLaunchAttribute attr[1]{};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, &sm90_grouped_gemm_kernel<Config>, p);
}

template <class Config>
cudaError_t sm90_grouped_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm90_grouped_gemm_kernel<Config>);
}

template <class Config>
cudaError_t sm90_grouped_ctas_per_sm(int* ctas) {
  if (cudaError_t err = sm90_grouped_prepare_launch<Config>(); err != cudaSuccess) return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, &sm90_grouped_gemm_kernel<Config>, Config::Threads,
                                                       Config::SmemBytes);
}

template <class Config>
Sm90GroupedInstance make_sm90_grouped_instance() {
  Sm90GroupedInstance t;
  t.tile_m = Config::TileM, t.tile_n = Config::TileN, t.tile_k = Config::TileK, t.stages = Config::Stages;
  t.launch = sm90_grouped_launch<Config>, t.attributes = sm90_grouped_attributes<Config>;
  t.ctas_per_sm = sm90_grouped_ctas_per_sm<Config>;
  return t;
}

}  // namespace tessel::kernel::detail
