// bench/simt_experiment/simt_experiment.cuh -- entries of the SIMT mainloop experiment
// (bench_simt_variants): kernels of tessel/gemm/kernel/simt_gemm_pipelined.hpp instantiated
// here, fp32 in and out, one instance per pair of operand orders.
#pragma once

#include "../simt_variants.hpp"

#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/gemm/kernel/simt_gemm_pipelined.hpp>
#include <tessel/schedule/raster.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace tessel::bench {

// K: a type whose `kernel<AK, BK>` is the __global__ function of one instance.
template <class Tile, class Transport, bool KMajorRows>
struct SimtPipelinedKernel {
  template <bool AK, bool BK>
  static constexpr auto kernel = &kernel::simt_gemm_pipelined_kernel<Tile, Transport, KMajorRows, float, float, AK, BK>;
};

// g in the kernels' terms (D row-major) -> the kernels' parameters.
inline kernel::SimtGemmParams simt_experiment_params(GemmArguments const& g) {
  auto vec = [&](void const* p, std::int64_t ld, std::int64_t stride) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 4 == 0 && (g.batch_count == 1 || stride % 4 == 0);
  };
  kernel::SimtGemmParams p;
  p.m = g.m, p.n = g.n, p.k = g.k, p.batch = g.batch_count;
  p.a = g.a, p.lda = g.lda, p.batch_stride_a = g.batch_stride_a, p.a_k_major = g.a_order == MatrixOrder::row_major;
  p.a_vec = vec(g.a, g.lda, g.batch_stride_a);
  p.b = g.b, p.ldb = g.ldb, p.batch_stride_b = g.batch_stride_b, p.b_k_major = g.b_order == MatrixOrder::col_major;
  p.b_vec = vec(g.b, g.ldb, g.batch_stride_b);
  p.c = g.c, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
  p.c_vec = g.c != nullptr && vec(g.c, g.ldc, g.batch_stride_c);
  p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
  p.d_vec = vec(g.d, g.ldd, g.batch_stride_d);
  p.alpha = g.alpha, p.beta = g.beta;
  return p;
}

template <class K, class Tile, bool AK, bool BK>
cudaError_t simt_experiment_launch(kernel::SimtGemmParams p, cudaStream_t s) {
  p.tiles_m = int((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = int((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = choose_raster_order(p.tiles_m, p.tiles_n);
  dim3 const grid(unsigned(p.tiles_m * p.tiles_n), unsigned(std::min<std::int64_t>(p.batch, 65535)));
  K::template kernel<AK, BK><<<grid, Tile::kThreads, 0, s>>>(p);
  return cudaGetLastError();
}

template <class K, class Tile>
SimtVariant make_simt_variant(int order, char const* name) {
  SimtVariant v;
  v.order = order, v.name = name;
  v.launch = [](GemmArguments const& g, cudaStream_t s) {
    kernel::SimtGemmParams const p = simt_experiment_params(g);
    if (p.a_k_major)
      return p.b_k_major ? simt_experiment_launch<K, Tile, true, true>(p, s) : simt_experiment_launch<K, Tile, true, false>(p, s);
    return p.b_k_major ? simt_experiment_launch<K, Tile, false, true>(p, s)
                       : simt_experiment_launch<K, Tile, false, false>(p, s);
  };
  v.attributes = [](GemmArguments const& g, cudaFuncAttributes* a) {
    bool const ak = g.a_order == MatrixOrder::row_major, bk = g.b_order == MatrixOrder::col_major;
    if (ak) return cudaFuncGetAttributes(a, bk ? K::template kernel<true, true> : K::template kernel<true, false>);
    return cudaFuncGetAttributes(a, bk ? K::template kernel<false, true> : K::template kernel<false, false>);
  };
  return v;
}

}  // namespace tessel::bench
