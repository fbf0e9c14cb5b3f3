// tessel/conv/conv_padded.hpp -- the padded route: a problem the aligned kernels cannot read (its
// channel counts, strides or addresses not multiples of 8 elements / 16 bytes) computed on copies
// of its tensors in the workspace, channels rounded up and the new channels zero.
//
// The aligned kernels move 8 channels (16 bytes) an access; the element-wise sm_80 instances that
// take everything else ran the first layer (C = 3) and C = 33 / K = 65 at 0.02-0.73x cuDNN on the
// H200. So, for groups == 1 (src/conv/conv.cpp's route() decides when):
//
//   copy in    x [n][d][h][w][c]        -> x' [n][d][h][w][c']        packed, channels c..c'-1 zero
//              w [k][t][r][s][c]        -> w' [k'][t][r][s][c']       filters k..k'-1 zero
//              y [n][z][p][q][k]  (dy)  -> y' [n][z][p][q][k']
//              the residual (beta != 0) as out', the bias (k or c floats) zero-extended
//   inner      the same pass on the padded problem (c', k'), through the normal route with the
//              epilogue passed through: act(alpha acc + beta residual' + bias') is rounded to the
//              output type once, by the aligned kernel; the new output channels hold act(0) = 0
//   copy out   out' -> out: the first k (fprop), c (dgrad) or [k][t][r][s][c] (wgrad) channels
//
// A tensor whose channel count does not change and that the aligned kernels can read in place
// (16-byte aligned, every stride of an extent > 1 a multiple of 8; the output's residual too) is
// used in place; the stem's y (k = 64) is. Padding is exact: the zero channels add 0 x finite
// terms (both operands' new channels are zero, never garbage), and no new output is kept.
//
// The widths (conv_padded_candidates), tried in order; src/conv/conv.cpp keeps the first whose
// padded problem the intended kernel takes, by asking the kernels' own selection:
//   sm_90a  (an sm_90 GPU; fprop, stride-1 dgrad) the reduction's channels (fprop c, dgrad k)
//           rounded to 8 and raised to 64 where that at most doubles them (rounded to 8 they are
//           at least kConvPaddedSm90MinReduction = 32: C = 33 -> 64, but C = 3 stays off it,
//           whose 64 would be 8x its 8); the output's channels (fprop k, dgrad c) rounded to 64
//           where they need padding anyway (the kernel's tiles are 64, 128 or 256 wide, so the
//           extra channels cost no MMA work, and one 128-wide tile gathers each activation tile
//           once where two 64-wide ones gather it twice), raised to 64 otherwise.
//   sm_80   c and k rounded up to 8. The sm_80 implicit GEMM walks GEMM-K as (t, r, s, c) with
//           the channel fastest, so a k-tile of 32 holds 4 taps of c' = 8: no k-tile is padded
//           per tap; the waste is the zero channels themselves (8/3 on the stem).
//   e.g. the stem, fprop, bf16, n 128, 224x224, c 3 -> k 64, 7x7 stride 2 pad 3, any GPU:
//        (c', k') = (8, 64); x' 128*224*224*8*2 B = 102760448 B, w' 64*49*8*2 B = 50176 B
//        (already 256-aligned), y in place: 102810624 B of workspace; the inner kernel
//        sm80_conv_fprop_bf16_128x128x32.
//   e.g. 3x3 c 33 -> k 65, fprop, on an sm_90 GPU: (64, 128) for sm_90a; elsewhere (40, 72).
//
// Workspace: the staged pieces in the order x, filter, y, residual, bias, each at a 256-byte
// aligned offset, then the inner call's own scratch (a split wgrad's partial sums) at `total`.
// Pure functions of the arguments; plain C++ (host test conv_padded_test).
#pragma once

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel {

// The aligned kernels' access: 8 elements of 16 bits (16 bytes); channels are padded to multiples.
inline constexpr std::int64_t kConvPaddedChannels = 8;
// The sm_90a kernel's least channel count, and the width of its narrowest tile.
inline constexpr std::int64_t kConvPaddedSm90Width = 64;
// The sm_90a widths raise the reduction's channels to 64 only from here (file comment): at most
// twice the MMA work of the sm_80 widths, against the sm_90a kernel's 250-430 TFLOP/s to the
// aligned sm_80 kernels' 100-250 on the H200.
inline constexpr std::int64_t kConvPaddedSm90MinReduction = 32;
// Each staged piece starts at a multiple of this many bytes (the workspace's own alignment).
inline constexpr std::size_t kConvPaddedPieceAlign = 256;
// A 256-byte aligned, non-null address standing for the workspace where no workspace exists yet
// (choosing the route and sizing it read only the pieces' alignment; nothing is dereferenced).
inline constexpr std::uintptr_t kConvPaddedPlaceholder = std::uintptr_t(1) << 20;

constexpr std::int64_t conv_round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }

