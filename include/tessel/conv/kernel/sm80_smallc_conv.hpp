// tessel/conv/kernel/sm80_smallc_conv.hpp -- convolutions whose channel count on one side is tiny
// (the first layer of an image network: C = 3), on tensor cores without padding the tensors.
//
// The implicit GEMM tiles GEMM-K by channels; with C = 3 a k-tile of 32 holds ten taps and a
// fraction, and its dgrad has an N of 3 in a 128-wide tile. These two kernels shape the GEMM
// around the small side instead (mma.sync m16n8k16, fp32 accumulators):
//
// fprop, C <= 4 (sm80_smallc_fprop_kernel)
//   y[pix][k] = sum over (tap, c) of band[pix + tap][c] * w[k][tap][c]
//   M = 256 output pixels, N = 64 output channels, GEMM-K = 4 taps x 4 channels a k-step
//   (49 taps of the stem: 13 k-steps, 208 terms for 147). The CTA stages the input rows its
//   pixels read (the band, sm80_smallc_geometry.hpp) with 4 channels a pixel, so that one 32-bit
//   shared load is an A-fragment pair (two channels of one tap): a pixel's base offset plus the
//   tap's offset (r*dil_h*wp + s*dil_w) * 4, the taps' offsets a table. Each warp owns 32 pixels x
//   64 channels (2 x 8 MMAs a k-step from 8 A loads of 32 bits and 4 ldmatrix.x4 of the filters);
//   the filters are staged as [64][(tap, c)], rows 8 elements longer than the k-steps so that
//   ldmatrix's 8 rows meet 8 bank groups.
//
// dgrad, C <= 8 and K <= 64 (sm80_smallc_dgrad_kernel)
//   dx[h][w][c] = sum over the taps (r, s) that meet an output pixel, and k, of
//                 dy[(h + pad_h - r*dil_h) / stride_h][(w + pad_w - s*dil_w) / stride_w][k] * w[k][r][s][c]
//   N = the C output channels in one n8 MMA tile. dx columns of one phase, w + pad_w = phi (mod
//   stride_w), meet the same taps s, and 16 consecutive ones of them read 16 consecutive dy
//   pixels: an M tile is 16 such columns of one row, A one ldmatrix.x4 from the staged dy, per
//   tap that meets the row and the phase (at stride 2 a quarter of the 49 taps) and k-step of 16.
//   The CTA owns 16 dx rows x 64 columns of one image; warp w rows 2w and 2w + 1 (both row phases
//   at stride 2: the warps do equal work). dy is staged whole (K <= 64: 144 bytes a pixel, so that
//   ldmatrix's 8 consecutive pixels meet 8 bank groups and a tap's 4 k-steps are fixed offsets from
//   one address); the filters once per CTA as [tap][c][k], rows of kSmallcFilterPitch, 4 channel
//   rows where C <= 4.
//
// wgrad, C <= 4 and K <= 64 (sm80_smallc_wgrad_kernel)
//   dw[k][r][s][c] = sum over output pixels (n, p, q) of dy[n][p][q][k] * x[n][p*stride_h - pad_h + r*dil_h][q*stride_w - pad_w + s][c]
//   M = the K output channels (four m16 tiles), GEMM-K = the output pixels, N = (r, s, c). For one
//   filter row r the S*C columns (s, c) of pixel q are S*C consecutive elements of x's input row
//   (dilation 1 across), starting (q*stride_w - pad_w)*C: staged at full width, an input row is the
//   B operand of every pixel of its output row, no im2col. A B-fragment element is one 16-bit
//   shared load (pixel q0 + 2*(lane%4) + {0, 1, 8, 9}, column lane/4 of the n8 tile), A (dy^T)
//   ldmatrix.trans of the staged dy. The n8 tiles are R filter rows of ceil(S*C / 8) (21 for the
//   stem): warp group jt takes column tile jt of every filter row (kSmallcWgradWarpTiles = 7 tiles
//   accumulated, R <= 7; the sums of tiles past R are never stored), so its tiles' B elements lie a
//   band row apart and cost an add each to address. The two warps of a group take alternate
//   k-steps of the stage's two output rows and add their sums at the end. A CTA sums one
//   contiguous range of output rows (n, p), two a stage, cp.async double-buffered, into its fp32
//   slice of the partials; sm80_conv_slice_sum.hpp adds the slices in order (deterministic). Two
//   consecutive output rows of one image share their input rows: the stage holds them once
//   (stride_h + R rows), the second output row's filter row r stride_h rows down.
//
// fprop and dgrad are persistent (grid-stride over their tiles) and write through the convolution
// epilogue out = act(alpha * acc + beta * residual + bias), two channels a store where out allows;
// wgrad's epilogue is the slice sum's. Positions in the padding are staged as zeros and multiplied
// like the others.
#pragma once

#include <tessel/arch/arch_config.hpp>
#include <tessel/arch/sm75_copy_ldmatrix.hpp>
#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/arch/sm80_mma_sync.hpp>
#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_params.hpp>
#include <tessel/conv/kernel/sm80_smallc_geometry.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/schedule/fast_divisor.hpp>

#include <cstdint>
#include <numeric>
#include <type_traits>

