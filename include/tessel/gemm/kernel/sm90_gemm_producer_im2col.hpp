// tessel/gemm/kernel/sm90_gemm_producer_im2col.hpp -- the producers of an sm_90a implicit-GEMM
// convolution CTA: the GEMM's producer (kernel/sm90_gemm_producer.hpp) with one operand read as
// the im2col view of the activations (Sm90GemmConfig::Im2col). Everything else -- consumers,
// epilogue, schedule, clusters, split-K -- is the GEMM's. The geometry: Sm90Im2col
// (kernel/sm90_gemm_params.hpp); the host side: src/conv/sm90_implicit_conv.cuh.
//
// The forward convolution and the data gradient (sm90_produce_im2col_pixel_tiles): output pixel m
// is a row of the pixel operand, output channel j a row of the filter operand, and GEMM-K walks
// k-tiles of one filter tap x 64 channels, channels fastest, then the taps in the filters' order.
// Per k-tile the producer thread
//   - loads the pixel tile with one TMA im2col copy: the tile's pixels from its first one, each
//     read at (its input position - pad) + the tap's offset (tap x dilation); the walk wraps across
//     rows and images by itself and reads zeros in the padding, past C and past the last image,
//     so a tile past the last pixel needs no edge handling;
//   - loads the filter tile through the filters' tensor map ((channels, filters, taps)), its k
//     coordinate the channel block and its batch coordinate the tap: K-major for the forward
//     convolution (the filters' channels are its GEMM-K), MN-major for the data gradient (the
//     filters' channels are its output channels; p.im2col.flip: tap taps - 1 - tap, the filters
//     flipped). The CTAs of a cluster (consecutive pixel tiles) each copy their share of the
//     filters and multicast it.
// Im2col A (Sm90Im2colOperand::a): the pixels are A (TileM a tile), the filters B. Im2col B, pixels
// (b_pixels): the filters are A and the pixels B, 256 a tile, for outputs of 64 or 128 channels
// (m64n256 wgmmas instead of m64n64 / m64n128); the kernel writes D transposed (p.d_transposed).
// Im2col B, taps (the weight gradient; sm90_produce_im2col_b_tap_tiles): dw (filters x
// taps*channels) = dy^T (filters x pixels) x im2col(x) (pixels x taps*channels). Per k-tile (64
// output pixels; the copies shared by two producer threads):
//   - A, dy^T, MN-major through tma_a as the GEMM loads an MN-major A (ClusterN CTAs of one tile
//     row share it by multicast);
//   - B, one TMA im2col copy per 64 columns: column block j is tap (n0 + 64 j) / channels, channels
//     (n0 + 64 j) % channels on (channels a multiple of 64, so a block never straddles two taps),
//     the k-tile's 64 pixels each read at its input position + the tap's offset: 64 pixel rows of
//     128 bytes, the MN-major box layout. The blocks' taps and the k-tiles' pixels are walked
//     (kernel/sm90_im2col_walk.hpp), not divided out.
// All copies are whole boxes (TMA zero-fills what lies past the tensors), so every stage
// announces StageBytes.
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/arch/sm90_copy_tma_ops.hpp>
#include <tessel/config.hpp>
#include <tessel/gemm/collective/sm90_operand_tile.hpp>
#include <tessel/gemm/kernel/sm90_gemm_cta.hpp>
#include <tessel/gemm/kernel/sm90_gemm_params.hpp>
#include <tessel/gemm/kernel/sm90_im2col_walk.hpp>
#include <tessel/pipeline/sm90_pipeline.hpp>

#include <cstdint>