// The padded channel counts of the whole problem (groups == 1).
struct ConvPaddedWidths {
  std::int64_t c = 0, k = 0;
  bool sm90 = false;  // the sm_90a widths: kept only where the sm_90a kernel then takes the problem
};

// The widths to try, best first, into out; returns how many (1 or 2). sm90_gpu: the current GPU
// is an sm_90 one. Pre: conv_validate(a) passed.
inline int conv_padded_candidates(ConvArguments const& a, bool sm90_gpu, ConvPaddedWidths (&out)[2]) {
  int n = 0;
  std::int64_t const c8 = conv_round_up(a.c, kConvPaddedChannels), k8 = conv_round_up(a.k, kConvPaddedChannels);
  bool const fprop = a.op == conv::Operator::kFprop;
  bool const unit_stride = a.stride_d == 1 && a.stride_h == 1 && a.stride_w == 1;
  if (sm90_gpu && (fprop || (a.op == conv::Operator::kDgrad && unit_stride))) {
    std::int64_t const reduction = fprop ? c8 : k8;  // the channels the sums run over
    std::int64_t const columns = fprop ? a.k : a.c;  // the channels out holds
    if (reduction >= kConvPaddedSm90MinReduction) {
      std::int64_t const r = reduction > kConvPaddedSm90Width ? reduction : kConvPaddedSm90Width;
      std::int64_t const o = columns % kConvPaddedChannels == 0 && columns >= kConvPaddedSm90Width
                                 ? columns
                                 : conv_round_up(columns, kConvPaddedSm90Width);
      out[n++] = fprop ? ConvPaddedWidths{r, o, true} : ConvPaddedWidths{o, r, true};
    }
  }
  out[n++] = ConvPaddedWidths{c8, k8, false};
  return n;
}

// The pieces of the workspace, in this order.
enum class ConvPaddedPiece { x, filter, y, residual, bias };
inline constexpr int kConvPaddedPieces = 5;

struct ConvPaddedLayout {
  ConvPaddedWidths widths;
  bool staged[kConvPaddedPieces] = {};              // copied into the workspace (else used in place)
  std::size_t offset[kConvPaddedPieces] = {};       // bytes from the workspace's start (staged pieces)
  std::size_t bytes[kConvPaddedPieces] = {};        // the piece's bytes (staged pieces)
  std::size_t total = 0;                            // the pieces, each rounded up to 256 bytes

  bool is_staged(ConvPaddedPiece p) const { return staged[int(p)]; }
  std::size_t offset_of(ConvPaddedPiece p) const { return offset[int(p)]; }
};

