// tessel/gemm/kernel/sm90_gemm_producer.hpp -- the producer of an sm_90a GEMM CTA: one thread that
// walks the CTA's tiles in order and fills the ring of pipeline stages with their k-tiles by TMA.
//
// Per k-tile it waits for a free stage (empty[s]), announces Config::StageBytes on full[s] and
// issues the copies of the A tile (TileM x TileK) and the B tile (TileN x TileK), both K-major in
// the 128-byte swizzle. In a cluster of ClusterM CTAs (consecutive tile rows, one tile column)
// CTA r copies rows [r, r+1) * TileN / ClusterM of the B tile and multicasts them to every CTA of
// the cluster; ClusterN CTAs (one tile row) share the A tile the same way. The producer does not
// know which consumer reads a stage: that is the schedule's business (the ping-pong kernel,
// kernel/sm90_gemm_pingpong.hpp, uses it as it is; the cooperative kernel,
// kernel/sm90_gemm_warpspecialized.hpp, has the same loop inline).
//
// Config: TileM, TileN, TileK, Stages, ClusterM, ClusterN, ClusterSize, StageBytes, and a
// SharedStorage with a[Stages][TileM * TileK], b[Stages][TileN * TileK] and pipeline.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cstdint>

namespace tessel::kernel::detail {

template <class Config>
TESSEL_DEVICE void sm90_produce_tiles(Sm90GemmParams const& p, typename Config::SharedStorage& s, int cta_rank, int cluster) {
  constexpr int TileM = Config::TileM, TileN = Config::TileN, TileK = Config::TileK;
  constexpr int ClusterM = Config::ClusterM, ClusterN = Config::ClusterN;
  constexpr std::uint16_t everyone = std::uint16_t((1u << Config::ClusterSize) - 1u);
  PersistentTileScheduler const& sched = p.scheduler;
  PipelineState st;
  for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
    GemmCoord const tile = sched.tile_offset(t);
    Sm90TileOrigin<Config> const at(tile, cta_rank);
    int const batch = int(tile.k() % p.batch);
    Sm90KRange const k = sm90_k_range(p.k_tiles, p.splits, int(tile.k() / p.batch));
    for (int kt = k.begin; kt < k.end; ++kt) {
      std::uint64_t* full = s.pipeline.producer_acquire(st, Config::StageBytes);
      if constexpr (ClusterN == 1) {
        tma_load_3d(&p.tma_a, full, s.a[st.index], kt * TileK, at.m0, batch * p.a_batch_step);
      } else {
        constexpr int Rows = TileM / ClusterN;
        tma_load_3d_multicast(&p.tma_a, full, s.a[st.index] + cta_rank * Rows * TileK, everyone, kt * TileK,
                              at.m0 + cta_rank * Rows, batch * p.a_batch_step);
      }
      if constexpr (ClusterM == 1) {
        tma_load_3d(&p.tma_b, full, s.b[st.index], kt * TileK, at.n0, batch * p.b_batch_step);
      } else {
        constexpr int Rows = TileN / ClusterM;
        tma_load_3d_multicast(&p.tma_b, full, s.b[st.index] + cta_rank * Rows * TileK, everyone, kt * TileK,
                              at.n0 + cta_rank * Rows, batch * p.b_batch_step);
      }
      st.advance<Config::Stages>();
    }
  }
}

}  // namespace tessel::kernel::detail
