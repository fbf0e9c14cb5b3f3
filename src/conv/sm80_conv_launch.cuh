// src/conv/sm80_conv_launch.cuh -- launching one sm_80 convolution configuration (included by the
// per-configuration TUs only, each of which instantiates its kernels).
#pragma once

#include "sm80_conv_instances.hpp"

#include <tessel/conv/kernel/sm80_depthwise_conv.hpp>
#include <tessel/conv/kernel/sm80_implicit_gemm_conv.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

namespace tessel::kernel::detail {

// The implicit-GEMM configuration of every instance: 128x128x32 CTA tiles, 2x4 warps (64x32 warp
// tiles, 64 fp32 accumulators per thread), 4 stages (64 KiB of shared memory).
template <class Element, int Access>
using Sm80ConvDefaultConfig = Sm80ConvConfig<Element, 128, 128, 32, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/4, Access>;

template <class Config, conv::Operator Op>
cudaError_t sm80_conv_launch(Sm80ConvKernelParams const& kp, cudaStream_t stream) {
  constexpr int smem = Sm80ImplicitGemmConv<Config, Op>::SmemBytes;
  auto* kernel = &sm80_implicit_gemm_conv_kernel<Config, Op>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  dim3 const grid(static_cast<unsigned>(kp.tiles_m) * static_cast<unsigned>(kp.p.groups), static_cast<unsigned>(kp.tiles_n),
                  static_cast<unsigned>(kp.slices));
  kernel<<<grid, Config::Threads, smem, stream>>>(kp);
  return cudaGetLastError();
}

template <class Config, conv::Operator Op>
Sm80ConvInstance make_sm80_conv_instance() {
  return {Config::TileM, Config::TileN, Config::TileK, Config::Threads, Config::Access, sm80_conv_launch<Config, Op>};
}

template <class Config>
cudaError_t sm80_depthwise_launch(Sm80ConvKernelParams const& kp, cudaStream_t stream) {
  int const smem = Config::smem_bytes(kp.p.r * kp.p.s);
  auto* kernel = &sm80_depthwise_conv_kernel<Config>;
  unsigned const pixel_blocks = static_cast<unsigned>((static_cast<long long>(kp.gemm_m) + Config::Pixels - 1) / Config::Pixels);
  dim3 const grid(pixel_blocks, static_cast<unsigned>((kp.p.c + Config::Channels - 1) / Config::Channels), 1);
  kernel<<<grid, Config::Threads, smem, stream>>>(kp);
  return cudaGetLastError();
}

template <class Config>
Sm80ConvInstance make_sm80_depthwise_instance() {
  return {Config::Pixels, Config::Channels, 0, Config::Threads, Config::Vec, sm80_depthwise_launch<Config>};
}

}  // namespace tessel::kernel::detail
