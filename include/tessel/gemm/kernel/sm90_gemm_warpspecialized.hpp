// tessel/gemm/kernel/sm90_gemm_warpspecialized.hpp -- the sm_90a GEMM: TMA + wgmma, warp-specialized,
// persistent, cooperative, optionally in clusters with TMA multicast.
//
// sm90_gemm_kernel<Config>(Sm90GemmParams) (kernel/sm90_gemm_params.hpp), 384 threads:
//   warpgroup 0, the producer: its registers lowered (setmaxnreg), one thread walks the tiles of
//       this CTA and, per k-tile, waits for a free pipeline stage and issues the TMA copies of the
//       A tile (TileM x TileK) and the B tile (TileN x TileK) into it (pipeline/sm90_pipeline.hpp),
//       each K-major or, for 16-bit inputs, MN-major (collective/sm90_operand_tile.hpp). An
//       implicit-GEMM convolution (Config::Im2col) reads one operand as the im2col view of the
//       activations instead (kernel/sm90_gemm_producer_im2col.hpp); the rest of the kernel is the same.
//       In a cluster of ClusterM CTAs (consecutive tile rows, one tile column), CTA r copies rows
//       [r, r+1) * TileN / ClusterM of the B tile and multicasts them to every CTA of the cluster:
//       each B byte is read from L2 once per cluster. A cluster of ClusterN CTAs (one tile row,
//       consecutive tile columns) shares the A tile the same way.
//   warpgroups 1 and 2, the consumers (cooperative: one tile, 64 rows each): per k-tile they wait
//       for the stage, issue TileK / K wgmma m64 x TileN instructions from shared memory (with the
//       transpose bit of an MN-major operand; one copy of the loop per combination), keep
//       one k-tile of wgmmas in flight and free the previous stage (fp8 with promoted accumulation:
//       every k-tile's wgmmas retire into fp32 registers first; collective/sm90_mma_consumer.hpp).
//       After the last k-tile the epilogue writes D: a 16-bit D with C unread through a swizzled
//       shared-memory buffer --
//       TMA stores when its rows are 16-byte aligned; when they are not, warps 2 and 3 of the
//       producer warpgroup copy the buffers out in coalesced rows while the consumers go on (the
//       consumers copy their CTA's last tile themselves; the two-slab kernel keeps the tile's
//       last blocks in registers and stores them after the next unit's first k-tile, HeldBlocks) --
//       else (C read without a TMA load, fp32 D, 16-wide skinny tiles) alpha * accumulators +
//       beta * C straight from registers (kernel/sm90_gemm_epilogue_staged.hpp and
//       kernel/sm90_gemm_epilogue.hpp).
// The producer runs ahead across tile boundaries, so the next tile's loads overlap this tile's
// epilogue. Tiles come from a PersistentTileScheduler (schedule/persistent.hpp) over cluster
// tiles: grid = clusters that fit at once, each walking every grid-th cluster tile in grouped
// raster order -- or, with p.stream_k, from a StreamKScheduler (schedule/stream_k.hpp), whose units
// may be parts of tiles, fixed up through global memory (sm90_stream_k_fixup). This is the only function that reads threadIdx and blockIdx.
#pragma once

#include <tessel/arch/global_flag.hpp>
#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/atom/sm90_wgmma_select.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/device/sm90_build_choice.hpp>
#include <tessel/gemm/epilogue/sm90_epilogue_staging.hpp>
#include <tessel/gemm/kernel/sm90_gemm_block_scales.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_epilogue.hpp>
#include <tessel/gemm/kernel/sm90_gemm_epilogue_staged.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/gemm/kernel/sm90_gemm_producer.hpp>
#include <tessel/gemm/kernel/sm90_gemm_producer_im2col.hpp>
#include <tessel/gemm/kernel/sm90_gemm_prologue.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/tfloat32.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>
#include <tessel/gemm/collective/sm90_mma_consumer.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace tessel::kernel {

// Whether a wgmma selection has the transposed forms (16-bit inputs: the transpose bits). A
// concept, not a requires-expression written into the variable below: GCC 12 evaluates that one
// false in the host pass while nvcc's device pass finds it true, so a host compiled by GCC 12
// staged the MN-major operands the kernels read in place (the static_assert below holds it).
template <class Wgmma>
concept Sm90TransposableWgmma = requires { typename Wgmma::template Transposed<1, 1>; };

// Whether a configuration reads MN-major operands in place (the host stages them otherwise):
// 16-bit inputs (wgmma's transpose bits), each CTA's share of a tile whole 64-row TMA boxes, and
// the fast mainloop.
template <class Config>
inline constexpr bool kSm90MnMajorOperands =
    Sm90TransposableWgmma<Sm90WgmmaOf<typename Config::Element, Config::TileN>> &&
    (Config::TileM / Config::ClusterN) % 64 == 0 && (Config::TileN / Config::ClusterM) % 64 == 0 &&
    Config::Partials == 0;  // (the promoted mainloops read K-major stages only)

