// tessel/gemm/kernel/sm90_gemm_producer.hpp -- the producer of an sm_90a GEMM CTA: one thread that
// walks the CTA's tiles in order and fills the ring of pipeline stages with their k-tiles by TMA.
//
// Per k-tile it waits for a free stage (empty[s]), announces the bytes coming on full[s] and
// issues the copies of the A tile (TileM x TileK) and the B tile (TileN x TileK) in the 128-byte
// swizzle, each K-major or (a kernel that takes them) MN-major. In a cluster of ClusterM CTAs
// (consecutive tile rows, one tile column) CTA r copies rows [r, r+1) * TileN / ClusterM of the B
// tile and multicasts them to every CTA of the cluster; ClusterN CTAs (one tile row) share the A
// tile the same way. On a tile that reaches past M or N the shares past the edge are copied in
// part or not at all (sm90_stage_copies), and the bytes announced are those. The producer does not
// know which consumer reads a stage: that is the schedule's business (both the cooperative kernel,
// kernel/sm90_gemm_warpspecialized.hpp, and the ping-pong kernel, kernel/sm90_gemm_pingpong.hpp,
// run it; the ping-pong kernel's operands are K-major).
//
// Config: TileM, TileN, TileK, Stages, ClusterM, ClusterN, ClusterSize, StageBytes, and a
// SharedStorage with a[Stages][TileM * TileK], b[Stages][TileN * TileK] and pipeline.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel::detail {

