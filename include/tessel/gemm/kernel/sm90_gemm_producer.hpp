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

// One operand's Rows x TileK tile of k-tile kt into `dst`: the whole box, or -- the tile shared
// by the Sharers CTAs of the cluster -- this CTA's Rows / Sharers of it, multicast to all of them.
template <int Rows, int TileK, int Sharers, int ClusterSize, class Element>
TESSEL_DEVICE void sm90_load_operand_tile(TmaDescriptor const* desc, std::uint64_t* full, Element* dst, int cta_rank, int kt,
                                          int row0, int batch) {
  if constexpr (Sharers == 1) {
    tma_load_3d(desc, full, dst, kt * TileK, row0, batch);
  } else {
    constexpr int Part = Rows / Sharers;
    constexpr std::uint16_t everyone = std::uint16_t((1u << ClusterSize) - 1u);
    tma_load_3d_multicast(desc, full, dst + cta_rank * Part * TileK, everyone, kt * TileK, row0 + cta_rank * Part, batch);
  }
}

template <class Config>
TESSEL_DEVICE void sm90_produce_tiles(Sm90GemmParams const& p, typename Config::SharedStorage& s, int cta_rank, int cluster) {
  constexpr int TileK = Config::TileK, ClusterSize = Config::ClusterSize;
  PersistentTileScheduler const& sched = p.scheduler;
  PipelineState st;
  for (long long t = sched.first_tile(cluster); sched.is_valid(t); t = sched.next_tile(t)) {
    GemmCoord const tile = sched.tile_offset(t);
    Sm90TileOrigin<Config> const at(tile, cta_rank);
    int const batch = int(tile.k() % p.batch);
    Sm90KRange const k = sm90_k_range(p.k_tiles, p.splits, int(tile.k() / p.batch));
    for (int kt = k.begin; kt < k.end; ++kt) {
      std::uint64_t* full = s.pipeline.producer_acquire(st, Config::StageBytes);
      sm90_load_operand_tile<Config::TileM, TileK, Config::ClusterN, ClusterSize>(&p.tma_a, full, s.a[st.index], cta_rank, kt,
                                                                                  at.m0, batch * p.a_batch_step);
      sm90_load_operand_tile<Config::TileN, TileK, Config::ClusterM, ClusterSize>(&p.tma_b, full, s.b[st.index], cta_rank, kt,
                                                                                  at.n0, batch * p.b_batch_step);
      st.advance<Config::Stages>();
    }
  }
}

}  // namespace tessel::kernel::detail
