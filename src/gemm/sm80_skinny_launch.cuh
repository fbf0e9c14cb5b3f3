// src/gemm/sm80_skinny_launch.cuh -- launching the sm_80 skinny GEMM configurations (included by
// sm80_skinny_bf16.cu and sm80_skinny_f16.cu only).
#pragma once

#include "sm80_skinny_instances.hpp"

#include <tessel/gemm/kernel/sm80_skinny_gemm.hpp>

namespace tessel::kernel::detail {

// The skinny configuration with a small side of TileM rows: a 128-column strip, 64-deep k-tiles,
// 4 warps side by side along N; as many stages as keep two CTAs in an SM's 227 KiB
// (5 x 18 KiB at TileM 16, 5 x 20 KiB at 32, 4 x 24 KiB at 64).
template <class Element, int TileM>
using Sm80SkinnyConfig =
    collective::Sm80GemmConfig<Element, TileM, 128, 64, /*WarpsM=*/1, /*WarpsN=*/4, /*Stages=*/TileM == 64 ? 4 : 5>;

template <class Config, class ElementOut16>
cudaError_t sm80_skinny_launch(Sm80SkinnyParams const& p, cudaStream_t stream) {
  constexpr int smem = Sm80SkinnyGemm<Config, ElementOut16>::SmemBytes;
  auto* kernel = &sm80_skinny_gemm_kernel<Config, ElementOut16>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  std::int64_t const ctas = std::int64_t(p.tiles_m) * p.splits * p.tiles_n * p.batch;
  kernel<<<static_cast<unsigned>(ctas), Config::Threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Config, class ElementOut16>
cudaError_t sm80_skinny_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_skinny_gemm_kernel<Config, ElementOut16>);
}

template <class Config, class ElementOut16>
cudaError_t sm80_skinny_ctas_per_sm(int* ctas) {
  constexpr int smem = Sm80SkinnyGemm<Config, ElementOut16>::SmemBytes;
  auto* kernel = &sm80_skinny_gemm_kernel<Config, ElementOut16>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, kernel, Config::Threads, smem);
}

template <class Element>
Sm80SkinnyInstance make_sm80_skinny_instance(int tile_m) {
  auto const make = [](auto tile) {
    using Config = Sm80SkinnyConfig<Element, decltype(tile)::value>;
    return Sm80SkinnyInstance{Config::TileM, Config::TileN, Config::TileK, Config::Threads, Config::Stages,
                              Sm80SkinnyGemm<Config, Element>::SmemBytes, int(sizeof(Element)),
                              sm80_skinny_launch<Config, Element>, sm80_skinny_attributes<Config, Element>,
                              sm80_skinny_ctas_per_sm<Config, Element>};
  };
  if (tile_m == 16) return make(Int<16>{});
  if (tile_m == 32) return make(Int<32>{});
  return make(Int<64>{});
}

}  // namespace tessel::kernel::detail