// How the fp32 accumulation of an fp8 GEMM is done: inside the tensor core for the whole K
// (Fast), or promoted -- each k-tile's wgmmas (4 x k32 = 128 deep) accumulate into a fresh
// register tile that is then added to the fp32 accumulators (Promoted: the tensor core's fp8
// accumulation keeps fewer mantissa bits than fp32, so long K drifts). 16-bit inputs: Fast, but
// for the 16-wide skinny kernels and the _promoted 64-wide ones, whose long, unsplit K drifted
// past cuBLAS's error with an fp32 D (k16 steps summed in the tensor core: 3-15x at K = 8250) and
// whose memory-bound mainloop has time for the additions. The promoted mainloops read K-major
// stages only (MN-major operands are staged for them: kSm90MnMajorOperands); a kernel with both
// loops made ptxas serialize every wgmma (C7515), hence separate kernels.
// Promoted tiles up to 128 wide keep two partial tiles that alternate (the next k-tile's wgmmas
// run while the previous partial is added); 256-wide ones keep one, a 128-column half at a time:
// each half's wgmmas retire before the addition, and the other consumer warpgroup's wgmmas keep
// the tensor core busy meanwhile.
enum class Sm90Accumulation { Fast, Promoted };


// One configuration: input type, tile width, pipeline depth, cluster shape (ClusterM tile rows
// sharing B, or ClusterN tile columns sharing A), accumulation, and the column slabs the epilogue
// stages a tile in (2: a buffer half as wide, through which the tile's 64-column blocks rotate --
// room for one more pipeline stage; TMA-stored D only, the host takes the register epilogue
// otherwise), and whether a 16-bit C may arrive by TMA in the staging buffer (LoadsC: its own
// instances -- the load's second piece of mainloop cost the kernels that never read C 3-4% at
// 4096^3 on the H100, so the kernels for C unread leave it out).
template <class Element_, int TileN_, int Stages_, int ClusterM_, int ClusterN_ = 1,
          Sm90Accumulation Accumulation_ = Sm90Accumulation::Fast, int EpilogueSlabs_ = 1, int PromotionKTiles_ = 1,
          bool LoadsC_ = false, int Consumers_ = 2, Sm90Build Build_ = Sm90Build::general, bool BlockScaled_ = false,
          Sm90Im2colOperand Im2col_ = Sm90Im2colOperand::none>
