// tessel/gemm/collective/sm90_mma_consumer.hpp -- the mainloops of a consumer warpgroup of the
// sm_90a GEMM (kernel/sm90_gemm_warpspecialized.hpp): its 64 rows of a work unit's tile, summed over
// the unit's k-tiles [k_begin, k_end) by wgmma from the stages the producer fills by TMA
// (pipeline/sm90_pipeline.hpp, collective/sm90_operand_tile.hpp). Names: docs/glossary.md.
//
// Sm90MmaConsumer<Config, MnMajorOperands>, one mainloop per accumulation (Config::Partials):
//   promoted_one_partial<OpPart>  1: fp8 256-wide tiles, optionally block scaled -- per promotion
//                                 block and 128-column half, the wgmmas into part0, retired, then
//                                 added (scaled) to acc;
//   promoted_two_partials<Op>     2: two partial tiles that alternate -- k-tile t's wgmmas run while
//                                 k-tile t - 1's partial is added to acc;
//   fast                          0: the wgmmas accumulate into acc in the tensor core, one k-tile's
//                                 in flight; one copy of the loop per (A, B) majorness
//                                 (MnMajorOperands: p.a_mn_major, p.b_mn_major).
// The kernel picks the mainloop, and for an fp8 kernel with promoted accumulation the wgmma
// instructions of the input pair (p.fp8_pair): Op m64 x TileN, OpPart m64 x TileN / 2. Each loop
// issues its wgmmas as the vocabulary does: a one-warpgroup TiledMMA of the instruction, the
// descriptor fragments of the stage's tiles (a_fragment / b_fragment: this consumer's 64 rows of A,
// all of B; OpPart's B fragment has MMA_N 2, the tile's halves), gemm per k-slice, accumulate_
// Zero for a unit's (or a partial's) first. The loops and their lambdas are TESSEL_ALWAYS_INLINE:
// the accumulators are register arrays passed by reference, and an outlined copy of a loop keeps
// them in local memory.
//
// Pre:  st is the warpgroup's place in the stage ring at the unit's first k-tile; the unit has at
//       least one k-tile, in whole promotion blocks (sm90_k_range).
// Post: acc (this thread's registers of the 64 x TileN tile, wgmma_accumulator_coord) holds the
//       unit's sum, not added to what it held; st is past the unit's last k-tile, and each of the
//       unit's stages has been freed (consumer_release by lane 0 of each warp).
// The fast mainloop calls the epilogue's hooks between k-tiles: load_c(box) (one 64-column box of
// C's TMA load into the staging buffer, Config::TmaLoadsC with p.c_by_tma) and, with Config::HeldBlocks, release_held()
// (the previous tile's held blocks stored) and drain_staging() (their stores seen reading the
// buffer).
#pragma once

#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/kernel/sm90_gemm_block_scales.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/tensor/tensor.hpp>
#include <tessel/tiled/tiled_mma.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::collective {

// A configuration's wgmma with A (TransA) and B (TransB) K-major (0) or MN-major (1).
template <class Config, int TransA, int TransB>
struct Sm90MmaFor {
  using Op = typename kernel::Sm90WgmmaOf<typename Config::Element, Config::TileN>::template Transposed<TransA, TransB>;
};
template <class Config>
struct Sm90MmaFor<Config, 0, 0> {
  using Op = typename Config::Mma;
};

// The mainloops of configuration Config (kernel/sm90_gemm_warpspecialized.hpp); MnMajorOperands: the
// kernel reads MN-major operands in place (kSm90MnMajorOperands), else K-major ones only.
template <class Config, bool MnMajorOperands>
struct Sm90MmaConsumer {
  using Element = typename Config::Element;
  using OperandTile = Sm90OperandTile<Element, Config::TileK>;  // K-major or MN-major stage tiles
  using SharedStorage = typename Config::SharedStorage;
  using UnitNote = kernel::detail::Sm90UnitNote;
  static constexpr int TileN = Config::TileN, TileK = Config::TileK;
  static constexpr int Stages = Config::Stages, ClusterSize = Config::ClusterSize;
  static constexpr int Held = Config::HeldBlocks;
  using Accumulators = float[Config::Accumulators];                                  // the fp32 sum
  using Partial = float[Config::PartialRegisters];                                   // part0
  using SecondPartial = float[Config::Partials > 1 ? Config::PartialRegisters : 1];  // part1 (two partials only)

