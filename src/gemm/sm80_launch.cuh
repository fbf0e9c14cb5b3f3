// src/gemm/sm80_launch.cuh -- launching one sm_80 GEMM configuration (included by the per-
// configuration TUs only, each of which instantiates one kernel).
#pragma once

#include "sm80_instances.hpp"

#include <tessel/gemm/kernel/sm80_gemm.hpp>
#include <tessel/gemm/kernel/sm80_gemm_persistent.hpp>

#include <algorithm>

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
  return {Config::TileM, Config::TileN, Config::TileK, Config::Threads, Sm80Gemm<Config, ElementOut16>::SmemBytes,
          int(sizeof(typename Config::Element)), sm80_launch<Config, ElementOut16>, sm80_attributes<Config, ElementOut16>};
}

// The persistent kernel (kernel/sm80_gemm_persistent.hpp): as many CTAs as can be resident, at
// most one per unit of work.
template <class Config, class ElementOut16, int CtasPerSm>
cudaError_t sm80_launch_persistent(Sm80GemmParams const& p, cudaStream_t stream) {
  using G = Sm80GemmPersistent<Config, ElementOut16, CtasPerSm>;
  constexpr int smem = G::SmemBytes;
  auto* kernel = &sm80_gemm_persistent_kernel<Config, ElementOut16, CtasPerSm>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  int device = 0, sms = 0, resident = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
  if (cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); err != cudaSuccess) return err;
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Config::Threads, smem); err != cudaSuccess)
    return err;
  if (resident < 1) return cudaErrorInvalidConfiguration;
  std::int64_t const units = std::int64_t(p.tiles_m) * p.tiles_n * p.batch * p.splits;
  std::int64_t const ctas = std::min<std::int64_t>(units, std::int64_t(sms) * resident);
  if (ctas == 0) return cudaSuccess;
  kernel<<<dim3(static_cast<unsigned>(ctas), 1, 1), Config::Threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Config, class ElementOut16, int CtasPerSm>
cudaError_t sm80_attributes_persistent(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_gemm_persistent_kernel<Config, ElementOut16, CtasPerSm>);
}

template <class Config, class ElementOut16, int CtasPerSm>
Sm80Instance make_sm80_persistent_instance() {
  return {Config::TileM,
          Config::TileN,
          Config::TileK,
          Config::Threads,
          Sm80GemmPersistent<Config, ElementOut16, CtasPerSm>::SmemBytes,
          int(sizeof(typename Config::Element)),
          sm80_launch_persistent<Config, ElementOut16, CtasPerSm>,
          sm80_attributes_persistent<Config, ElementOut16, CtasPerSm>};
}

}  // namespace tessel::kernel::detail