namespace detail {

constexpr ConvPaddedPiece conv_padded_piece(ConvOperand o) {
  return o == ConvOperand::x ? ConvPaddedPiece::x : o == ConvOperand::y ? ConvPaddedPiece::y : ConvPaddedPiece::filter;
}

inline bool conv_padded_aligned(void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The aligned kernels read (or write) an activation tensor in place: 16-byte aligned, every stride
// of an extent > 1 a multiple of 8 elements.
inline bool conv_padded_in_place(void const* p, ConvTensor const& t, std::int64_t const (&extent)[4]) {
  std::int64_t const stride[4] = {t.stride_n, t.stride_d, t.stride_h, t.stride_w};
  for (int i = 0; i < 4; ++i)
    if (extent[i] > 1 && stride[i] % kConvPaddedChannels != 0) return false;
  return conv_padded_aligned(p);
}

}  // namespace detail

// Which tensors a's padded problem of widths w stages, and where (file comment). Pre:
// conv_validate(a) passed, groups == 1, w.c >= a.c and w.k >= a.k.
inline ConvPaddedLayout conv_padded_layout(ConvArguments const& a, ConvPaddedWidths w) {
  using P = ConvPaddedPiece;
  ConvPaddedLayout l;
  l.widths = w;
  ConvOutputExtents const e = conv_output_extents(a);
  ConvOperand const out_role = conv_output_operand(a.op);
  std::int64_t const taps = a.t * a.r * a.s;
  bool const c_grows = w.c != a.c, k_grows = w.k != a.k;
  std::int64_t const x_extent[4] = {a.n, a.d, a.h, a.w}, y_extent[4] = {a.n, e.z, e.p, e.q};
  auto const ptr_of = [&](ConvOperand o, void const* own) -> void const* { return o == out_role ? a.out : own; };
  bool const residual_in_place = a.beta == 0.0f || detail::conv_padded_aligned(a.residual);
  auto const out_rule = [&](ConvOperand o) { return o == out_role && !residual_in_place; };

  l.staged[int(P::x)] = c_grows || !detail::conv_padded_in_place(ptr_of(ConvOperand::x, a.x.ptr), a.x, x_extent) ||
                        out_rule(ConvOperand::x);
  l.staged[int(P::y)] = k_grows || !detail::conv_padded_in_place(ptr_of(ConvOperand::y, a.y.ptr), a.y, y_extent) ||
                        out_rule(ConvOperand::y);
  l.staged[int(P::filter)] = c_grows || k_grows || (a.k > 1 && a.filter.stride_k % kConvPaddedChannels != 0) ||
                             !detail::conv_padded_aligned(ptr_of(ConvOperand::filter, a.filter.ptr)) ||
                             out_rule(ConvOperand::filter);
  bool const out_staged = l.staged[int(detail::conv_padded_piece(out_role))];
  bool const out_channels_grow = out_role == ConvOperand::y ? k_grows : out_role == ConvOperand::x ? c_grows : c_grows || k_grows;
  l.staged[int(P::residual)] = out_staged && a.beta != 0.0f;
  l.staged[int(P::bias)] = out_staged && out_channels_grow && a.bias != nullptr && a.op != conv::Operator::kWgrad;

  std::size_t const eb = size_of(a.dtype);
  std::size_t const x_bytes = std::size_t(a.n * a.d * a.h * a.w * w.c) * eb;
  std::size_t const y_bytes = std::size_t(a.n * e.z * e.p * e.q * w.k) * eb;
  std::size_t const w_bytes = std::size_t(w.k * taps * w.c) * eb;
  std::size_t const out_bytes = out_role == ConvOperand::x ? x_bytes : out_role == ConvOperand::y ? y_bytes : w_bytes;
  std::size_t const sizes[kConvPaddedPieces] = {x_bytes, w_bytes, y_bytes, out_bytes,
                                                std::size_t(a.op == conv::Operator::kFprop ? w.k : w.c) * sizeof(float)};
  for (int i = 0; i < kConvPaddedPieces; ++i) {
    if (!l.staged[i]) continue;
    l.offset[i] = l.total;
    l.bytes[i] = sizes[i];
    l.total += (sizes[i] + kConvPaddedPieceAlign - 1) / kConvPaddedPieceAlign * kConvPaddedPieceAlign;
  }
  return l;
}

// The inner call: a's pass on the padded problem, its staged tensors packed at `workspace` (the
// pieces of l), the others in place, the epilogue passed through (alpha, beta, act; the staged
// residual and bias where out is staged), no named kernel and no workspace of its own yet.
inline ConvArguments conv_padded_inner(ConvArguments const& a, ConvPaddedLayout const& l, std::uintptr_t workspace) {
  using P = ConvPaddedPiece;
  ConvArguments in = a;
  in.c = l.widths.c, in.k = l.widths.k;
  ConvOutputExtents const e = conv_output_extents(a);
  auto const at = [&](P p) { return reinterpret_cast<void*>(workspace + l.offset_of(p)); };
  if (l.is_staged(P::x)) {
    in.x.ptr = at(P::x);
    in.x.stride_w = in.c, in.x.stride_h = a.w * in.c, in.x.stride_d = a.h * a.w * in.c, in.x.stride_n = a.d * a.h * a.w * in.c;
  }
  if (l.is_staged(P::y)) {
    in.y.ptr = at(P::y);
    in.y.stride_w = in.k, in.y.stride_h = e.q * in.k, in.y.stride_d = e.p * e.q * in.k, in.y.stride_n = e.z * e.p * e.q * in.k;
  }
  if (l.is_staged(P::filter)) {
    in.filter.ptr = at(P::filter);
    in.filter.stride_k = a.t * a.r * a.s * in.c;
  }
  P const out = detail::conv_padded_piece(conv_output_operand(a.op));
  if (l.is_staged(out)) {
    in.out = at(out);
    in.residual = l.is_staged(P::residual) ? at(P::residual) : nullptr;
    if (l.is_staged(P::bias)) in.bias = static_cast<float const*>(at(P::bias));
  }
  in.kernel = nullptr;
  in.workspace = nullptr, in.workspace_bytes = 0;
  return in;
}

// The rule for a caller's workspace on the padded route: at least the staged pieces (l.total) and
// the inner call's own scratch (inner_bytes). `given`: ConvArguments::workspace_bytes.
inline Status conv_padded_workspace_check(ConvPaddedLayout const& l, std::size_t inner_bytes, std::size_t given) {
  std::size_t const need = l.total + inner_bytes;
  if (given >= need) return Status::success();
  return Status::error(StatusCode::invalid_argument,
                       "workspace_bytes: " + std::to_string(given) + " is below the " + std::to_string(need) +
                           " bytes this call needs (conv_workspace_size): " + std::to_string(l.total) +
                           " for its tensors with channels padded to c = " + std::to_string(l.widths.c) +
                           ", k = " + std::to_string(l.widths.k) + " and " + std::to_string(inner_bytes) +
                           " for the aligned kernel's own scratch");
}

}  // namespace tessel
