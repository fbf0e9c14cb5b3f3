// bench/simt_variants.cuh -- the kernels bench_simt_tiles times: one entry per mainloop and
// tiling, each with an instance for every pair of operand orders. Each variant TU registers its
// entries with a static SimtVariantRegistration; the binary runs what it links.
#pragma once

#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_cp_async.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/gemm/kernel/simt_gemm_pipelined.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

namespace tessel::bench {

using tessel::kernel::SimtGemmParams;

struct SimtVariant {
  int order = 0;     // position in the report
  std::string name;  // what differs, for the report
  // Indexed [A K-contiguous][B K-contiguous].
  void (*launch[2][2])(SimtGemmParams, cudaStream_t) = {};
  cudaError_t (*attributes[2][2])(cudaFuncAttributes*) = {};
};

inline std::vector<SimtVariant>& simt_variant_registry() {
  static std::vector<SimtVariant> all;
  return all;
}

struct SimtVariantRegistration {
  SimtVariantRegistration(std::initializer_list<SimtVariant> vs) {
    for (SimtVariant const& v : vs) simt_variant_registry().push_back(v);
    std::sort(simt_variant_registry().begin(), simt_variant_registry().end(),
              [](SimtVariant const& a, SimtVariant const& b) { return a.order < b.order; });
  }
};

// K: a type whose `kernel<AK, BK>` is the __global__ function of one instance; Tile: its SimtTile.
template <class K, class Tile, bool AK, bool BK>
void simt_variant_launch(SimtGemmParams p, cudaStream_t s) {
  p.tiles_m = int((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = int((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = tessel::choose_raster_order(p.tiles_m, p.tiles_n);
  dim3 const grid(unsigned(p.tiles_m * p.tiles_n), unsigned(std::min<std::int64_t>(p.batch, 65535)));
  K::template kernel<AK, BK><<<grid, Tile::kThreads, 0, s>>>(p);
}

template <class K, bool AK, bool BK>
cudaError_t simt_variant_attributes(cudaFuncAttributes* a) {
  return cudaFuncGetAttributes(a, K::template kernel<AK, BK>);
}

template <class K, class Tile>
SimtVariant make_simt_variant(int order, char const* name) {
  SimtVariant v;
  v.order = order, v.name = name;
  v.launch[1][1] = simt_variant_launch<K, Tile, true, true>, v.attributes[1][1] = simt_variant_attributes<K, true, true>;
  v.launch[1][0] = simt_variant_launch<K, Tile, true, false>, v.attributes[1][0] = simt_variant_attributes<K, true, false>;
  v.launch[0][0] = simt_variant_launch<K, Tile, false, false>, v.attributes[0][0] = simt_variant_attributes<K, false, false>;
  v.launch[0][1] = simt_variant_launch<K, Tile, false, true>, v.attributes[0][1] = simt_variant_attributes<K, false, true>;
  return v;
}

// The kernel families, fp32 in and out.
template <class Tile>
struct SimtRegisterKernel {  // simt_gemm.hpp (the library's)
  template <bool AK, bool BK>
  static constexpr auto kernel = &kernel::simt_gemm_kernel<Tile, float, float, AK, BK>;
};
template <class Tile, int Stages>
struct SimtCpAsyncKernel {  // simt_gemm_cp_async.hpp
  template <bool AK, bool BK>
  static constexpr auto kernel = &kernel::simt_gemm_cp_async_kernel<Tile, Stages, AK, BK>;
};
template <class Tile, class Transport, bool KMajorRows>
struct SimtPipelinedKernel {  // simt_gemm_pipelined.hpp
  template <bool AK, bool BK>
  static constexpr auto kernel = &kernel::simt_gemm_pipelined_kernel<Tile, Transport, KMajorRows, float, float, AK, BK>;
};

}  // namespace tessel::bench