struct Sm90GemmConfig {
  using Element = Element_;
  // An implicit-GEMM convolution: A or B is the im2col view of the activations (p.im2col; the
  // producers of kernel/sm90_gemm_producer_im2col.hpp), the rest is this GEMM.
  static constexpr Sm90Im2colOperand Im2col = Im2col_;
  // Block-scaled fp8 (DeepSeek-V3 style; kernel/sm90_gemm_block_scales.hpp): each k-tile's
  // products, promoted, are scaled by their rows' A scales and their 128-column block's B scale
  // (Sm90GemmParams::a_scales, b_scales) as they join the sum. Its own instances: the kernels
  // with per-tensor scales keep their plain additions.
  static constexpr bool BlockScaled = BlockScaled_;
  // The build (Sm90Build; gemm/device/sm90_build_choice.hpp says which calls each takes): Lean for
  // every lean build, LeanFused for the one with the fused epilogue, LeanMn for the one that reads
  // MN-major operands in place.
  static constexpr bool Lean = Build_ != Sm90Build::general;
  static constexpr bool LeanFused = Build_ == Sm90Build::lean_fused;
  static constexpr bool LeanMn = Build_ == Sm90Build::lean_mn;
  // The fused epilogue's bias loaded at a unit's start (sm90_prefetch_bias), where a tile's columns
  // are many: a 16-column tile loads its column pair at the epilogue as before (measured: the
  // prefetch and its barrier cost the 64x16 decode tile 5%).
  static constexpr bool PrefetchBias = (!Lean || LeanFused) && TileN_ >= 128;
  // Promoted accumulation with one partial tile: the k-tiles (128 deep for fp8) the tensor core
  // accumulates before each addition to the fp32 sum -- 1 (every 128 products) or 2 (every 256:
  // half the wait-and-add turnarounds; the warpgroup holds two stages at a time).
  static constexpr int PromotionKTiles = PromotionKTiles_;
  static constexpr Sm90Accumulation Accumulation = Accumulation_;
  // Consumer warpgroups, 64 rows of the tile each: 2 (128-row tiles), or 1 for the memory-bound
  // skinny kernels, whose 64-row tiles put twice as many CTAs on a long operand.
  static constexpr int Consumers = Consumers_;
  static constexpr int TileM = 64 * Consumers;  // 128 or 64
  static constexpr int TileN = TileN_;
  static constexpr int TileK = 128 / int(sizeof(Element));  // one 128-byte swizzle row
  static constexpr int Stages = Stages_;
  static constexpr int EpilogueSlabs = EpilogueSlabs_;
  static constexpr int SlabN = TileN / EpilogueSlabs;  // columns of the epilogue's staging buffer
  static constexpr int ClusterM = ClusterM_, ClusterN = ClusterN_;
  static constexpr int ClusterSize = ClusterM * ClusterN;
  static constexpr int Threads = 128 * (1 + Consumers);
  using Mma = typename Sm90WgmmaOf<Element, TileN>::Op;
  static constexpr int Accumulators = TileN / 2;      // fp32 registers per consumer thread (the sum)
  // Partial tiles beside the sum (promoted accumulation only): two of Accumulators registers, or
  // one of half as many.
  static constexpr int Partials = Accumulation == Sm90Accumulation::Fast ? 0 : TileN <= 128 ? 2 : 1;
  // A 256-wide tile is promoted in two 128-column halves (the sum's 128 registers and a
  // 64-register partial fit the budget).
  static constexpr int PartialSplits = Partials == 1 ? 2 : 1;
  static constexpr int PartialRegisters = Partials > 0 ? Accumulators / PartialSplits : 1;
  // Promoted fp8 kernels take every input pair at run time (a wgmma instruction each); the
  // fast-accumulating ones only e4m3 x e4m3 (four copies of their mainloop made ptxas serialize
  // the wgmmas, C7515: 1494 -> 1218 TFLOP/s at 8192^3 on the H100).
  static constexpr bool Fp8Pairs = std::is_same_v<Element, float_e4m3_t> && Partials > 0;
  // A D that TMA cannot store leaves through the copy warps' row copies (a row of the tile is 8,
  // 16 or 32 16-byte chunks); other widths take the register epilogue.
  static constexpr bool RowCopyEpilogue = EpilogueSlabs_ == 1 && (TileN == 64 || TileN == 128 || TileN == 256) && !Lean;
  // D leaves through the staging buffer and TMA stores of 64 x 64 boxes only from tiles of whole
  // boxes; the 16-wide skinny tiles (a D of at most 16 columns, or rows when swapped) always take
  // the register epilogue.
  static constexpr bool TmaStoreEpilogue = TileN % 64 == 0;
  // The kernel may write D transposed (p.d_transposed; its TMA stores stage each 64 x 64 block
  // transposed): the skinny kernels running the swapped problem, the block-scaled ones (which keep
  // the caller's A and B for a column-major D) and the implicit GEMMs with the pixels as B.
  static constexpr bool WritesTransposed =
      TileN <= 64 || BlockScaled_ || Im2col_ == Sm90Im2colOperand::b_pixels;
  // A 16-bit C arrives by TMA in the staging buffer (p.c_by_tma), which holds a whole tile; the
  // fast-accumulating mainloop issues the load part-way through.
  static constexpr bool TmaLoadsC = LoadsC_;
  static_assert(!LoadsC_ || (EpilogueSlabs_ == 1 && Accumulation == Sm90Accumulation::Fast),
                "Sm90GemmConfig: C by TMA needs a whole-tile staging buffer and the fast-accumulating mainloop (promoted "
                "fp8 kernels spilled with it)");
  static constexpr std::uint32_t StageBytes = std::uint32_t((TileM + TileN) * TileK * int(sizeof(Element)));
  // The producer hands each unit to the consumers in shared memory (Sm90UnitNote): kernels that
  // walk several tiles per CTA. The skinny kernels (TileN 64 or 16: a tile or two per CTA, their first
  // stage slow to arrive anyway) work it out themselves, which spills less in them.
  static constexpr bool UnitNotes = TileN > 64;
  // Held epilogue (fast-accumulating two-slab kernels with unit notes): a two-slab epilogue's
  // last SlabN / 64 blocks would wait for the first ones' stores to read the buffer, with both
  // consumers' wgmmas stopped. Each consumer keeps them instead, packed to 16 bits (16 registers
  // per block), goes on to the next unit, and stages and stores them once it has issued that
  // unit's first k-tile. (Holding the whole tile, stored over the first two k-tiles, measured no
  // better and spilled more; the promoted fp8 mainloop has no registers to spare.)
  static constexpr int HeldBlocks =
      EpilogueSlabs == 2 && Accumulation == Sm90Accumulation::Fast && UnitNotes ? (TileN - SlabN) / 64 : 0;
  // setmaxnreg: the producer needs few registers; 40 * 128 + 232 * 256 = 64512 <= 65536.
  static constexpr int ProducerRegisters = 40, ConsumerRegisters = 232;
  // The lean builds of this configuration, compiled beside it (src/gemm/sm90_launch.cuh) for the
  // 16-bit fast-accumulating kernels with tiles 128 to 256 wide (C by TMA in the _tmac ones; the
  // implicit-GEMM convolutions but the weight gradient's): LeanTwin for every such entry,
  // LeanFusedTwin and LeanMnTwin (MN-major operands read in place, where kSm90MnMajorOperands
  // holds: the data gradient's filters) for those whose instance asks for them. (Not the 64-wide
  // tiles yet: on the H100 the 128x64 kernel's lean build ran 1024x1024x4096 in 23.8 us
  // against the general build's 18.1, while 768^3 ran 0.8 us faster and the 1x2-cluster 128x64
  // kernel 256x4096x4096 2 us faster. Not understood: its k-loop recomputes the SharedStorage
  // base every k-tile (S2UR SR_CgaCtaId) where the general build keeps it in a register, but with
  // the base laundered into a register the time stayed (23.6 us).)
  static constexpr bool HasLeanTwin =
      !Lean && sizeof(Element_) == 2 && Accumulation_ == Sm90Accumulation::Fast && TileN_ % 64 == 0 && TileN_ >= 128 &&
      Im2col_ != Sm90Im2colOperand::b_taps;
  template <Sm90Build B>
  using Twin = Sm90GemmConfig<Element_, TileN_, Stages_, ClusterM_, ClusterN_, Accumulation_, EpilogueSlabs_, PromotionKTiles_,
                              LoadsC_, Consumers_, B, BlockScaled_, Im2col_>;
  using LeanTwin = Twin<Sm90Build::lean>;
  using LeanFusedTwin = Twin<Sm90Build::lean_fused>;
  using LeanMnTwin = Twin<Sm90Build::lean_mn>;

