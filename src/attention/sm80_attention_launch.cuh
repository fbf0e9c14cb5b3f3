// src/attention/sm80_attention_launch.cuh -- launching one sm_80 attention configuration
// (included by the per-configuration TUs only, each of which instantiates one kernel).
#pragma once

#include "sm80_attention_instances.hpp"

#include <tessel/attention/kernel/sm80_attention.hpp>

namespace tessel::kernel::detail {

template <class Config>
cudaError_t sm80_attention_launch(Sm80AttentionParams const& p, int batch, cudaStream_t stream) {
  constexpr int smem = Config::SmemBytes;
  auto* kernel = &sm80_attention_kernel<Config>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  dim3 const grid(static_cast<unsigned>(p.m_blocks), static_cast<unsigned>(p.heads), static_cast<unsigned>(batch));
  kernel<<<grid, Config::Threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Config>
cudaError_t sm80_attention_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_attention_kernel<Config>);
}

template <class Config>
Sm80AttentionInstance make_sm80_attention_instance() {
  return {Config::D, Config::Dv, Config::BlkM, Config::BlkN, Config::Threads, Config::SmemBytes,
          sm80_attention_launch<Config>, sm80_attention_attributes<Config>};
}

}  // namespace tessel::kernel::detail
