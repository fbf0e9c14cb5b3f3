// src/attention/sm80_attention_launch.cuh -- launching one sm_80 attention configuration
// (included by the per-configuration TUs only, each of which instantiates one kernel).
#pragma once

#include "attention_instances.hpp"

#include <tessel/attention/kernel/sm80_attention.hpp>

#include <string>

namespace tessel::kernel::detail {

template <class Config>
Status sm80_attention_launch(AttentionArguments const& args, AttentionParams const& p, cudaStream_t stream) {
  constexpr int smem = Config::SmemBytes;
  auto* kernel = &sm80_attention_kernel<Config>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err == cudaSuccess) {
    dim3 const grid(static_cast<unsigned>(p.m_blocks), static_cast<unsigned>(p.heads), static_cast<unsigned>(args.batch));
    kernel<<<grid, Config::Threads, smem, stream>>>(p);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) return Status::error(StatusCode::cuda_error, std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
  return Status::success();
}

template <class Config>
cudaError_t sm80_attention_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_attention_kernel<Config>);
}

template <class Config>
AttentionInstance make_sm80_attention_instance() {
  return {Config::D, Config::Dv, Config::BlkM, Config::BlkN, Config::Threads, Config::SmemBytes,
          sm80_attention_launch<Config>, sm80_attention_attributes<Config>};
}

}  // namespace tessel::kernel::detail