  static_assert(Stages >= 2, "Sm90GemmConfig: the TMA pipeline needs at least 2 stages; raise Stages");
  static_assert(!BlockScaled_ || (sizeof(Element_) == 1 && Accumulation_ == Sm90Accumulation::Promoted && TileN_ == 256 &&
                                  PromotionKTiles_ == 1 && Consumers_ == 2 && !LoadsC_ && !Lean),
                "Sm90GemmConfig: block scaling is built on the fp8 mainloop promoted every 128-deep k-tile in two "
                "128-column halves (one scale block each): fp8, Promoted, TileN 256, PromotionKTiles 1");
  static_assert(Im2col_ == Sm90Im2colOperand::none ||
                    (sizeof(Element_) == 2 && Accumulation_ == Sm90Accumulation::Fast && !BlockScaled_ && !LeanFused &&
                     (Im2col_ == Sm90Im2colOperand::a ? ClusterN_ == 1 : ClusterM_ == 1)),
                "Sm90GemmConfig: the implicit-GEMM convolution is a 16-bit fast-accumulating kernel whose clusters share "
                "the operand that is not the im2col view");
  static_assert(Consumers == 1 || Consumers == 2, "Sm90GemmConfig: 1 or 2 consumer warpgroups (64- or 128-row tiles)");
  static_assert(ClusterM == 1 || ClusterM == 2 || ClusterM == 4,
                "Sm90GemmConfig: ClusterM (CTAs sharing one B tile by multicast) must be 1, 2 or 4");
  static_assert(ClusterN == 1 || ClusterN == 2 || ClusterN == 4,
                "Sm90GemmConfig: ClusterN (CTAs sharing one A tile by multicast) must be 1, 2 or 4");
  static_assert(ClusterM == 1 || ClusterN == 1,
                "Sm90GemmConfig: a cluster runs along one dimension: ClusterM > 1 (B shared) or ClusterN > 1 (A shared)");
  static_assert(TileN % (8 * ClusterM) == 0, "Sm90GemmConfig: each CTA of a cluster multicasts TileN / ClusterM rows of B");
  static_assert(TileM % (8 * ClusterN) == 0, "Sm90GemmConfig: each CTA of a cluster multicasts TileM / ClusterN rows of A");
  static_assert(TileN % 64 == 0 || (TileN == 16 && Consumers == 1 && ClusterSize == 1 && EpilogueSlabs == 1 && !LoadsC_),
                "Sm90GemmConfig: the TMA-store epilogue writes 64-column boxes; TileN must be a multiple of 64 (or 16: the "
                "one-consumer skinny kernel without clusters, D from registers)");
  static_assert((EpilogueSlabs == 1 || EpilogueSlabs == 2) && (SlabN % 64 == 0 || !TmaStoreEpilogue),
                "Sm90GemmConfig: the epilogue stages a tile in 1 or 2 slabs of whole 64-column boxes");
  static_assert(PromotionKTiles == 1 || (PromotionKTiles == 2 && Accumulation == Sm90Accumulation::Promoted && TileN > 128 && Stages >= 4),
                "Sm90GemmConfig: promotion every 2 k-tiles is for the one-partial promoted mainloop (TileN 256) with at least 4 stages (it holds two)");
  static_assert(Accumulation == Sm90Accumulation::Fast || TileN == 16 || TileN == 64 || TileN == 128 || TileN == 256,
                "Sm90GemmConfig: promoted accumulation keeps the sum and partial tiles in registers; use TileN 16 or 64 "
                "(16-bit), 128 or 256 (fp8)");

