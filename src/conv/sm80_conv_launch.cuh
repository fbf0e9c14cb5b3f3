// src/conv/sm80_conv_launch.cuh -- launching one sm_80 convolution configuration (included by the
// per-configuration TUs only, each of which instantiates its kernels).
#pragma once

#include "sm80_conv_instances.hpp"

#include <tessel/conv/kernel/sm80_depthwise_conv.hpp>
#include <tessel/conv/kernel/sm80_depthwise_dgrad.hpp>
#include <tessel/conv/kernel/sm80_depthwise_wgrad.hpp>
#include <tessel/conv/kernel/sm80_implicit_gemm_conv.hpp>
#include <tessel/conv/kernel/sm80_smallc_conv.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <algorithm>

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

// The data gradient: fprop's grid over the input pixels (kp.gemm_m = N*H*W).
template <class Config>
cudaError_t sm80_depthwise_dgrad_launch(Sm80ConvKernelParams const& kp, cudaStream_t stream) {
  int const smem = Config::smem_bytes(kp.p.r * kp.p.s);
  auto* kernel = &sm80_depthwise_dgrad_kernel<Config>;
  unsigned const pixel_blocks = static_cast<unsigned>((static_cast<long long>(kp.gemm_m) + Config::Pixels - 1) / Config::Pixels);
  dim3 const grid(pixel_blocks, static_cast<unsigned>((kp.p.c + Config::Channels - 1) / Config::Channels), 1);
  kernel<<<grid, Config::Threads, smem, stream>>>(kp);
  return cudaGetLastError();
}

template <class Config>
Sm80ConvInstance make_sm80_depthwise_dgrad_instance() {
  return {Config::Pixels, Config::Channels, 0, Config::Threads, Config::Vec, sm80_depthwise_dgrad_launch<Config>};
}

template <class Element, int Vec>
using Sm80DepthwiseWgradDefaultConfig = Sm80DepthwiseWgradConfig<Element, Vec, kSm80DepthwiseWgradTaps>;

// The weight gradient: pass 1 over (channel blocks x tap groups, slices), then, where kp.partials
// is set (a split), the slice sum.
template <class Config>
cudaError_t sm80_depthwise_wgrad_launch(Sm80ConvKernelParams const& kp, cudaStream_t stream) {
  using Element = typename Config::Element;
  long long const tap_groups = (static_cast<long long>(kp.p.r) * kp.p.s + Config::Taps - 1) / Config::Taps;
  long long const blocks = (static_cast<long long>(kp.p.c) + Config::Channels - 1) / Config::Channels;
  dim3 const grid(static_cast<unsigned>(blocks * tap_groups), static_cast<unsigned>(kp.slices), 1);
  sm80_depthwise_wgrad_kernel<Config><<<grid, Config::Threads, 0, stream>>>(kp);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess || kp.partials == nullptr) return err;
  long long const outputs = static_cast<long long>(kp.p.r) * kp.p.s * kp.p.c;
  long long const groups_of_32 = std::min((outputs + 31) / 32, 1LL << 20);  // (the CTAs stride over the rest)
  sm80_depthwise_wgrad_sum_kernel<Element><<<static_cast<unsigned>(groups_of_32), kSm80DepthwiseWgradSumThreads, 0, stream>>>(kp);
  return cudaGetLastError();
}

template <class Config>
Sm80ConvInstance make_sm80_depthwise_wgrad_instance() {
  return {Config::Pixels, Config::Channels, 0, Config::Threads, Config::Vec, sm80_depthwise_wgrad_launch<Config>};
}

// The small-channel kernels (sm80_smallc_conv.hpp). fprop and dgrad: persistent, two CTAs an SM
// (their shared memory, 61 KiB for the stem's fprop and 88 KiB for its dgrad, lets two fit on an
// H100). wgrad: a CTA per slice of output rows (kp's split, two slices an SM: sm80_conv_run.cpp),
// 64 threads per warp group, into kp.partials; the slice sum follows (sm80_conv_run).
template <class Element, conv::Operator Op>
cudaError_t sm80_smallc_launch(Sm80ConvKernelParams const& kp, cudaStream_t stream) {
  Sm80SmallcParams sp = sm80_smallc_params(kp.p);
  if constexpr (Op == conv::Operator::kWgrad) {
    sp.rows_per_slice = kp.k_tiles_per_slice;
    sp.partials = kp.partials;
    sp.partial_ld = kp.partial_ld;
    auto* kernel = kp.p.stride_w * kp.p.c == 6 ? &sm80_smallc_wgrad_kernel<Element, 6> : &sm80_smallc_wgrad_kernel<Element, 0>;
    if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sp.smem_bytes); err != cudaSuccess)
      return err;
    kernel<<<static_cast<unsigned>(kp.slices), static_cast<unsigned>(64 * sp.groups), sp.smem_bytes, stream>>>(sp);
    return cudaGetLastError();
  } else {
    auto* kernel = Op == conv::Operator::kFprop ? &sm80_smallc_fprop_kernel<Element> : &sm80_smallc_dgrad_kernel<Element>;
    if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sp.smem_bytes); err != cudaSuccess)
      return err;
    int device = 0, sms = 0;
    if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
    if (cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); err != cudaSuccess) return err;
    int const grid = std::min(sp.tiles, 2 * std::max(sms, 1));
    kernel<<<static_cast<unsigned>(grid), kSmallcThreads, sp.smem_bytes, stream>>>(sp);
    return cudaGetLastError();
  }
}

template <class Element, conv::Operator Op>
Sm80ConvInstance make_sm80_smallc_instance() {
  switch (Op) {
    case conv::Operator::kFprop: return {kSmallcPixels, kSmallcChannels, 16, kSmallcThreads, 1, sm80_smallc_launch<Element, Op>};
    case conv::Operator::kDgrad:
      return {kSmallcDgradRows * kSmallcDgradCols, kSmallcDgradMaxC, 16, kSmallcThreads, 1, sm80_smallc_launch<Element, Op>};
    case conv::Operator::kWgrad:
      return {kSmallcWgradMaxK, kSmallcWgradWarpTiles * 8, 16, 64 * kSmallcWgradMaxGroups, 1, sm80_smallc_launch<Element, Op>};
  }
  return {};
}

}  // namespace tessel::kernel::detail