  // Registers as the C fragment of a one-warpgroup TiledMMA: (MMA,MMA_M,MMA_N) = (N,_1,_1).
  template <int N>
  TESSEL_DEVICE static auto accumulators(float (&regs)[N]) {
    return make_tensor(&regs[0], Layout<Shape<Int<N>, _1, _1>>{});
  }

  // The descriptor fragments of stage `stage` for a one-warpgroup TiledMMA: this consumer's 64
  // rows of A, K-major (TransA 0) or MN-major (1), and the stage's TileN rows of B (TransB).
  template <int TransA, class TiledMma>
  TESSEL_DEVICE static auto a_fragment(TiledMma const& mma, SharedStorage& s, int stage, int consumer) {
    return OperandTile::template fragment_A<TransA, 64>(mma, s.a[stage] + consumer * 64 * TileK);  // (_1,_1,MMA_K)
  }
  template <int TransB, class TiledMma>
  TESSEL_DEVICE static auto b_fragment(TiledMma const& mma, SharedStorage& s, int stage) {
    return OperandTile::template fragment_B<TransB, TileN>(mma, s.b[stage]);  // (_1,MMA_N,MMA_K)
  }

  // Mainloop, promoted, with one partial tile: each k-tile's wgmmas start it afresh and
  // retire before it is added to acc; the stage is freed once they have. The tensor
  // core runs the other consumer warpgroup's wgmmas meanwhile (its k-tile was issued while
  // this one's ran). A 256-wide tile does this per 128-column half: instruction OpPart
  // on B's rows [128h, 128h + 128) (+1024 in the descriptor's 16-byte units: 128 rows of
  // 128 bytes), whose registers are acc's [64h, 64h + 64) (wgmma_accumulator_coord).
  // One promotion block of Every k-tiles (consecutive stages) at a time (sm90_k_range: the
  // slices hold whole blocks): per half, the wgmmas of all of them into part0, wait, add.
  //
  // Promoted every k-tile (Every 1), the turn between one k-tile's second half and the
  // next one's first is kept short: the next stage is waited for, and its descriptors
  // made, while the second half's wgmmas run, and a finished stage is freed only after
  // the next first half is issued -- only the additions are left in between. (Waiting at
  // the top of the loop put the barrier's ~60 cycles there every k-tile, with none of this
  // warpgroup's wgmmas in flight. H100, same runs: 8192^3 0.95 -> 0.99 and
  // 0.975 -> 0.998 for the late free.) Promotion blocks of two k-tiles keep the wait at
  // the top: waiting for the next block early holds all four stages (promote2 read
  // 0.92-0.94 with it, 0.96-0.99 without, on other H100 machines).
  template <class OpPart>
  TESSEL_DEVICE TESSEL_ALWAYS_INLINE static void promoted_one_partial(kernel::Sm90GemmParams const& p, SharedStorage& s,
                                                                      PipelineState& st, UnitNote const& w, int k_begin,
                                                                      int k_end, int consumer, int wg_thread, int lane,
                                                                      Accumulators& acc, Partial& part0) {
    constexpr int Splits = Config::PartialSplits, Part = Config::PartialRegisters;
    constexpr int Every = Config::PromotionKTiles;
    static_assert(Splits == 2, "Sm90MmaConsumer: the one-partial promoted mainloop works a 256-wide tile in two halves");
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
    auto mma = make_tiled_mma(OpPart{});  // one warpgroup: 64 x TileN / 2 x OpPart::K, B's halves its MMA_N
    Tensor tCrPart = accumulators(part0);  // (MMA,MMA_M,MMA_N)
    using FragmentA = decltype(a_fragment<0>(mma, s, 0, consumer));
    using FragmentB = decltype(b_fragment<0>(mma, s, 0));
    if constexpr (Every == 1) {
      // Half h of a k-tile, A (_1,_1,MMA_K) and B (_1,_2,MMA_K): its wgmmas start part0 afresh.
      auto issue_half = [&](FragmentA const& tCrA, FragmentB const& tCrB, int h) TESSEL_ALWAYS_INLINE {
        wgmma_fence_operand(part0);
        wgmma_fence();
        mma.accumulate_ = GMMA::ScaleOut::Zero;
        TESSEL_UNROLL
        for (int kk = 0; kk < size<2>(tCrA); ++kk) {
          gemm(mma, tCrA(_, 0, kk), tCrB(_, h, kk), tCrPart(_, 0, 0));
          mma.accumulate_ = GMMA::ScaleOut::One;
        }
        wgmma_commit_group();
      };
      int stage = 0;           // the k-tile's stage
      FragmentA tCrA;          // its descriptors: this consumer's A rows (_1,_1,MMA_K)
      FragmentB tCrB;          // all of B, in halves (_1,_2,MMA_K)
      auto wait_stage = [&](int& at, FragmentA& a, FragmentB& b) TESSEL_ALWAYS_INLINE {
        s.pipeline.consumer_wait(st);
        at = st.index;
        a = a_fragment<0>(mma, s, st.index, consumer);
        b = b_fragment<0>(mma, s, st.index);
        st.advance<Stages>();
      };
      auto release = [&](int at) TESSEL_ALWAYS_INLINE {
        if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(at);
      };
      // Block scaling: this thread's scales of the unit's tile (Config::BlockScaled).
      [[maybe_unused]] kernel::detail::Sm90BlockScales scales{};
      if constexpr (Config::BlockScaled)
        scales = kernel::detail::sm90_block_scales(p, w.m0 + 64 * consumer + 16 * (wg_thread / 32) + lane / 4, w.n0, w.batch);
      // Half h's partial into acc: added (per-tensor scales act in the epilogue) or, block
      // scaled, multiplied by its rows' scales first (register i holds row r + 8 * ((i / 2) % 2)).
      auto const promote = [&](auto half, float const (&kt_scales)[4]) TESSEL_ALWAYS_INLINE {
        constexpr int h = decltype(half)::value;
        TESSEL_UNROLL
        for (int i = 0; i < Part; ++i) {
          if constexpr (Config::BlockScaled) {
            acc[h * Part + i] = fmaf(part0[i], kt_scales[2 * h + (i / 2) % 2], acc[h * Part + i]);
          } else {
            acc[h * Part + i] += part0[i];
          }
        }
      };
      // Block scaling: a k-tile's scales are loaded a k-tile ahead (an L2 round trip is about
      // as long as a half's wgmmas, so loading them in the k-tile that uses them stalls it).
      float kt_scales[4] = {1.0f, 1.0f, 1.0f, 1.0f};
      if constexpr (Config::BlockScaled)
        if (k_begin < k_end) scales.load(k_begin, kt_scales);
      wait_stage(stage, tCrA, tCrB);
      int owed = -1;  // a stage to free once the next k-tile's first half is issued
      for (int kt = k_begin; kt < k_end; ++kt) {
        issue_half(tCrA, tCrB, 0);
        if (owed >= 0) release(owed);
        float next_scales[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        if constexpr (Config::BlockScaled) scales.load(kt + 1 < k_end ? kt + 1 : kt, next_scales);
        wgmma_wait_group<0>();
        wgmma_fence_operand(part0);
        promote(std::integral_constant<int, 0>{}, kt_scales);
        issue_half(tCrA, tCrB, 1);
        // (The next k-tile's stage and descriptors go to their own variables: overwriting the
        // current ones in place measured 0.7-1% slower, H100.)
        bool const more = kt + 1 < k_end;
        int next = stage;
        FragmentA next_a = tCrA;
        FragmentB next_b = tCrB;
        if (more) wait_stage(next, next_a, next_b);
        wgmma_wait_group<0>();
        wgmma_fence_operand(part0);
        owed = more ? stage : -1;
        if (!more) release(stage);
        promote(std::integral_constant<int, 1>{}, kt_scales);
        stage = next, tCrA = next_a, tCrB = next_b;
        TESSEL_UNROLL
        for (int i = 0; i < 4; ++i) kt_scales[i] = next_scales[i];
      }
    } else {
      static_assert(!Config::BlockScaled, "Sm90MmaConsumer: block scaling promotes every k-tile (one 128-deep scale block)");
      for (int kt = k_begin; kt < k_end; kt += Every) {
        FragmentA tCrA[Every];  // the block's k-tiles' descriptors (_1,_1,MMA_K)
        FragmentB tCrB[Every];  // (_1,_2,MMA_K)
        int stage[Every];
        TESSEL_UNROLL
        for (int j = 0; j < Every; ++j) {
          s.pipeline.consumer_wait(st);
          stage[j] = st.index;
          tCrA[j] = a_fragment<0>(mma, s, st.index, consumer);
          tCrB[j] = b_fragment<0>(mma, s, st.index);
          st.advance<Stages>();
        }
        TESSEL_UNROLL
        for (int h = 0; h < Splits; ++h) {
          wgmma_fence_operand(part0);
          wgmma_fence();
          mma.accumulate_ = GMMA::ScaleOut::Zero;
          TESSEL_UNROLL
          for (int j = 0; j < Every; ++j) {
            TESSEL_UNROLL
            for (int kk = 0; kk < size<2>(tCrA[j]); ++kk) {
              gemm(mma, tCrA[j](_, 0, kk), tCrB[j](_, h, kk), tCrPart(_, 0, 0));
              mma.accumulate_ = GMMA::ScaleOut::One;
            }
          }
          wgmma_commit_group();
          wgmma_wait_group<0>();
          wgmma_fence_operand(part0);
          if (h == Splits - 1 && lane == 0) {
            TESSEL_UNROLL
            for (int j = 0; j < Every; ++j) s.pipeline.template consumer_release<ClusterSize>(stage[j]);
          }
          TESSEL_UNROLL
          for (int i = 0; i < Part; ++i) acc[h * Part + i] += part0[i];
        }
      }
    }
  }

  // Mainloop, promoted, with two partial tiles: k-tile t's wgmmas start a fresh tile in
  // part[t % 2] while k-tile t - 1's, retired, is added to acc and its stage freed -- the
  // tensor core keeps working through the fp32 additions.
  template <class Op>
  TESSEL_DEVICE TESSEL_ALWAYS_INLINE static void promoted_two_partials(SharedStorage& s, PipelineState& st, int k_begin,
                                                                       int k_end, int consumer, int lane, Accumulators& acc,
                                                                       Partial& part0, SecondPartial& part1) {
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
    auto mma = make_tiled_mma(Op{});  // one warpgroup: 64 x TileN x Op::K
    auto issue = [&](float(&into)[Config::Accumulators]) TESSEL_ALWAYS_INLINE {
      s.pipeline.consumer_wait(st);
      Tensor tCrA = a_fragment<0>(mma, s, st.index, consumer);  // (_1,_1,MMA_K) descriptors
      Tensor tCrB = b_fragment<0>(mma, s, st.index);            // (_1,_1,MMA_K)
      Tensor tCrC = accumulators(into);                         // (MMA,MMA_M,MMA_N)
      wgmma_fence_operand(into);
      wgmma_fence();
      mma.accumulate_ = GMMA::ScaleOut::Zero;
      TESSEL_UNROLL
      for (int kk = 0; kk < size<2>(tCrA); ++kk) {
        gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
        mma.accumulate_ = GMMA::ScaleOut::One;
      }
      wgmma_commit_group();
      wgmma_fence_operand(into);
      st.advance<Stages>();
    };
    auto retire = [&](float(&from)[Config::Accumulators], int stage) TESSEL_ALWAYS_INLINE {  // after a wait that completed `from`
      wgmma_fence_operand(from);
      if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(stage);
      TESSEL_UNROLL
      for (int i = 0; i < Config::Accumulators; ++i) acc[i] += from[i];
    };
    int stage0 = st.index, stage1 = 0;
    issue(part0);
    int kt = k_begin + 1;
    for (; kt + 1 < k_end; kt += 2) {
      stage1 = st.index;
      issue(part1);
      wgmma_wait_group<1>();
      retire(part0, stage0);
      stage0 = st.index;
      issue(part0);
      wgmma_wait_group<1>();
      retire(part1, stage1);
    }
    if (kt < k_end) {  // one k-tile left: part1 takes it
      stage1 = st.index;
      issue(part1);
      wgmma_wait_group<1>();
      retire(part0, stage0);
      wgmma_wait_group<0>();
      retire(part1, stage1);
    } else {
      wgmma_wait_group<0>();
      retire(part0, stage0);
    }
  }

  // Mainloop, fast: one commit group per k-tile, the previous one retired before its stage is freed.
  // One copy of the loop per (A, B) major-ness, chosen once per tile by a uniform branch. The
  // copies join before the last group is waited for: with a wait_group 0 closing each copy,
  // ptxas serialized every wgmma of all of them (C7515, "non wgmma instructions defining
  // accumulator registers ... between start and end of the pipeline stage").
  template <class LoadC, class ReleaseHeld, class DrainStaging>
  TESSEL_DEVICE TESSEL_ALWAYS_INLINE static void fast(kernel::Sm90GemmParams const& p, SharedStorage& s, PipelineState& st,
                                                      int k_begin, int k_end, int consumer, int lane, Accumulators& acc,
                                                      LoadC const& load_c, ReleaseHeld const& release_held,
                                                      DrainStaging const& drain_staging) {
    auto fast_loop = [&](auto a_mn_major, auto b_mn_major) TESSEL_ALWAYS_INLINE {
      constexpr int TransA = decltype(a_mn_major)::value, TransB = decltype(b_mn_major)::value;
      auto mma = make_tiled_mma(typename Sm90MmaFor<Config, TransA, TransB>::Op{});  // one warpgroup: 64 x TileN x K
      Tensor tCrC = accumulators(acc);                                                // (MMA,MMA_M,MMA_N)
      int previous = -1;
      int kt = k_begin;
      auto k_tiles_to = [&](int end) TESSEL_ALWAYS_INLINE {
        for (; kt < end; ++kt) {
          s.pipeline.consumer_wait(st);
          Tensor tCrA = a_fragment<TransA>(mma, s, st.index, consumer);  // (_1,_1,MMA_K) descriptors
          Tensor tCrB = b_fragment<TransB>(mma, s, st.index);            // (_1,_1,MMA_K)
          wgmma_fence_operand(acc);
          wgmma_fence();
          mma.accumulate_ = kt > k_begin ? GMMA::ScaleOut::One : GMMA::ScaleOut::Zero;
          TESSEL_UNROLL
          for (int kk = 0; kk < size<2>(tCrA); ++kk) {
            gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
            mma.accumulate_ = GMMA::ScaleOut::One;
          }
          wgmma_commit_group();
          wgmma_fence_operand(acc);
          wgmma_wait_group<1>();
          if (previous >= 0 && lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);
          previous = st.index;
          st.advance<Stages>();
        }
      };
      if constexpr (Config::TmaLoadsC) {
        if (p.c_by_tma) {
          // C's TMA load goes out a 64-column box at a time: the first before the third
          // k-tile (the first of a shorter tile's last) -- the previous tile's D stores have
          // read the buffer by then -- and each next one CLoadSpacing k-tiles later (at the latest
          // before the unit's last k-tile), so the load has the rest of the mainloop to land. Every CTA
          // loading its whole block from HBM at once held up the stages' loads behind it
          // (docs/sm90_gemm.md, "C read"). The k-tile loop runs in pieces between the loads,
          // so no piece (nor the loop without C) carries the loads' memory clobbers.
          constexpr int CLoadSpacing = 4;
          int at = k_end - k_begin > 2 ? k_begin + 2 : k_end - 1;
          for (int box = 0;;) {
            k_tiles_to(at);
            load_c(box);
            if (++box == TileN / 64) break;
            at = at + CLoadSpacing < k_end - 1 ? at + CLoadSpacing : k_end - 1;
          }
          k_tiles_to(k_end);
          return previous;
        }
      }
      if constexpr (Held > 0) {
        // The previous tile's held blocks leave once this tile's first k-tile is issued; the
        // staging buffer is seen free again after the second (or at once, a 1-k-tile unit).
        k_tiles_to(k_begin + 1 < k_end ? k_begin + 1 : k_end);
        release_held();
        k_tiles_to(k_begin + 2 < k_end ? k_begin + 2 : k_end);
        drain_staging();
      }
      k_tiles_to(k_end);
      return previous;
    };
    using KMajor = std::integral_constant<int, 0>;
    using MnMajor = std::integral_constant<int, 1>;
    int previous;
    if constexpr (MnMajorOperands) {
      if (p.a_mn_major) {
        previous = p.b_mn_major ? fast_loop(MnMajor{}, MnMajor{}) : fast_loop(MnMajor{}, KMajor{});
      } else {
        previous = p.b_mn_major ? fast_loop(KMajor{}, MnMajor{}) : fast_loop(KMajor{}, KMajor{});
      }
    } else {
      previous = fast_loop(KMajor{}, KMajor{});
    }
    wgmma_wait_group<0>();
    wgmma_fence_operand(acc);
    if (lane == 0) s.pipeline.template consumer_release<ClusterSize>(previous);
  }
};

}  // namespace tessel::collective