  // The TMA-store epilogue's staging: per consumer, its 64 rows as TileN / 64 boxes of 64 x 64,
  // each in the 128-byte swizzle (what tma_d's descriptor reads).
  static constexpr int EpilogueBoxes = TileN / 64;
  struct SharedStorage {
    alignas(1024) Element a[Stages][TileM * TileK];  // (BLK_M,BLK_K) per stage, 128-byte swizzle
    alignas(1024) Element b[Stages][TileN * TileK];  // (BLK_N,BLK_K) per stage, 128-byte swizzle
    alignas(1024) std::uint16_t d[Consumers][64 * SlabN];  // (64,SlabN) of a 16-bit D per consumer, as 64x64 boxes
    TmaPipeline<Stages> pipeline;
    std::uint64_t c_full[Consumers];  // a consumer's block of C has arrived in d[consumer] (p.c_by_tma)
    detail::Sm90UnitNote units[UnitNotes ? Stages + 1 : 1];  // unit u in slot u % (Stages + 1), from the producer (UnitNotes)
    // The fused epilogue's column bias of a tile, bf16/fp16 pairs, per consumer (its threads meet
    // after writing it: sm90_share_bias). One buffer: a thread writes it again only at its next
    // epilogue, after the wgmmas of the mainloop between have completed -- which needs every warp
    // of the warpgroup to have issued them, so to be past this epilogue's reads. (1 KiB: the
    // 4-stage 128x256 kernel has 1.8 KiB to spare.)
    std::uint32_t bias[PrefetchBias ? Consumers : 1][PrefetchBias ? TileN / 2 : 1];
  };
  // The dynamic shared memory asked for: the storage plus room to align it to 1024 bytes.
  static constexpr int SmemBytes = int(sizeof(SharedStorage)) + 1024;
  static_assert(SmemBytes <= 232448, "Sm90GemmConfig: the stages do not fit the 227 KiB of shared memory; lower Stages");
};

// Every host and device pass agrees (a GCC 12 host pass once did not: Sm90TransposableWgmma).
static_assert(kSm90MnMajorOperands<Sm90GemmConfig<bfloat16_t, 256, 4, 2, 1, Sm90Accumulation::Fast, 2>> &&
                  !Sm90TransposableWgmma<Sm90WgmmaOf<bfloat16_t, 16>>,
              "kSm90MnMajorOperands: the 128x256 bf16 configuration reads MN-major operands in place; the 16-wide wgmma has no transposed form");

namespace detail {

// Stream-K fix-up of one consumer warpgroup's accumulators after unit w (p.stream_k). A unit
// that starts inside its tile stores them as fp32 into this CTA's slot of p.sk_partials (thread-
// major float4s: a warp's stores are 512 contiguous bytes) and raises the slot's flag; it
// returns false (no epilogue). The tile's finisher waits for each peer's flag in peer order and
// adds its partial (L2 loads: the slot was written by another SM), then returns true.
template <class Config>
TESSEL_DEVICE bool sm90_stream_k_fixup(Sm90GemmParams const& p, Sm90UnitNote const& w, float (&acc)[Config::Accumulators],
                                       int cluster, int cta_rank, int consumer, int wg_thread) {
  constexpr int Quads = Config::Accumulators / 4;
  auto const slot = [&](int c) { return (std::size_t(c) * Config::ClusterSize + cta_rank) * Config::Consumers + consumer; };
  if (!w.finishes) {
    float4* const to = reinterpret_cast<float4*>(p.sk_partials) + slot(cluster) * Quads * 128 + wg_thread;
    TESSEL_UNROLL
    for (int q = 0; q < Quads; ++q) to[q * 128] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    named_barrier_sync(sm90_consumer_barrier(consumer), 128);
    if (wg_thread == 0) flag_raise(p.sk_flags + slot(cluster), p.sk_epoch);
    return false;
  }
  for (int peer = w.first_peer; peer <= w.last_peer; ++peer) {
    if (wg_thread == 0) flag_await(p.sk_flags + slot(peer), p.sk_epoch);
    named_barrier_sync(sm90_consumer_barrier(consumer), 128);
    float4 const* const from = reinterpret_cast<float4 const*>(p.sk_partials) + slot(peer) * Quads * 128 + wg_thread;
    TESSEL_UNROLL
    for (int q = 0; q < Quads; ++q) {
      float4 const v = __ldcg(from + q * 128);
      acc[4 * q] += v.x, acc[4 * q + 1] += v.y, acc[4 * q + 2] += v.z, acc[4 * q + 3] += v.w;
    }
  }
  return true;
}

}  // namespace detail