// The producer thread of a CTA: the k-tiles of its cluster's work units (sm90_unit), in order. MnMajorOperands: the kernel reads MN-major operands in place
// (p.a_mn_major / p.b_mn_major pick each operand's boxes, collective/sm90_operand_tile.hpp);
// PromotionKTiles: the K slices hold whole blocks of that many k-tiles (sm90_k_range), as the
// consumers of an fp8 kernel promoted every few k-tiles read them.
template <class Config, bool MnMajorOperands = false, int PromotionKTiles = 1>
TESSEL_DEVICE void sm90_produce_tiles(Sm90GemmParams const& p, typename Config::SharedStorage& s, int cta_rank, int cluster) {
  using OperandTile = collective::Sm90OperandTile<typename Config::Element, Config::TileK>;
  constexpr int TileK = Config::TileK, ClusterM = Config::ClusterM, ClusterN = Config::ClusterN;
  // In a cluster, this CTA copies its share of the shared tile (RowsA of A or RowsB of B) and
  // multicasts it to every CTA of the cluster.
  constexpr int RowsA = Config::TileM / ClusterN, RowsB = Config::TileN / ClusterM;
  constexpr std::uint16_t everyone = std::uint16_t((1u << Config::ClusterSize) - 1u);
  int const share_a = ClusterN > 1 ? cta_rank : 0, share_b = ClusterM > 1 ? cta_rank : 0;
  // Config::UnitNotes (the cooperative kernels' units, a ring of Stages + 1): unit u goes to slot
  // u % (Stages + 1) before its first k-tile's stage is announced, so the consumers need not work
  // it out themselves between two tiles (~1 us of scheduler arithmetic and parameter loads on the
  // H100, on their critical path). The slot is free again by then: that stage was released
  // Stages k-tiles back, after the consumers had finished unit u - Stages - 1 (units are at least
  // one k-tile long).
  PipelineState st;
  // L2 cache hints (p.l2_priority_a/b): the 16-wide skinny kernels only; elsewhere the policies are
  // the constant 0 and the plain copies are all that is compiled.
  std::uint64_t const policy_a = Config::TileN == 16 ? l2_cache_policy(p.l2_priority_a) : 0;
  std::uint64_t const policy_b = Config::TileN == 16 ? l2_cache_policy(p.l2_priority_b) : 0;
  // The 16-wide skinny kernels' in-flight limit (p.in_flight): before announcing a k-tile, the
  // producer waits until the one announced in_flight k-tiles before it has arrived (its full
  // barrier, which only this thread rearms, and not before the stage is freed). `lag` trails st
  // by in_flight stages.
  PipelineState lag;
  int announced = 0;
  auto const limit_in_flight = [&] {
    if constexpr (Config::TileN == 16) {
      if (p.in_flight > 0 && p.in_flight < Config::Stages) {
        if (announced >= p.in_flight) {
          s.pipeline.consumer_wait(lag);
          lag.advance<Config::Stages>();
        }
        ++announced;
      }
    }
  };
  for (long long u = 0, units = sm90_unit_count_of<Config>(p, cluster); u < units; ++u) {
    Sm90Unit const w = sm90_unit_of<Config>(p, cluster, u, PromotionKTiles);
    Sm90TileOrigin<Config> const at(w.tile, cta_rank);
    int const batch = p.batch == 1 ? 0 : int(w.tile.k() % p.batch);
    Sm90StageCopies const copies = sm90_stage_copies<Config>(p, at, cta_rank);
    int const a0 = at.m0 + share_a * RowsA, b0 = at.n0 + share_b * RowsB;
    // Edge: a tile whose shares are not all copied whole takes the loop that asks per share. The
    // other loop is the one every interior tile runs, kept free of it: the producer works in the
    // few registers setmaxnreg leaves it, and the share tests in its k-loop cost the H100 4 us of
    // stage waits in 16 (192x4096x4096 on 128x64 tiles, which has no edge tile at all).
    auto const run = [&](auto edge) {
      constexpr bool Edge = decltype(edge)::value;
      auto const load = [&](std::uint64_t* full, int kt) {
        limit_in_flight();
        typename Config::Element* const a = s.a[st.index] + share_a * RowsA * TileK;
        typename Config::Element* const b = s.b[st.index] + share_b * RowsB * TileK;
        if (!Edge || copies.a_rows == RowsA)
          OperandTile::template load<RowsA, (ClusterN > 1), MnMajorOperands>(&p.tma_a, full, a, everyone, p.a_mn_major,
                                                                             kt * TileK, a0, batch * p.a_batch_step, policy_a);
        else if (MnMajorOperands && p.a_mn_major && copies.a_rows > 0)
          OperandTile::template load_mn_boxes<(ClusterN > 1)>(&p.tma_a, full, a, everyone, copies.a_rows / OperandTile::ChunkRows,
                                                              kt * TileK, a0, batch * p.a_batch_step);
        else if (copies.a_rows > 0)
          OperandTile::template load_edge<(ClusterN > 1)>(&p.tma_a_edge, full, a, everyone, kt * TileK, a0,
                                                          batch * p.a_batch_step);
        if (!Edge || copies.b_rows == RowsB)
          OperandTile::template load<RowsB, (ClusterM > 1), MnMajorOperands>(&p.tma_b, full, b, everyone, p.b_mn_major,
                                                                             kt * TileK, b0, batch * p.b_batch_step, policy_b);
        else if (MnMajorOperands && p.b_mn_major && copies.b_rows > 0)
          OperandTile::template load_mn_boxes<(ClusterM > 1)>(&p.tma_b, full, b, everyone, copies.b_rows / OperandTile::ChunkRows,
                                                              kt * TileK, b0, batch * p.b_batch_step);
        else if (copies.b_rows > 0)
          OperandTile::template load_edge<(ClusterM > 1)>(&p.tma_b_edge, full, b, everyone, kt * TileK, b0,
                                                          batch * p.b_batch_step);
        st.advance<Config::Stages>();
      };
      std::uint32_t const bytes = Edge ? copies.bytes : Config::StageBytes;
      int kt = w.k_begin;
      if constexpr (Config::UnitNotes) {  // the first k-tile apart: w is not held through the loop
        s.pipeline.producer_wait(st);
        s.units[u % (Config::Stages + 1)] = sm90_unit_note<Config>(w, cta_rank, p.batch);
        load(s.pipeline.producer_expect(st, bytes), kt++);
      }
      for (; kt < w.k_end; ++kt) load(s.pipeline.producer_acquire(st, bytes), kt);
    };
    if (copies.whole)
      run(std::false_type{});
    else
      run(std::true_type{});
  }
}

}  // namespace tessel::kernel::detail