namespace tessel::kernel::detail {

// One im2col copy of a box of the activations into smem: channels from c0, the pixels from origin o
// at the tap's offsets.
TESSEL_DEVICE inline void sm90_im2col_copy(Sm90Im2col const& g, TmaDescriptor const* map, std::uint64_t* full, void* smem,
                                           int c0, Sm90Im2colOrigin const& o, Sm90TapOffsets const& t) {
  if (g.rank == 4)
    SM90_TMA_LOAD_IM2COL::copy(map, full, smem, {c0, o.w, o.h, o.n}, {t.w, t.h});
  else
    SM90_TMA_LOAD_IM2COL::copy(map, full, smem, {c0, o.w, o.h, o.d, o.n}, {t.w, t.h, t.d});
}

// The k-tiles of unit u (w) into the ring: load(full barrier, k-tile) issues one stage's copies
// into stage st.index, whole boxes (StageBytes); the unit's note goes with its first k-tile
// (Config::UnitNotes, as in sm90_produce_tiles).
template <class Config, class Load>
TESSEL_DEVICE void sm90_produce_unit(Sm90GemmParams const& p, typename Config::SharedStorage& s, PipelineState& st,
                                     Sm90Unit const& w, long long u, int cta_rank, Load&& load) {
  int kt = w.k_begin;
  if constexpr (Config::UnitNotes) {
    s.pipeline.producer_wait(st);
    s.units[u % (Config::Stages + 1)] = sm90_unit_note<Config>(w, cta_rank, p.batch);
    load(s.pipeline.producer_expect(st, Config::StageBytes), kt);
    st.advance<Config::Stages>();
    ++kt;
  }
  for (; kt < w.k_end; ++kt) {
    load(s.pipeline.producer_acquire(st, Config::StageBytes), kt);
    st.advance<Config::Stages>();
  }
}

// fprop and dgrad: the pixels as A (Sm90Im2colOperand::a; the filters as B, shared along a cluster
// of ClusterM CTAs) or as B (b_pixels; the filters as A, shared along ClusterN).
template <class Config, bool MnMajorOperands>
TESSEL_DEVICE void sm90_produce_im2col_pixel_tiles(Sm90GemmParams const& p, typename Config::SharedStorage& s, int cta_rank,
                                                   int cluster) {
  using Element = typename Config::Element;
  using OperandTile = collective::Sm90OperandTile<Element, Config::TileK>;
  constexpr bool PixelsA = Config::Im2col == Sm90Im2colOperand::a;
  constexpr int TileK = Config::TileK, Sharers = PixelsA ? Config::ClusterM : Config::ClusterN;
  constexpr int Rows = (PixelsA ? Config::TileN : Config::TileM) / Sharers;  // this CTA's share of the filters
  constexpr std::uint16_t everyone = std::uint16_t((1u << Config::ClusterSize) - 1u);
  static_assert((PixelsA ? Config::ClusterN : Config::ClusterM) == 1,
                "sm90_produce_im2col_pixel_tiles: the pixel tile is not shared; clusters run along the filters");
  Sm90Im2col const& g = p.im2col;
  TmaDescriptor const* const pixel_map = PixelsA ? &p.tma_a : &p.tma_b;
  TmaDescriptor const* const filter_map = PixelsA ? &p.tma_b : &p.tma_a;
  bool const filters_mn_major = PixelsA ? p.b_mn_major : p.a_mn_major;
  int const share = Sharers > 1 ? cta_rank : 0;
  PipelineState st;
  for (long long u = 0, units = sm90_unit_count_of<Config>(p, cluster); u < units; ++u) {
    Sm90Unit const w = sm90_unit_of<Config>(p, cluster, u, 1);
    Sm90TileOrigin<Config> const at(w.tile, cta_rank);
    Sm90Im2colOrigin const o = sm90_im2col_origin(g, PixelsA ? at.m0 : at.n0);
    int const filter0 = (PixelsA ? at.n0 : at.m0) + share * Rows;
    int tap = w.k_begin / g.c_blocks, cb = w.k_begin - tap * g.c_blocks;
    Sm90TapOffsets offsets = sm90_tap_offsets(g, tap);
    sm90_produce_unit<Config>(p, s, st, w, u, cta_rank, [&](std::uint64_t* full, int) {
      Element* const pixels = PixelsA ? s.a[st.index] : s.b[st.index];
      Element* const filters = (PixelsA ? s.b[st.index] : s.a[st.index]) + share * Rows * TileK;
      sm90_im2col_copy(g, pixel_map, full, pixels, cb * TileK, o, offsets);
      OperandTile::template load<Rows, (Sharers > 1), MnMajorOperands>(filter_map, full, filters, everyone, filters_mn_major,
                                                                        cb * TileK, filter0, g.flip ? g.taps - 1 - tap : tap);
      if (++cb == g.c_blocks) cb = 0, ++tap, sm90_tap_advance(g, offsets);
    });
  }
}

// The weight gradient's producer, in two parts run by two threads of different warps (the
// producer warpgroup's threads 0 and 32). Part 0 waits for a free stage, writes the unit's note,
// announces StageBytes and loads A and the first half of the column blocks; part 1 waits for the
// same free stage and loads the other half, its copies completing on the same full barrier (whose
// transaction count may dip below zero until part 0's announcement, as a multicast peer's copies
// may). A stage is five or six copies, each a few dozen dependent instructions of one thread; two
// threads took the H200's 3x3 C64 56x56 wgrad (64 x 256 tiles) from 0.152 to 0.146 ms and the 3-D
// C64 one from 0.152 to 0.143. The copies alone now run faster than the kernel (docs/conv.md).
template <class Config, bool MnMajorOperands, int Part>
TESSEL_DEVICE void sm90_produce_im2col_b_tap_tiles(Sm90GemmParams const& p, typename Config::SharedStorage& s, int cta_rank,
                                               int cluster) {
  using Element = typename Config::Element;
  using OperandTile = collective::Sm90OperandTile<Element, Config::TileK>;
  constexpr int TileK = Config::TileK, ClusterN = Config::ClusterN;
  constexpr int RowsA = Config::TileM / ClusterN, Boxes = Config::TileN / 64, FirstHalf = Boxes / 2;
  constexpr std::uint16_t everyone = std::uint16_t((1u << Config::ClusterSize) - 1u);
  static_assert(Config::ClusterM == 1, "sm90_produce_im2col_b_tap_tiles: the im2col tile (B) is not shared; ClusterM must be 1");
  static_assert(MnMajorOperands, "sm90_produce_im2col_b_tap_tiles: dy^T and the im2col tile are MN-major");
  static_assert(Boxes >= 2, "sm90_produce_im2col_b_tap_tiles: each part loads at least one column block");
  Sm90Im2col const& g = p.im2col;
  int const share_a = ClusterN > 1 ? cta_rank : 0;
  int const j0 = Part == 0 ? 0 : FirstHalf;  // this part's column blocks: [j0, j0 + FirstHalf or the rest)
  PipelineState st;
  for (long long u = 0, units = sm90_unit_count_of<Config>(p, cluster); u < units; ++u) {
    Sm90Unit const w = sm90_unit_of<Config>(p, cluster, u, 1);
    Sm90TileOrigin<Config> const at(w.tile, cta_rank);
    int const a0 = at.m0 + share_a * RowsA;
    // This part's first column block (the later ones follow from it without a division).
    Sm90ColumnBlock const first = sm90_column_block(g, at.n0 + 64 * j0);
    Sm90PixelDigits pixel = sm90_pixel_digits(g, std::int64_t(w.k_begin) * TileK);
    // The copies of this part's column blocks of k-tile kt into stage st.index.
    auto const blocks = [&](std::uint64_t* full) {
      Sm90Im2colOrigin const o = sm90_im2col_origin(g, pixel);
      Element* const b = s.b[st.index];
      Sm90ColumnBlock block = first;
      TESSEL_UNROLL
      for (int j = 0; j < Boxes; ++j) {
        if ((j < FirstHalf) == (Part == 0)) {
          sm90_im2col_copy(g, &p.tma_b, full, b + j * 64 * TileK, block.c0, o, block.offsets);
          sm90_column_block_advance(g, block);
        }
      }
      sm90_pixel_advance(g, pixel, g.k_tile_step);
    };
    if (Part == 0) {
      sm90_produce_unit<Config>(p, s, st, w, u, cta_rank, [&](std::uint64_t* full, int kt) {
        OperandTile::template load<RowsA, (ClusterN > 1), MnMajorOperands>(&p.tma_a, full, s.a[st.index] + share_a * RowsA * TileK,
                                                                            everyone, true, kt * TileK, a0, 0);
        blocks(full);
      });
    } else {
      for (int kt = w.k_begin; kt < w.k_end; ++kt) {
        s.pipeline.producer_wait(st);
        blocks(&s.pipeline.full[st.index]);
        st.advance<Config::Stages>();
      }
    }
  }
}

}  // namespace tessel::kernel::detail