template <class Config>
__global__ void __launch_bounds__(Config::Threads, 1) sm90_gemm_kernel(__grid_constant__ Sm90GemmParams const p) {
#if defined(TESSEL_ARCH_SM90A)
  using Element = typename Config::Element;
  using Mma = typename Config::Mma;
  using SharedStorage = typename Config::SharedStorage;
  constexpr int TileN = Config::TileN;
  constexpr int Stages = Config::Stages, ClusterSize = Config::ClusterSize;
  constexpr bool MnMajorOperands = kSm90MnMajorOperands<Config> && (!Config::Lean || Config::LeanMn);
  using Mainloop = collective::Sm90MmaConsumer<Config, MnMajorOperands>;  // the consumers' mainloops

  extern __shared__ char smem_raw[];
  // The warpgroup index through a shuffle from lane 0: ptxas then knows it is the same in every lane
  // of a warp, and keeps what derives from it (a consumer's A rows in the wgmma descriptors) in
  // uniform registers instead of moving each descriptor there (R2UR) before every wgmma.
  int const warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0), wg_thread = int(threadIdx.x) % 128;
  int const cta_rank = ClusterSize > 1 ? int(cluster_cta_rank()) : 0;
  // Every consumer warp of every CTA whose stage a multicast writes frees it.
  SharedStorage& s = detail::sm90_cta_prologue<SharedStorage, ClusterSize>(smem_raw, p, int(threadIdx.x),
                                                                          Config::Consumers * 4 * ClusterSize);

  int const cluster = int(blockIdx.x) / ClusterSize;

  if (warpgroup == 0) {
    // ---- producer ------------------------------------------------------------------------------
    warpgroup_reg_dealloc<Config::ProducerRegisters>();
    if (wg_thread == 0) {
      if constexpr (Config::Im2col == Sm90Im2colOperand::a || Config::Im2col == Sm90Im2colOperand::b_pixels)
        detail::sm90_produce_im2col_pixel_tiles<Config, MnMajorOperands>(p, s, cta_rank, cluster);
      else if constexpr (Config::Im2col == Sm90Im2colOperand::b_taps)
        detail::sm90_produce_im2col_b_tap_tiles<Config, MnMajorOperands, 0>(p, s, cta_rank, cluster);
      else
        detail::sm90_produce_tiles<Config, MnMajorOperands, Config::PromotionKTiles>(p, s, cta_rank, cluster);
    } else if (Config::Im2col == Sm90Im2colOperand::b_taps && wg_thread == 32) {
      // The weight gradient's second producer thread (warp 1): half of each stage's im2col copies.
      if constexpr (Config::Im2col == Sm90Im2colOperand::b_taps)
        detail::sm90_produce_im2col_b_tap_tiles<Config, MnMajorOperands, 1>(p, s, cta_rank, cluster);
    } else if constexpr (Config::RowCopyEpilogue) {
      if (p.staged_rows && wg_thread >= 64 && wg_thread < 64 + 32 * Config::Consumers) {
        // Warps 2 and 3 copy consumer 0's and 1's staged tiles of a D that TMA cannot store out to
        // global memory, overlapped with the consumers' next mainloop (warp 3 idles with one consumer).
        int const c = (wg_thread - 64) / 32, lane = wg_thread % 32;
        detail::sm90_copy_out_rows<Config>(p, s.d[c], c, lane, cta_rank, cluster);
      }
    }
  } else {
    // ---- consumers -----------------------------------------------------------------------------
    warpgroup_reg_alloc<Config::ConsumerRegisters>();
    int const consumer = warpgroup - 1;
    int const lane = wg_thread % 32;
    PipelineState st;
    float acc[Config::Accumulators];
    TESSEL_UNROLL
    for (int i = 0; i < Config::Accumulators; ++i) acc[i] = 0.0f;
    // The promoted mainloop's per-k-tile tiles (unused, and optimised away, otherwise).
    float part0[Config::PartialRegisters], part1[Config::Partials > 1 ? Config::PartialRegisters : 1];
    std::uint32_t c_parity = 0;  // of c_full[consumer] (p.c_by_tma)
    // The previous tile's held epilogue blocks (Config::HeldBlocks), packed, and where they go.
    constexpr int Held = Config::HeldBlocks;
    std::uint32_t held[Held > 0 ? 16 * Held : 1];
    int held_m0 = 0, held_n0 = 0, held_batch = 0;
    bool holding = false, draining = false;  // blocks held; their stores not yet seen reading the buffer
    auto const release_held = [&] {  // (sm90_epilogue_held)
      if constexpr (Held > 0) {
        if (holding) {  // uniform
          int ht = wg_thread;
          asm volatile("" : "+r"(ht));  // (as for the epilogue below: its addresses computed here)
          detail::sm90_epilogue_held<TileN, Config::SlabN, Held>(p, held, s.d[consumer], ht, consumer, held_m0, held_n0,
                                                                 held_batch);
          holding = false, draining = true;
        }
      }
    };
    auto const drain_staging = [&] {  // (sm90_epilogue_drain)
      if constexpr (Held > 0) {
        if (draining) {  // uniform
          detail::sm90_epilogue_drain(wg_thread, consumer);
          draining = false;
        }
      }
    };
    for (long long u = 0, units = detail::sm90_unit_count_of<Config>(p, cluster); u < units; ++u) {
      // The unit arrives with its first k-tile: the producer worked it out (sm90_produce_tiles) and
      // left it in slot u % (Stages + 1), which holds it until this unit's epilogue is done. The
      // k-tile range is read now; where the tile lies, where it is used (after the mainloop).
      detail::Sm90UnitNote own{};  // (a kernel without UnitNotes)
      if constexpr (Config::UnitNotes) {
        s.pipeline.consumer_wait(st);
      } else {
        own = detail::sm90_unit_note<Config>(detail::sm90_unit_of<Config>(p, cluster, u, Config::PromotionKTiles), cta_rank, p.batch);
      }
      detail::Sm90UnitNote const& w = Config::UnitNotes ? s.units[int(u % (Stages + 1))] : own;
      // Whole promotion blocks per K slice (an fp8 kernel may read one zero-filled k-tile past K).
      int const k_begin = w.k_begin, k_end = w.k_end;
      // The fused epilogue's bias, loaded now so that its latency passes under the mainloop
      // (sm90_prefetch_bias; the epilogue had waited for it once per 64 columns).
      detail::Sm90BiasShare bias_share{};
      if constexpr (Config::PrefetchBias) {
        if (p.fusion.active() && p.fusion.bias != nullptr)  // uniform
          bias_share = detail::sm90_prefetch_bias<TileN>(p, w.m0 + 64 * consumer, w.n0, wg_thread);
      }

      // The mainloop (collective/sm90_mma_consumer.hpp): acc becomes this warpgroup's 64 rows of the
      // unit's products over k-tiles [k_begin, k_end), each stage freed once its wgmmas have retired
      // -- promoted with one or two partial tiles, or fast, as Config says -- for one wgmma
      // instruction (an fp8 kernel takes each input pair with its own). Between k-tiles the fast
      // mainloop issues C's load and stores the held blocks through these hooks. (C's load is a
      // hook so that only a kernel that loads C hands wg_thread on by reference: taken by reference,
      // it lost its known sign in the copy warps' row copies, which then divided signed.)
      auto const load_c = [&](int box) {  // one box of C's TMA load into the staging buffer, by one thread
        if constexpr (Config::TmaLoadsC) {
          if (wg_thread == 0)
            detail::sm90_load_c_box<TileN>(p, s.d[consumer], &s.c_full[consumer], w.m0 + 64 * consumer, w.n0, w.batch, box);
        }
      };
      auto mainloop = [&](auto op, auto op_part) TESSEL_ALWAYS_INLINE {
        if constexpr (Config::Partials == 1) {
          Mainloop::template promoted_one_partial<decltype(op_part)>(p, s, st, w, k_begin, k_end, consumer, wg_thread, lane,
                                                                     acc, part0);
        } else if constexpr (Config::Partials == 2) {
          Mainloop::template promoted_two_partials<decltype(op)>(s, st, k_begin, k_end, consumer, lane, acc, part0, part1);
        } else {
          Mainloop::fast(p, s, st, k_begin, k_end, consumer, lane, acc, load_c, release_held, drain_staging);
        }
      };
      if constexpr (Config::Fp8Pairs) {
        auto pair = [&](auto a, auto b) TESSEL_ALWAYS_INLINE {
          using A = decltype(a);
          using B = decltype(b);
          mainloop(typename Sm90Fp8WgmmaOf<A, B, TileN>::Op{},
                   typename Sm90Fp8WgmmaOf<A, B, TileN / Config::PartialSplits>::Op{});
        };
        switch (p.fp8_pair) {
          case 1: pair(float_e4m3_t{}, float_e5m2_t{}); break;
          case 2: pair(float_e5m2_t{}, float_e4m3_t{}); break;
          default: pair(float_e4m3_t{}, float_e4m3_t{}); break;
        }
      } else {
        mainloop(Mma{}, Mma{});
      }

      // Stream-K fix-up (sm90_stream_k_fixup): a unit that starts inside its tile leaves its
      // partial for the tile's finisher and has no epilogue.
      if constexpr (!Config::Lean) {
        if (p.stream_k && !detail::sm90_stream_k_fixup<Config>(p, w, acc, cluster, cta_rank, consumer, wg_thread)) continue;
      }

      // Epilogue, on alpha * acc. The thread index is laundered first: every address the
      // epilogue derives from it is then computed here, per tile, instead of being hoisted out
      // of the tile loop by the compiler and kept live through the mainloop beside the 128
      // accumulators (which cost spills and 30% of the speed).
      if (p.alpha != 1.0f) {  // uniform; 128 multiplies per thread per tile saved in the common case
        TESSEL_UNROLL
        for (int i = 0; i < Config::Accumulators; ++i) acc[i] *= p.alpha;
      }
      int et = wg_thread;
      asm volatile("" : "+r"(et));
      int const m0 = w.m0, n0 = w.n0, slice = w.slice, batch = w.batch;
      if constexpr (!Config::Lean || Config::LeanFused) {  // (the other lean builds have none)
        if (p.fusion.active()) {  // uniform: the fused epilogue on acc; the paths below store it as is
          bool c_staged = false;  // C arrived in the staging buffer (p.c_by_tma) and joins from there
          if constexpr (Config::TmaLoadsC) {
            if (p.c_by_tma) {
              mbarrier_wait(&s.c_full[consumer], c_parity);
              c_parity ^= 1u;
              char const* const base = reinterpret_cast<char const*>(s.d[consumer]);
              if (p.out_f16) {
                detail::sm90_add_c_staged<half_t, TileN>(acc, base, et, p.beta);
              } else {
                detail::sm90_add_c_staged<bfloat16_t, TileN>(acc, base, et, p.beta);
              }
              c_staged = true;
            }
          }
          std::int64_t const row0 = std::int64_t(m0) + consumer * 64 + (et / 32) * 16 + (et % 32) / 4;
          bool const read_c = !Config::Lean && p.beta != 0.0f && !c_staged;  // (a lean build's C is unread)
          if constexpr (Config::PrefetchBias) {
            std::uint32_t const* const col_bias =
                detail::sm90_share_bias<TileN>(p, bias_share, s.bias[consumer], et, detail::sm90_consumer_barrier(consumer));
            detail::sm90_fuse_block<TileN>(p, acc, row0, std::int64_t(n0) + 2 * (et % 4), batch, read_c, col_bias,
                                           &bias_share);
          } else {
            detail::sm90_fuse_block<TileN>(p, acc, row0, std::int64_t(n0) + 2 * (et % 4), batch, read_c);
          }
        }
      }
      // Thread (warp, lane) holds tile rows r and r + 8 (r = 64 * consumer + 16 * warp + lane / 4),
      // column pairs 2 * (lane % 4) + 8j.
      bool staged = false;  // D left through the staging buffer (TMA stores, or the copy warps' rows)
      if constexpr (Config::Lean) {  // TMA stores of a D of the element's type (the host's rule)
        using Out = std::conditional_t<std::is_same_v<Element, half_t>, half_t, bfloat16_t>;
        detail::sm90_epilogue_staged<Out, TileN, Config::SlabN, Config::TmaLoadsC, Held, Config::WritesTransposed>(
            p, acc, s.d[consumer], et, consumer, m0 + 64 * consumer, n0, batch, u + 1 == units, &s.c_full[consumer], c_parity,
            held);
        if constexpr (Held > 0) {
          holding = true;
          held_m0 = m0 + 64 * consumer, held_n0 = n0, held_batch = batch;
        }
        staged = true;
        (void)slice;
      } else if constexpr (Config::TmaStoreEpilogue) {
        staged = p.tma_store || p.staged_rows;
        if (staged) {
          bool const last = u + 1 == units;
          if (p.out_f16) {
            detail::sm90_epilogue_staged<half_t, TileN, Config::SlabN, Config::TmaLoadsC, Held, Config::WritesTransposed>(
                p, acc, s.d[consumer], et, consumer, m0 + 64 * consumer, n0, batch, last, &s.c_full[consumer], c_parity, held);
          } else {
            detail::sm90_epilogue_staged<bfloat16_t, TileN, Config::SlabN, Config::TmaLoadsC, Held, Config::WritesTransposed>(
                p, acc, s.d[consumer], et, consumer, m0 + 64 * consumer, n0, batch, last, &s.c_full[consumer], c_parity, held);
          }
          if constexpr (Held > 0) {
            holding = true;
            held_m0 = m0 + 64 * consumer, held_n0 = n0, held_batch = batch;
          }
          if constexpr (Config::RowCopyEpilogue) {
            if (p.staged_rows && last) detail::sm90_copy_tile_rows<Config>(p, s.d[consumer], consumer, m0, n0, batch, et % 32, et / 32, 4);
          }
        }
      }
      if (!Config::Lean && !staged) {
        std::int64_t const row0 = std::int64_t(m0) + consumer * 64 + (et / 32) * 16 + (et % 32) / 4;
        std::int64_t const col0 = std::int64_t(n0) + 2 * (et % 4);
        bool const full_cols = std::int64_t(n0) + TileN <= p.n;
        constexpr bool T = Config::WritesTransposed;
        if (p.out_f32) {
          detail::sm90_epilogue_registers<float, TileN, T>(p, acc, row0, col0, full_cols, slice, batch);
        } else if (p.out_f16) {
          detail::sm90_epilogue_registers<half_t, TileN, T>(p, acc, row0, col0, full_cols, slice, batch);
        } else {
          detail::sm90_epilogue_registers<bfloat16_t, TileN, T>(p, acc, row0, col0, full_cols, slice, batch);
        }
      }
    }
    release_held();  // the last tile's
    if (p.tma_store && wg_thread == 0) tma_store_wait<0>();  // the staging buffer outlives its stores
  }
  if constexpr (ClusterSize > 1) cluster_sync();  // no CTA leaves while a peer may still signal it
#else
  (void)p;
  tessel::detail::arch_unavailable("sm90_gemm_kernel (wgmma and setmaxnreg need sm_90a)");
#endif
}

}  // namespace tessel::kernel