namespace tessel::kernel {

// What the launch derives once from the problem (sm80_smallc_params).
struct Sm80SmallcParams {
  Sm80ConvParams p;
  int tiles;          // fprop: tiles_m * tiles_n, pixel tiles fastest; dgrad: N * tiles_h * tiles_w, columns fastest
  int tiles_m;        // fprop: pixel tiles (N*P*Q / 256, rounded up)
  int tiles_h, tiles_w;  // dgrad: blocks of 16 dx rows and of 64 dx columns
  FastDivisor32 div_sh, div_sw;  // dgrad: by stride_h, stride_w
  int r_step, s_step;  // dgrad: the taps r (s) that meet a dx row (column) step by stride / gcd(stride, dilation)
  int s_bias;          // dgrad: ceil((S-1)*dil_w / stride_w), so that a column's dy position plus it is >= 0
  int pixels;         // fprop: N*P*Q
  FastDivisor32 div_pq, div_q;  // fprop: a pixel index into (image, row, column)
  int wp;             // fprop: band width
  int ksteps;         // fprop: k-steps of 4 taps; wgrad: of 16 pixels a dy row (dgrad: always kSmallcDgradMaxK / 16)
  int filter_pitch;   // fprop: elements per staged filter row (dgrad: kSmallcFilterPitch)
  int stage_elems;    // elements of the band (fprop), of dy (dgrad), of one stage (wgrad) shared memory holds
  int smem_bytes;     // dynamic shared memory
  bool pairs;         // out (and the residual) take two channels as one 32-bit access
  // wgrad (sm80_smallc_wgrad_kernel; the split's fields set by the launch from Sm80ConvKernelParams):
  int rows;            // output rows N*P
  int rows_per_slice;  // output rows a CTA sums (CTA z: rows [z * rows_per_slice, ...))
  int groups;          // warp groups over GEMM-N, one per column tile of a filter row (two warps each)
  int row_elems;       // elements of a band row
  int lead;            // zeros before a band row's padding
  int used_elems;      // elements of x a band row copies (used columns x C)
  bool x_vec;          // band rows by 16-byte cp.async: x's address and row starts 16-byte aligned
  bool share_rows;     // a stage's two output rows of one image stage their input rows once (dilation 1 down, stride_h <= 7)
  float* partials;     // [slices][k][partial_ld]
  int partial_ld;
};

// Two adjacent channels share a 32-bit word in every pixel of a tensor: its address is 4-byte
// aligned and every stride of an extent above 1 even.
TESSEL_HOST_DEVICE inline bool smallc_pairs_ok(void const* ptr, long long const (&stride)[4], int const (&extent)[4]) {
  if (reinterpret_cast<std::uintptr_t>(ptr) % 4 != 0) return false;
  for (int i = 0; i < 4; ++i)
    if (extent[i] > 1 && stride[i] % 2 != 0) return false;
  return true;
}

// The launch's parameters for p (a fprop with C <= 4 or a dgrad with C <= 8, K <= 64; 2-D).
inline Sm80SmallcParams sm80_smallc_params(Sm80ConvParams const& p) {
  Sm80SmallcParams sp{};
  sp.p = p;
  int const taps = p.r * p.s;
  if (p.op == conv::Operator::kFprop) {
    sp.pixels = p.n * p.p * p.q;
    sp.div_pq = FastDivisor32::make(std::int64_t(p.p) * p.q);
    sp.div_q = FastDivisor32::make(p.q);
    sp.tiles_m = int(tessel::detail::ceil_div_ll(sp.pixels, kSmallcPixels));
    sp.tiles = sp.tiles_m * int(tessel::detail::ceil_div_ll(p.k, kSmallcChannels));
    sp.wp = int(smallc_fprop_band_width(p.q, p.s, p.stride_w, p.dilation_w));
    sp.ksteps = smallc_fprop_ksteps(taps);
    sp.filter_pitch = smallc_fprop_filter_pitch(taps);
    sp.stage_elems = int(smallc_fprop_band_elems(p.p, p.q, p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w));
    sp.smem_bytes = int(smallc_fprop_smem(p.p, p.q, p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w));
    int const ext[4] = {p.n, p.z, p.p, p.q};
    sp.pairs = smallc_pairs_ok(p.out, p.y_stride, ext) && (p.residual == nullptr || smallc_pairs_ok(p.residual, p.y_stride, ext));
  } else if (p.op == conv::Operator::kWgrad) {
    sp.rows = p.n * p.p;
    sp.rows_per_slice = sp.rows;
    sp.groups = smallc_wgrad_groups(p.s, p.c);
    sp.ksteps = int(smallc_wgrad_row_pixels(p.q) / 16);
    sp.row_elems = int(smallc_wgrad_row_elems(p.q, p.w, p.s, p.c, p.stride_w, p.pad_w));
    sp.lead = smallc_wgrad_lead(p.pad_w, p.c);
    sp.used_elems = int(smallc_wgrad_used_cols(p.q, p.w, p.s, p.stride_w, p.pad_w)) * p.c;
    sp.stage_elems = int(smallc_wgrad_stage_elems(p.q, p.w, p.s, p.c, p.stride_w, p.pad_w));
    sp.smem_bytes = int(smallc_wgrad_smem(p.q, p.w, p.s, p.c, p.stride_w, p.pad_w));
    auto const row_aligned = [&](int i, int extent) { return extent == 1 || p.x_stride[i] % 8 == 0; };
    sp.x_vec = reinterpret_cast<std::uintptr_t>(p.x) % 16 == 0 && row_aligned(0, p.n) && row_aligned(2, p.h);
    // Shared, the second output row's 7 tile rows (those past R too) start stride_h rows down and
    // must end inside the stage's 14.
    sp.share_rows = p.dilation_h == 1 && p.stride_h + kSmallcWgradWarpTiles <= kSmallcWgradRows * kSmallcWgradWarpTiles;
  } else {
    sp.tiles_h = int(tessel::detail::ceil_div_ll(p.h, kSmallcDgradRows));
    sp.div_sh = FastDivisor32::make(p.stride_h);
    sp.div_sw = FastDivisor32::make(p.stride_w);
    sp.r_step = p.stride_h / std::gcd(p.stride_h, p.dilation_h);
    sp.s_step = p.stride_w / std::gcd(p.stride_w, p.dilation_w);
    sp.s_bias = int(tessel::detail::ceil_div_ll(std::int64_t(p.s - 1) * p.dilation_w, p.stride_w));
    sp.tiles_w = int(tessel::detail::ceil_div_ll(p.w, kSmallcDgradCols));
    sp.tiles = p.n * sp.tiles_h * sp.tiles_w;
    sp.stage_elems = int(smallc_dgrad_dy_elems(p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w));
    sp.smem_bytes = int(smallc_dgrad_smem(p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.c));
    int const ext[4] = {p.n, p.d, p.h, p.w};
    sp.pairs = smallc_pairs_ok(p.out, p.x_stride, ext) && (p.residual == nullptr || smallc_pairs_ok(p.residual, p.x_stride, ext));
  }
  return sp;
}

namespace detail {

template <class Element>
using SmallcMma = std::conditional_t<std::is_same_v<Element, bfloat16_t>, SM80_16x8x16_F32BF16BF16F32_TN, SM80_16x8x16_F32F16F16F32_TN>;

template <class Element>
TESSEL_DEVICE inline void smallc_mma(float (&d)[4], std::uint32_t const (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  SmallcMma<Element>::fma(d[0], d[1], d[2], d[3], a[0], a[1], a[2], a[3], b0, b1, d[0], d[1], d[2], d[3]);
}

// The epilogue on `count` (1 or 2) adjacent channels of one pixel (conv_store_chunk's pairs): one
// 32-bit access for two channels where `pair` (out's and the residual's pairs 4-byte aligned).
// `plain`: alpha = 1 and nothing else to apply (the common case; smallc_plain, once a kernel), so
// the values are only rounded.
template <class Element>
TESSEL_DEVICE inline void smallc_store(ConvEpilogueOps const& ops, float v0, float v1, Element* out, Element const* residual,
                                       int channel, int count, bool pair, bool plain) {
  if (plain) {
    Element packed[2] = {conv_from_f32<Element>(v0), conv_from_f32<Element>(v1)};
    if (count == 2 && pair) {
      *reinterpret_cast<std::uint32_t*>(out) = *reinterpret_cast<std::uint32_t const*>(packed);
    } else {
      out[0] = packed[0];
      if (count == 2) out[1] = packed[1];
    }
    return;
  }
  float const acc[2] = {v0, v1};
  conv_store_chunk<Element, 2>(ops, acc, out, residual, channel, count, pair, pair);
}

// The epilogue is the identity: alpha = 1, no residual term, no bias, no activation.
TESSEL_DEVICE inline bool smallc_plain(ConvEpilogueOps const& ops, void const* residual) {
  return ops.alpha == 1.0f && (residual == nullptr || ops.beta == 0.0f) && ops.bias == nullptr && ops.act == ConvActivation::none;
}

// An element's bits from global memory through the read-only path.
template <class Element>
TESSEL_DEVICE inline std::uint16_t smallc_load_bits(Element const* src) {
  return __ldg(reinterpret_cast<unsigned short const*>(src));
}

}  // namespace detail

// ---- fprop -------------------------------------------------------------------------------------------

// Grid-stride over sp.tiles (pixel tiles fastest, then blocks of 64 output channels),
// kSmallcThreads threads, sp.smem_bytes of dynamic shared memory:
//   band     [band rows][wp][4]             Element   (sp.stage_elems)
//   filters  [64][filter_pitch]             Element   w[n0 + i][tap][c] at (i, tap*4 + c); 16-byte aligned rows
//   tap_off  [ksteps * 4]                   int       element offset of a tap in the band, -1 past R*S
template <class Element>
__global__ void __launch_bounds__(kSmallcThreads, 2) sm80_smallc_fprop_kernel(Sm80SmallcParams const sp) {
#if defined(TESSEL_ARCH_SM80)
  extern __shared__ __align__(16) unsigned char smem[];
  Sm80ConvParams const& p = sp.p;
  Element* const band = reinterpret_cast<Element*>(smem);
  Element* const filt = band + sp.stage_elems;
  int* const tap_off = reinterpret_cast<int*>(filt + kSmallcChannels * sp.filter_pitch);
  std::uint32_t const* const band32 = reinterpret_cast<std::uint32_t const*>(band);
  Element const* const x = static_cast<Element const*>(p.x);
  Element const* const w = static_cast<Element const*>(p.filter);
  int const tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32, g = lane / 4, tig = lane % 4;
  int const taps = p.r * p.s;
  int const span_h = (p.r - 1) * p.dilation_h + 1;

  for (int t = tid; t < sp.ksteps * 4; t += kSmallcThreads) {
    int const r = t / p.s, s = t - r * p.s;
    tap_off[t] = t < taps ? (r * p.dilation_h * sp.wp + s * p.dilation_w) * 4 : -1;
  }

  int staged_block = -1;
  for (int tile = int(blockIdx.x); tile < sp.tiles; tile += int(gridDim.x)) {
    int const block = tile / sp.tiles_m, tm = tile - block * sp.tiles_m;
    int const n0 = block * kSmallcChannels;
    __syncthreads();  // the previous tile's reads of shared memory are done
    if (block != staged_block) {
      for (int i = tid; i < kSmallcChannels * sp.filter_pitch; i += kSmallcThreads) {
        int const row = i / sp.filter_pitch, e = i - row * sp.filter_pitch;
        int const tap = e / 4, c = e - tap * 4, kk = n0 + row;
        std::uint16_t bits = 0;
        if (kk < p.k && tap < taps && c < p.c) bits = detail::smallc_load_bits(w + std::int64_t(kk) * p.w_stride_k + tap * p.c + c);
        reinterpret_cast<std::uint16_t*>(filt)[i] = bits;
      }
      staged_block = block;
    }

    // The tile's pixels [m0, m_last] run from image na, row pa to image nb, row pb. Band rows: image
    // na's rows pa..(na == nb ? pb : P-1), then whole images, then image nb's rows 0..pb.
    int const m0 = tm * kSmallcPixels;
    int const m_last = min(m0 + kSmallcPixels, sp.pixels) - 1;
    int const pq = p.p * p.q;
    int const na = int(sp.div_pq.div(std::uint32_t(m0))), pa = int(sp.div_q.div(std::uint32_t(m0 - na * pq)));
    int const nb = int(sp.div_pq.div(std::uint32_t(m_last))), pb = int(sp.div_q.div(std::uint32_t(m_last - nb * pq)));
    int const rows0 = ((na == nb ? pb : p.p - 1) - pa) * p.stride_h + span_h;
    int const rows_full = (p.p - 1) * p.stride_h + span_h;
    int const rows_last = pb * p.stride_h + span_h;
    int const band_rows = na == nb ? rows0 : rows0 + (nb - na - 1) * rows_full + rows_last;
    // The band in tasks of one row and 128 columns, a warp's lanes 4 columns each with their loads
    // issued together (a pixel: C elements of x, or zeros in the padding).
    int const col_blocks = (sp.wp + 127) / 128;
    for (int task = warp; task < band_rows * col_blocks; task += kSmallcThreads / 32) {
      int const b = task / col_blocks, col0 = (task - b * col_blocks) * 128 + lane;
      int image = na, local = b, p_start = pa;
      if (b >= rows0) {
        int const seg = (b - rows0) / rows_full;
        image = na + 1 + seg, local = b - rows0 - seg * rows_full, p_start = 0;
      }
      int const h = p_start * p.stride_h - p.pad_h + local;
      bool const row_ok = unsigned(h) < unsigned(p.h);
      Element const* const xrow = x + std::int64_t(image) * p.x_stride[0] + std::int64_t(row_ok ? h : 0) * p.x_stride[2];
      std::uint16_t v[4][kSmallcMaxC];
      TESSEL_UNROLL
      for (int u = 0; u < 4; ++u) {
        int const wc = col0 + u * 32 - p.pad_w;
        bool const ok = row_ok && unsigned(wc) < unsigned(p.w);
        Element const* const px = xrow + std::int64_t(ok ? wc : 0) * p.x_stride[3];
        TESSEL_UNROLL
        for (int c = 0; c < kSmallcMaxC; ++c) v[u][c] = ok && c < p.c ? detail::smallc_load_bits(px + c) : std::uint16_t(0);
      }
      Element* const dst = band + std::int64_t(b) * sp.wp * 4;
      TESSEL_UNROLL
      for (int u = 0; u < 4; ++u) {
        int const col = col0 + u * 32;
        if (col >= sp.wp) break;
        uint2 packed;
        packed.x = std::uint32_t(v[u][0]) | (std::uint32_t(v[u][1]) << 16);
        packed.y = std::uint32_t(v[u][2]) | (std::uint32_t(v[u][3]) << 16);
        *reinterpret_cast<uint2*>(dst + col * 4) = packed;
      }
    }

    // The warp's 32 pixels: rows g and g + 8 of its two m16 tiles. A pixel past the problem reads
    // the tile's last pixel and writes nothing.
    int pix_off[2][2];
    TESSEL_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      TESSEL_UNROLL
      for (int half = 0; half < 2; ++half) {
        int const m = min(m0 + warp * 32 + mt * 16 + half * 8 + g, m_last);
        int const n = int(sp.div_pq.div(std::uint32_t(m))), rem = m - n * pq, pp = int(sp.div_q.div(std::uint32_t(rem))), qq = rem - pp * p.q;
        int const row = n == na ? (pp - pa) * p.stride_h : rows0 + (n - na - 1) * rows_full + pp * p.stride_h;
        pix_off[mt][half] = (row * sp.wp + qq * p.stride_w) * 4 + (tig & 1) * 2;
      }
    }
    __syncthreads();  // the band (and the filters) staged

    float acc[2][8][4];
    TESSEL_UNROLL
    for (int mt = 0; mt < 2; ++mt)
      TESSEL_UNROLL
      for (int nt = 0; nt < 8; ++nt)
        TESSEL_UNROLL
        for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;

    // ldmatrix.x4 of the filters: lanes 0-15 give rows 0-7 of an n8 tile (k 0-7, then 8-15), lanes
    // 16-31 those of the next tile.
    int const b_lane = ((lane / 16) * 8 + lane % 8) * sp.filter_pitch + ((lane / 8) % 2) * 8;
#pragma unroll 2
    for (int j = 0; j < sp.ksteps; ++j) {
      // k = tig*2 + {0,1} is tap 4j + tig/2, channels (tig%2)*2 + {0,1}; k + 8 is tap 4j + 2 + tig/2.
      int const off_lo = tap_off[4 * j + tig / 2], off_hi = tap_off[4 * j + 2 + tig / 2];
      std::uint32_t a[2][4];
      TESSEL_UNROLL
      for (int mt = 0; mt < 2; ++mt) {
        TESSEL_UNROLL
        for (int half = 0; half < 2; ++half) {
          a[mt][half] = off_lo >= 0 ? band32[(pix_off[mt][half] + off_lo) / 2] : 0u;
          a[mt][2 + half] = off_hi >= 0 ? band32[(pix_off[mt][half] + off_hi) / 2] : 0u;
        }
      }
      TESSEL_UNROLL
      for (int pair = 0; pair < 4; ++pair) {  // n8 tiles 2*pair and 2*pair + 1: one ldmatrix.x4
        std::uint32_t b[4];
        SM75_U32x4_LDSM_N::copy(*reinterpret_cast<uint128_t const*>(filt + b_lane + pair * 16 * sp.filter_pitch + j * 16), b[0], b[1],
                                b[2], b[3]);
        TESSEL_UNROLL
        for (int mt = 0; mt < 2; ++mt) {
          detail::smallc_mma<Element>(acc[mt][2 * pair], a[mt], b[0], b[1]);
          detail::smallc_mma<Element>(acc[mt][2 * pair + 1], a[mt], b[2], b[3]);
        }
      }
    }

    detail::ConvEpilogueOps const ops{p.alpha, p.beta, p.bias, p.activation};
    bool const plain = detail::smallc_plain(ops, p.residual);
    Element* const out = static_cast<Element*>(p.out);
    Element const* const residual = static_cast<Element const*>(p.residual);
    TESSEL_UNROLL
    for (int mt = 0; mt < 2; ++mt) {
      TESSEL_UNROLL
      for (int half = 0; half < 2; ++half) {
        int const m = m0 + warp * 32 + mt * 16 + half * 8 + g;
        if (m > m_last) continue;
        int const n = int(sp.div_pq.div(std::uint32_t(m))), rem = m - n * pq, pp = int(sp.div_q.div(std::uint32_t(rem))), qq = rem - pp * p.q;
        std::int64_t const pixel = std::int64_t(n) * p.y_stride[0] + std::int64_t(pp) * p.y_stride[2] + std::int64_t(qq) * p.y_stride[3];
        if (plain && sp.pairs && n0 + kSmallcChannels <= p.k) {  // the common case: 8 pairs at fixed offsets
          Element* const o = out + pixel + n0 + tig * 2;
          TESSEL_UNROLL
          for (int nt = 0; nt < 8; ++nt) {
            Element const packed[2] = {detail::conv_from_f32<Element>(acc[mt][nt][half * 2]),
                                       detail::conv_from_f32<Element>(acc[mt][nt][half * 2 + 1])};
            *reinterpret_cast<std::uint32_t*>(o + nt * 8) = *reinterpret_cast<std::uint32_t const*>(packed);
          }
          continue;
        }
        TESSEL_UNROLL
        for (int nt = 0; nt < 8; ++nt) {
          int const ch = n0 + nt * 8 + tig * 2;
          if (ch >= p.k) continue;
          std::int64_t const o = pixel + ch;
          detail::smallc_store<Element>(ops, acc[mt][nt][half * 2], acc[mt][nt][half * 2 + 1], out + o,
                                        residual ? residual + o : nullptr, ch, p.k - ch < 2 ? 1 : 2, sp.pairs, plain);
        }
      }
    }
  }
#endif
}

// ---- dgrad -------------------------------------------------------------------------------------------

// Grid-stride over sp.tiles (dx blocks of 16 rows x 64 columns: columns fastest, then rows, then
// images), kSmallcThreads threads, sp.smem_bytes of dynamic shared memory:
//   dy       [dy rows][dy cols][72]          Element   channels 0-63 of a pixel, then 8 unused
//   filters  [R*S][rows][kSmallcFilterPitch] Element   w[k][tap][c] at (tap, c, k); rows = smallc_dgrad_filter_rows(C)
template <class Element>
__global__ void __launch_bounds__(kSmallcThreads, 2) sm80_smallc_dgrad_kernel(Sm80SmallcParams const sp) {
#if defined(TESSEL_ARCH_SM80)
  extern __shared__ __align__(16) unsigned char smem[];
  Sm80ConvParams const& p = sp.p;
  Element* const dys = reinterpret_cast<Element*>(smem);
  Element* const filt = dys + sp.stage_elems;
  std::uint32_t const* const filt32 = reinterpret_cast<std::uint32_t const*>(filt);
  Element const* const dy = static_cast<Element const*>(p.y);
  Element const* const w = static_cast<Element const*>(p.filter);
  int const tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32, g = lane / 4, tig = lane % 4;
  int const taps = p.r * p.s;
  int const filter_rows = smallc_dgrad_filter_rows(p.c);
  int const RowElems = filter_rows * kSmallcFilterPitch;  // one tap's filters

  for (int i = tid; i < taps * RowElems; i += kSmallcThreads) {
    int const tap = i / RowElems, e = i - tap * RowElems, c = e / kSmallcFilterPitch, kk = e - c * kSmallcFilterPitch;
    std::uint16_t bits = 0;
    if (kk < p.k && c < p.c) bits = detail::smallc_load_bits(w + std::int64_t(kk) * p.w_stride_k + tap * p.c + c);
    reinterpret_cast<std::uint16_t*>(filt)[i] = bits;
  }

  detail::ConvEpilogueOps const ops{p.alpha, p.beta, p.bias, p.activation};
  bool const plain = detail::smallc_plain(ops, p.residual);
  Element* const out = static_cast<Element*>(p.out);
  Element const* const residual = static_cast<Element const*>(p.residual);

  for (int tile = int(blockIdx.x); tile < sp.tiles; tile += int(gridDim.x)) {
    int const tw = tile % sp.tiles_w, rest = tile / sp.tiles_w, th = rest % sp.tiles_h, n = rest / sp.tiles_h;
    int const h0 = th * kSmallcDgradRows, w0 = tw * kSmallcDgradCols;
    int const p_lo = int(smallc_dgrad_first(h0, p.r, p.pad_h, p.stride_h, p.dilation_h));
    int const q_lo = int(smallc_dgrad_first(w0, p.s, p.pad_w, p.stride_w, p.dilation_w));
    int const rows = int(smallc_dgrad_extent(h0, kSmallcDgradRows, p.r, p.pad_h, p.stride_h, p.dilation_h));
    int const cols = int(smallc_dgrad_extent(w0, kSmallcDgradCols, p.s, p.pad_w, p.stride_w, p.dilation_w));

    __syncthreads();  // the previous tile's reads of dy are done
    Element const* const dyn = dy + std::int64_t(n) * p.y_stride[0];
    // A thread copies chunk tid % 8 of every 32nd pixel from pixel tid / 8 on, its (row, column)
    // stepped without a division.
    {
      int const chunk = tid % 8, first = tid / 8;
      int row = first / cols, col = first - row * cols;
      bool const chunk_ok = chunk * 8 < p.k;
      Element* dst = dys + first * kSmallcDgradPixelPitch + chunk * 8;
      for (int pix = first; pix < rows * cols; pix += kSmallcThreads / 8, dst += (kSmallcThreads / 8) * kSmallcDgradPixelPitch) {
        int const pp = p_lo + row, qq = q_lo + col;
        bool const ok = chunk_ok && unsigned(pp) < unsigned(p.p) && unsigned(qq) < unsigned(p.q);
        Element const* const src = ok ? dyn + std::int64_t(pp) * p.y_stride[2] + std::int64_t(qq) * p.y_stride[3] + chunk * 8 : dy;
        SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>::copy(*reinterpret_cast<uint128_t const*>(src), *reinterpret_cast<uint128_t*>(dst), ok);
        for (col += kSmallcThreads / 8; col >= cols; col -= cols) ++row;
      }
    }
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();

    for (int rr = 0; rr < 2; ++rr) {
      int const h = h0 + warp * 2 + rr;
      if (h >= p.h) break;
      int const w_end = min(w0 + kSmallcDgradCols, p.w);
      for (int phase = 0; phase < p.stride_w; ++phase) {
        // The columns of this phase: w + pad_w = phase (mod stride_w), from w_first on.
        int const sw = p.stride_w, base = w0 + p.pad_w;
        int const ahead = phase - (base - int(sp.div_sw.div(unsigned(base))) * sw);
        int const w_first = w0 + (ahead < 0 ? ahead + sw : ahead);
        if (w_first >= w_end) continue;
        int const count = int(sp.div_sw.div(unsigned(w_end - w_first + sw - 1)));
        int const mtiles = (count + 15) / 16;  // <= 4: 64 columns at stride 1, 32 or fewer beyond
        // The taps that meet this row and phase: lane r's dy row (r < R) and lane s's first dy
        // column (s < S), relative to the staged block, or -1; their ballots list them.
        // (Divisions by the strides through FastDivisor32, of values made >= 0 first.)
        int const th_r = h + p.pad_h - lane * p.dilation_h;
        int const dy_r = th_r >= 0 ? int(sp.div_sh.div(unsigned(th_r))) : 0;
        bool const r_ok = lane < p.r && th_r >= 0 && dy_r * p.stride_h == th_r && dy_r < p.p;
        int const r_row = r_ok ? dy_r - p_lo : -1;
        int const tw_s = lane < p.s ? w_first + p.pad_w - lane * p.dilation_w + sp.s_bias * sw : 0;  // >= 0
        int const dy_s = int(sp.div_sw.div(unsigned(tw_s)));
        bool const s_ok = lane < p.s && dy_s * sw == tw_s;
        int const s_col = s_ok ? dy_s - sp.s_bias - q_lo : -1;
        unsigned const r_taps = __ballot_sync(0xffffffffu, r_ok), s_taps = __ballot_sync(0xffffffffu, s_ok);
        std::int64_t const row_off = std::int64_t(n) * p.x_stride[0] + std::int64_t(h) * p.x_stride[2];

        // The row and phase's taps as a list, 32 at a time: entry i (lane i) is the i-th pair of an
        // r and an s that meet it, r major -- the dy pixel of its first column relative to the
        // staged block, and the word where the tap's filters start. Each tap then costs two
        // shuffles that do not wait on the tap before it. The r that meet a row are every r_step-th
        // from the first (a residue class within a range), the s likewise.
        int const nr = __popc(r_taps), ns = __popc(s_taps), taps_met = nr * ns;

        // M tiles two at a time (at stride 1 along w a row has four).
        for (int m0 = 0; m0 < mtiles; m0 += 2) {
          float acc[2][2][4];  // [k-step parity][M tile]: four independent MMA chains
          int row_of[2];       // the dy pixel, after the tap's base, whose row lane % 16 gives ldmatrix
          TESSEL_UNROLL
          for (int mt = 0; mt < 2; ++mt) {
            row_of[mt] = min((m0 + mt) * 16 + lane % 16, count - 1);
            TESSEL_UNROLL
            for (int e = 0; e < 4; ++e) acc[0][mt][e] = acc[1][mt][e] = 0.0f;
          }
          for (int t0 = 0; t0 < taps_met; t0 += 32) {
            int entry_base = 0, entry_filter = 0;
            {
              int const i = min(t0 + lane, taps_met - 1), ri = i / ns, si = i - ri * ns;
              int const r = __ffs(int(r_taps)) - 1 + ri * sp.r_step, s = __ffs(int(s_taps)) - 1 + si * sp.s_step;
              int const row = __shfl_sync(0xffffffffu, r_row, r), col = __shfl_sync(0xffffffffu, s_col, s);
              entry_base = row * cols + col;
              entry_filter = (r * p.s + s) * filter_rows * (kSmallcFilterPitch / 2);
            }
            int const in_chunk = min(32, taps_met - t0);
#pragma unroll 2
            for (int t = 0; t < in_chunk; ++t) {
              int const base = __shfl_sync(0xffffffffu, entry_base, t);
              std::uint32_t const* const fb =
                  filt32 + __shfl_sync(0xffffffffu, entry_filter, t) + (g & (filter_rows - 1)) * (kSmallcFilterPitch / 2) + tig;
              // Pixel pix's 16-byte chunk c sits at pix * 144 + c * 16 bytes; lanes 16-31 read k-step
              // j's upper chunk 2j + 1.
              unsigned row_addr[2];
              TESSEL_UNROLL
              for (int mt = 0; mt < 2; ++mt) row_addr[mt] = unsigned(base + row_of[mt]) * (kSmallcDgradPixelPitch * 2) + unsigned(lane / 16) * 16;
              TESSEL_UNROLL
              for (int j = 0; j < kSmallcDgradMaxK / 16; ++j) {
                std::uint32_t const b0 = fb[j * 8], b1 = fb[j * 8 + 4];
                TESSEL_UNROLL
                for (int mt = 0; mt < 2; ++mt) {
                  std::uint32_t a[4];
                  unsigned const at = row_addr[mt] + unsigned(j) * 32;
                  SM75_U32x4_LDSM_N::copy(*reinterpret_cast<uint128_t const*>(reinterpret_cast<unsigned char const*>(dys) + at), a[0], a[1],
                                          a[2], a[3]);
                  detail::smallc_mma<Element>(acc[j % 2][mt], a, b0, b1);
                }
              }
            }
          }
          TESSEL_UNROLL
          for (int mt = 0; mt < 2; ++mt)
            TESSEL_UNROLL
            for (int e = 0; e < 4; ++e) acc[0][mt][e] += acc[1][mt][e];

          int const ch = tig * 2;
          if (ch >= p.c) continue;
          TESSEL_UNROLL
          for (int mt = 0; mt < 2; ++mt) {
            TESSEL_UNROLL
            for (int half = 0; half < 2; ++half) {
              int const jj = (m0 + mt) * 16 + half * 8 + g;
              if (jj >= count) continue;
              std::int64_t const o = row_off + std::int64_t(w_first + jj * p.stride_w) * p.x_stride[3] + ch;
              detail::smallc_store<Element>(ops, acc[0][mt][half * 2], acc[0][mt][half * 2 + 1], out + o, residual ? residual + o : nullptr,
                                            ch, p.c - ch < 2 ? 1 : 2, sp.pairs, plain);
            }
          }
        }
      }
    }
  }
#endif
}

// ---- wgrad -------------------------------------------------------------------------------------------

// CTA z sums output rows [z * rows_per_slice, min((z + 1) * rows_per_slice, rows)) into slice z of
// sp.partials; 64 * sp.groups threads (warp w: column tile w % groups, k-step parity w / groups),
// sp.smem_bytes of dynamic shared memory, kSmallcWgradStages stages of sp.stage_elems:
//   dy    [kSmallcWgradRows][ksteps * 16][64]         Element   chunk j of pixel i at chunk j ^ (i % 8)
//   band  [kSmallcWgradRows * 7][row_elems]           Element   x[n][h][w][c] at lead + (w + pad_w)*C + c
//         output row `slot`'s filter row r at band row slot * 7 + r, or, where the stage shares its
//         input rows (shared0 / shared1 below), slot * stride_h + r
// then, after the last stage, the accumulators the second warp of each group hands the first.
// Swc: stride_w * C where it is known when compiling (6: C = 3 at stride 2, an RGB stem), so that the
// B elements' pixel offsets are immediates; 0: read from sp.
template <class Element, int Swc>
__global__ void __maxnreg__(168) sm80_smallc_wgrad_kernel(Sm80SmallcParams const sp) {
#if defined(TESSEL_ARCH_SM80)
  extern __shared__ __align__(16) unsigned char smem[];
  Sm80ConvParams const& p = sp.p;
  Element* const stages = reinterpret_cast<Element*>(smem);
  Element const* const x = static_cast<Element const*>(p.x);
  Element const* const dy = static_cast<Element const*>(p.y);
  int const threads = 64 * sp.groups;
  int const tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32, g = lane / 4, tig = lane % 4;
  int const jt = warp % sp.groups, parity = warp / sp.groups;  // the warp's column tile and k-step parity
  int const pixels = sp.ksteps * 16;                             // of a staged dy row
  int const dy_elems = kSmallcWgradRows * pixels * kSmallcWgradMaxK;  // of a stage, before its band
  int const swc = Swc > 0 ? Swc : p.stride_w * p.c;              // band elements from one pixel to the next
  int const row_begin = int(blockIdx.x) * sp.rows_per_slice;
  int const row_end = min(row_begin + sp.rows_per_slice, sp.rows);
  int const stage_count = (row_end - row_begin + kSmallcWgradRows - 1) / kSmallcWgradRows;

  // Zeros everywhere first: the padding and the columns past the used ones are never written again.
  for (int i = tid; i < kSmallcWgradStages * sp.stage_elems / 8; i += threads) reinterpret_cast<uint4*>(stages)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();

  // Stage i's rows into buffer i % 2: dy by cp.async (zeros past Q and K), the band rows by cp.async
  // where x allows, else element by element (zeros for rows in the padding and past the range). A
  // thread copies one 16-byte chunk of every (8 * groups)-th dy pixel: the same chunk after the
  // swizzle each time.
  int const dy_chunk = tid % 8, dy_step = threads / 8;
  int const dy_dst = (tid / 8) * 64 + (dy_chunk ^ ((tid / 8) % 8)) * 8;
  int const chunks = sp.x_vec ? sp.used_elems / 8 : 0;  // 16-byte chunks of a band row
  int const chunk_r = chunks > 0 ? tid / chunks : 0, chunk_col = tid - chunk_r * chunks;  // the thread's first chunk
  int next_n = row_begin / p.p, next_pp = row_begin - next_n * p.p;  // the next row to stage: image, output row
  // Band rows [row0, row0 + rows) of a buffer from x's rows h_first, h_first + h_step, ... of image n:
  // 16-byte chunks (zeros for rows in the padding or not live), then the elements past the last
  // whole chunk -- every element where x allows no chunks.
  auto const copy_rows = [&](Element* band, int row0, int rows, int n, int h_first, int h_step, bool live) {
    Element* const brows = band + row0 * sp.row_elems + sp.lead + p.pad_w * p.c;
    Element const* const xn = x + std::int64_t(n) * p.x_stride[0];
    if (chunks > 0) {
      for (int r = chunk_r, col = chunk_col; r < rows;) {
        int const h = h_first + r * h_step;
        uint128_t* const to = reinterpret_cast<uint128_t*>(brows + r * sp.row_elems + col * 8);
        if (live && unsigned(h) < unsigned(p.h))
          SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>::copy(*reinterpret_cast<uint128_t const*>(xn + std::int64_t(h) * p.x_stride[2] + col * 8), *to);
        else
          *reinterpret_cast<uint4*>(to) = make_uint4(0, 0, 0, 0);
        for (col += threads; col >= chunks; col -= chunks) ++r;
      }
    }
    int const tail = sp.used_elems - chunks * 8;
    for (int e = tid; e < rows * tail; e += threads) {
      int const r = e / tail, col = chunks * 8 + (e - r * tail);
      int const h = h_first + r * h_step;
      bool const ok = live && unsigned(h) < unsigned(p.h);
      *reinterpret_cast<std::uint16_t*>(brows + r * sp.row_elems + col) =
          ok ? detail::smallc_load_bits(xn + std::int64_t(h) * p.x_stride[2] + col) : std::uint16_t(0);
    }
  };
  // Whether buffer 0 / 1 holds its two output rows' input rows once (sp.share_rows, consecutive rows
  // of one image): slot 1's filter row r is then band row stride_h + r, else kSmallcWgradWarpTiles + r.
  bool shared0 = false, shared1 = false;
  auto const stage = [&](int i) {  // called for i = 0, 1, 2, ... in turn
    Element* const dys = stages + (i % kSmallcWgradStages) * sp.stage_elems;
    Element* const band = dys + dy_elems;
    int n[kSmallcWgradRows], pp[kSmallcWgradRows];
    bool live[kSmallcWgradRows];
    TESSEL_UNROLL
    for (int slot = 0; slot < kSmallcWgradRows; ++slot) {
      live[slot] = row_begin + i * kSmallcWgradRows + slot < row_end;
      n[slot] = live[slot] ? next_n : 0, pp[slot] = live[slot] ? next_pp : 0;
      if (++next_pp == p.p) next_pp = 0, ++next_n;
      Element const* src = dy + std::int64_t(n[slot]) * p.y_stride[0] + std::int64_t(pp[slot]) * p.y_stride[2] +
                           std::int64_t(tid / 8) * p.y_stride[3] + dy_chunk * 8;
      Element* dst = dys + slot * pixels * kSmallcWgradMaxK + dy_dst;
      bool const chunk_ok = live[slot] && dy_chunk * 8 < p.k;
      for (int pix = tid / 8; pix < pixels; pix += dy_step, src += std::int64_t(dy_step) * p.y_stride[3], dst += dy_step * 64) {
        bool const ok = chunk_ok && pix < p.q;
        SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>::copy(*reinterpret_cast<uint128_t const*>(ok ? src : dy),
                                                         *reinterpret_cast<uint128_t*>(dst), ok);
      }
    }
    bool const shared = sp.share_rows && live[1] && n[1] == n[0];  // then pp[1] == pp[0] + 1
    (i % 2 == 0 ? shared0 : shared1) = shared;
    if (shared) {
      copy_rows(band, 0, p.stride_h + p.r, n[0], pp[0] * p.stride_h - p.pad_h, 1, true);
    } else {
      TESSEL_UNROLL
      for (int slot = 0; slot < kSmallcWgradRows; ++slot)
        copy_rows(band, slot * kSmallcWgradWarpTiles, p.r, n[slot], pp[slot] * p.stride_h - p.pad_h, p.dilation_h, live[slot]);
    }
  };

  // Per lane, in bytes: where its A rows start in a stage's dy at pixel 0 (chunk 2*mt + (lane / 8) % 2
  // of pixel (lane / 16) * 8 + lane % 8, swizzled), and where its B elements (pixel 2*(lane % 4),
  // column jt*8 + lane / 4 of filter row 0) start in a slot's band; filter row r is r band rows on.
  int a_off[4];
  TESSEL_UNROLL
  for (int mt = 0; mt < 4; ++mt) a_off[mt] = (((lane / 16) * 8 + lane % 8) * 64 + (((2 * mt + (lane / 8) % 2) ^ (lane % 8)) * 8)) * 2;
  int const b_off = (sp.lead + jt * 8 + 2 * tig * swc + g) * 2, row_bytes = sp.row_elems * 2;
  int const px1 = 2 * swc, px8 = 16 * swc, px9 = 18 * swc;  // bytes from pixel q to q + 1, q + 8, q + 9

  float acc[4][kSmallcWgradWarpTiles][4];
  TESSEL_UNROLL
  for (int mt = 0; mt < 4; ++mt)
    TESSEL_UNROLL
    for (int i = 0; i < kSmallcWgradWarpTiles; ++i)
      TESSEL_UNROLL
      for (int e = 0; e < 4; ++e) acc[mt][i][e] = 0.0f;

  if (stage_count > 0) stage(0);
  cp_async_fence();
  for (int i = 0; i < stage_count; ++i) {
    if (i + 1 < stage_count) stage(i + 1);
    cp_async_fence();
    cp_async_wait<1>();
    __syncthreads();  // stage i landed

    unsigned char const* const dyb = smem + std::size_t(i % kSmallcWgradStages) * sp.stage_elems * 2;
    unsigned char const* const bandb = dyb + dy_elems * 2;
    int const live_rows = min(int(kSmallcWgradRows), row_end - row_begin - i * kSmallcWgradRows);
    // k-steps parity, parity + 2, ... of the live rows, 16 pixels each: row `slot`, pixels q0 + [0, 16).
    int slot = 0, q0 = parity * 16;
    while (q0 >= pixels) q0 -= pixels, ++slot;
    while (slot < live_rows) {
      unsigned char const* const arow = dyb + (slot * pixels + q0) * 128;
      std::uint32_t a[4][4];
      TESSEL_UNROLL
      for (int mt = 0; mt < 4; ++mt)
        SM75_U16x8_LDSM_T::copy(*reinterpret_cast<uint128_t const*>(arow + a_off[mt]), a[mt][0], a[mt][1], a[mt][2], a[mt][3]);
      int const slot_rows = (i % 2 == 0 ? shared0 : shared1) ? p.stride_h : kSmallcWgradWarpTiles;  // band rows to slot 1's
      unsigned char const* const brow = bandb + (slot * slot_rows * sp.row_elems + q0 * swc) * 2 + b_off;
      // The k-step's MMAs. Pixels past Q (dy zero there) may read columns real pixels read: in the
      // last k-step of a row their B elements are zeroed too (`masked`), so that an Inf or NaN in x
      // meets no product it is not part of.
      auto const mma = [&](auto masked) {
        std::uint32_t keep0 = ~0u, keep1 = ~0u;
        if constexpr (decltype(masked)::value) {
          int const q = q0 + 2 * tig;
          keep0 = (q < p.q ? 0xffffu : 0u) | (q + 1 < p.q ? 0xffff0000u : 0u);
          keep1 = (q + 8 < p.q ? 0xffffu : 0u) | (q + 9 < p.q ? 0xffff0000u : 0u);
        }
        TESSEL_UNROLL
        for (int t = 0; t < kSmallcWgradWarpTiles; ++t) {
          unsigned char const* const e = brow + t * row_bytes;
          auto const at = [](unsigned char const* ptr) { return std::uint32_t(*reinterpret_cast<std::uint16_t const*>(ptr)); };
          std::uint32_t b0 = at(e) | (at(e + px1) << 16), b1 = at(e + px8) | (at(e + px9) << 16);
          if constexpr (decltype(masked)::value) b0 &= keep0, b1 &= keep1;
          TESSEL_UNROLL
          for (int mt = 0; mt < 4; ++mt) detail::smallc_mma<Element>(acc[mt][t], a[mt], b0, b1);
        }
      };
      if (q0 + 16 <= p.q)
        mma(std::false_type{});
      else
        mma(std::true_type{});
      for (q0 += 32; q0 >= pixels; q0 -= pixels) ++slot;
    }
    __syncthreads();  // stage i read: its buffer may be refilled
  }
  cp_async_wait<0>();

  // The second warp of each group hands its sums to the first, which writes the slice.
  float* const handoff = reinterpret_cast<float*>(smem) + jt * (4 * kSmallcWgradWarpTiles * 4 * 32);
  if (parity == 1) {
    TESSEL_UNROLL
    for (int mt = 0; mt < 4; ++mt)
      TESSEL_UNROLL
      for (int t = 0; t < kSmallcWgradWarpTiles; ++t)
        TESSEL_UNROLL
        for (int e = 0; e < 4; ++e) handoff[((mt * kSmallcWgradWarpTiles + t) * 4 + e) * 32 + lane] = acc[mt][t][e];
  }
  __syncthreads();
  if (parity == 1) return;
  float* const slice = sp.partials + std::int64_t(blockIdx.x) * p.k * sp.partial_ld;
  int const cols = p.s * p.c;
  TESSEL_UNROLL
  for (int t = 0; t < kSmallcWgradWarpTiles; ++t) {
    int const r = t, j0 = jt * 8 + 2 * tig;
    if (r >= p.r) break;
    TESSEL_UNROLL
    for (int mt = 0; mt < 4; ++mt)
      TESSEL_UNROLL
      for (int e = 0; e < 4; ++e) {
        int const k = mt * 16 + g + (e / 2) * 8, j = j0 + e % 2;
        if (k < p.k && j < cols)
          slice[std::int64_t(k) * sp.partial_ld + r * cols + j] = acc[mt][t][e] + handoff[((mt * kSmallcWgradWarpTiles + t) * 4 + e) * 32 + lane];
      }
  }
#endif
}

}  // namespace tessel::kernel
