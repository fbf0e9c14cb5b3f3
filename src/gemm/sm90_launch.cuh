// src/gemm/sm90_launch.cuh -- launching one sm_90a GEMM configuration (included by the
// per-configuration TUs only, each of which instantiates one kernel).
#pragma once

#include "sm90_instances.hpp"

#include <tessel/gemm/kernel/sm90_gemm_pingpong.hpp>
#include <tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp>

namespace tessel::kernel::detail {

// The kernel of a configuration, by its schedule: ping-pong (Sm90PingpongConfig) or cooperative.
template <class Config>
constexpr auto sm90_kernel_of() {
  if constexpr (Sm90PingpongConfiguration<Config>) {
    return &sm90_gemm_pingpong_kernel<Config>;
  } else {
    return &sm90_gemm_kernel<Config>;
  }
}

template <class Config>
cudaLaunchConfig_t sm90_launch_config(unsigned clusters, cudaStream_t stream, cudaLaunchAttribute (&attr)[2]) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(clusters * Config::ClusterSize, 1, 1);
  cfg.blockDim = dim3(Config::Threads, 1, 1);
  cfg.dynamicSmemBytes = Config::SmemBytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = Config::ClusterSize;  // one dimension: the kernel ranks its CTAs along M or N
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  // Programmatic dependent launch: the kernel may start while the previous one in the stream (the
  // operand staging, when there is one) finishes; it waits for it in griddepcontrol.wait before
  // touching global memory.
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  return cfg;
}

template <class Config>
cudaError_t sm90_prepare() {
  return cudaFuncSetAttribute(sm90_kernel_of<Config>(), cudaFuncAttributeMaxDynamicSharedMemorySize, Config::SmemBytes);
}

template <class Config>
cudaError_t sm90_launch(Sm90GemmParams const& p, cudaStream_t stream) {
  if (cudaError_t err = sm90_prepare<Config>(); err != cudaSuccess) return err;
  cudaLaunchAttribute attr[2]{};
  cudaLaunchConfig_t const cfg = sm90_launch_config<Config>(unsigned(p.scheduler.grid_size()), stream, attr);
  return cudaLaunchKernelEx(&cfg, sm90_kernel_of<Config>(), p);
}

template <class Config>
cudaError_t sm90_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, sm90_kernel_of<Config>());
}

template <class Config>
cudaError_t sm90_max_active_clusters(int* clusters) {
  if (cudaError_t err = sm90_prepare<Config>(); err != cudaSuccess) return err;
  cudaLaunchAttribute attr[2]{};
  cudaLaunchConfig_t cfg = sm90_launch_config<Config>(1, nullptr, attr);
  cfg.numAttrs = 1;  // the cluster shape is what occupancy depends on
  return cudaOccupancyMaxActiveClusters(clusters, sm90_kernel_of<Config>(), &cfg);
}

// An entry's instance, with its configuration's lean build where it has one, and the further lean
// builds named in Extra: Sm90Build::lean_fused (the entries the heuristic picks for large problems:
// a fused call on them keeps a lean build), Sm90Build::lean_mn (MN-major operands read in place:
// the data gradient's convolutions).
template <class Config, Sm90Build... Extra>
Sm90Instance make_sm90_instance() {
  Sm90Instance t;
  t.tile_m = Config::TileM, t.tile_n = Config::TileN, t.tile_k = Config::TileK;
  t.cluster_m = Config::ClusterM, t.cluster_n = Config::ClusterN;
  t.stages = Config::Stages, t.epilogue_slabs = Config::EpilogueSlabs, t.threads = Config::Threads, t.smem_bytes = Config::SmemBytes;
  if constexpr (Sm90PingpongConfiguration<Config>) {
    t.row_copies = false;  // no copy warps: its register epilogue overlaps the other consumer's mainloop
    t.mn_major = false;    // its producer loads K-major tiles only: MN-major operands are staged
  } else {
    t.row_copies = Config::RowCopyEpilogue, t.fp8_pairs = Config::Fp8Pairs, t.tma_store = Config::TmaStoreEpilogue;
    t.mn_major = kSm90MnMajorOperands<Config>;
    t.stream_k = Config::PromotionKTiles == 1;
    t.consumers = Config::Consumers;
    t.tma_loads_c = Config::TmaLoadsC;
    t.block_scaled = Config::BlockScaled;
    t.writes_transposed = Config::WritesTransposed;
    if constexpr (Config::HasLeanTwin) t.launch_lean = sm90_launch<typename Config::LeanTwin>;
    constexpr bool LeanFused = ((Extra == Sm90Build::lean_fused) || ...);
    constexpr bool LeanMn = ((Extra == Sm90Build::lean_mn) || ...);
    static_assert(((Extra == Sm90Build::lean_fused || Extra == Sm90Build::lean_mn) && ...),
                  "make_sm90_instance: the further builds are lean_fused and lean_mn");
    static_assert(sizeof...(Extra) == 0 || Config::HasLeanTwin,
                  "make_sm90_instance: further lean builds need a configuration with lean twins");
    static_assert(!LeanMn || kSm90MnMajorOperands<Config>,
                  "make_sm90_instance: a lean MN-major build needs a configuration that reads MN-major operands in place");
    if constexpr (LeanFused) t.launch_lean_fused = sm90_launch<typename Config::LeanFusedTwin>;
    if constexpr (LeanMn) t.launch_lean_mn = sm90_launch<typename Config::LeanMnTwin>;
  }
  t.element_bytes = int(sizeof(typename Config::Element));
  t.launch = sm90_launch<Config>, t.attributes = sm90_attributes<Config>;
  t.max_active_clusters = sm90_max_active_clusters<Config>;
  return t;
}

}  // namespace tessel::kernel::detail
