// src/conv/sm90_conv_run.cpp -- which sm_90a convolution kernel runs a problem (sm90_conv_launch.hpp).
#include "sm90_conv_launch.hpp"

#include <tessel/core/gemm_coord.hpp>  // detail::ceil_div_ll
#include <tessel/runtime/tma_descriptor.hpp>

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

namespace {

bool aligned16(void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// The tile width: the widest that the filters fill (a box may not exceed the tensor) and whose grid
// still gives every SM of an H100/H200-sized GPU (132) two tiles; a wider tile gathers each
// activation tile once for more filters.
int tile_n(kernel::Sm80ConvParams const& p) {
  constexpr long long kTwoWaves = 2 * 132;
  long long const m_tiles = (static_cast<long long>(p.n) * p.z * p.p * p.q + 127) / 128;
  if (p.k >= 256 && m_tiles * ((p.k + 255) / 256) >= kTwoWaves) return 256;
  return p.k >= 128 ? 128 : 64;
}

// A stride-1 dgrad problem as the forward convolution that computes it: dx = dy convolved with the
// filters flipped in every spatial dimension and transposed (C and K swap), padding
// (filter - 1) * dilation - pad. The filter pointer and strides stay the filters' own (the dgrad
// kernels read them flipped and transposed); fprop problems come back unchanged.
kernel::Sm80ConvParams as_fprop(kernel::Sm80ConvParams const& p) {
  if (p.op != conv::Operator::kDgrad) return p;
  kernel::Sm80ConvParams q = p;
  q.c = p.k, q.k = p.c;
  q.d = p.z, q.h = p.p, q.w = p.q;  // the input: dy
  q.z = p.d, q.p = p.h, q.q = p.w;  // the output: dx
  q.pad_d = (p.t - 1) * p.dilation_d - p.pad_d;
  q.pad_h = (p.r - 1) * p.dilation_h - p.pad_h;
  q.pad_w = (p.s - 1) * p.dilation_w - p.pad_w;
  for (int i = 0; i < 4; ++i) q.x_stride[i] = p.y_stride[i], q.y_stride[i] = p.x_stride[i];
  q.x = p.y;
  return q;
}

// The rules of the forward kernel, on a problem in forward terms.
bool fprop_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.groups != 1) return false;
  if (dtype != DType::bf16 && dtype != DType::f16) return false;
  if (p.c < 64 || p.k < 64 || p.c % 8 != 0 || p.k % 8 != 0) return false;
  constexpr int kPacked = 1 << 14;  // the gather packs a row's input h and w into 16-bit halves
  if (p.h >= kPacked || p.w >= kPacked || p.pad_h >= kPacked || p.pad_w >= kPacked) return false;
  if (p.pad_d < 0 || p.pad_h < 0 || p.pad_w < 0) return false;
  if (!aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.out) || (p.residual != nullptr && !aligned16(p.residual)))
    return false;
  for (int i = 0; i < 4; ++i)
    if (p.x_stride[i] % 8 != 0 || p.y_stride[i] % 8 != 0) return false;
  return p.w_stride_k % 8 == 0;
}

// The implicit GEMM's rules beyond the direct kernel's, in forward terms: D is a matrix (pixels
// evenly strided, sm90_conv_pixel_step), no bias (the GEMM's fused bias is of D's type,
// the convolution's fp32), and the im2col tensor map expresses the problem.
bool implicit_takes(kernel::Sm80ConvParams const& q) {
  long long const step = sm90_conv_pixel_step(q);
  return step != 0 && step % 8 == 0 && q.bias == nullptr && kernel::detail::sm90_conv_im2col_fits(q);
}

// The implicit-GEMM kernels: fprop and dgrad with the pixels as A in tiles 128 pixels x 256
// channels, or as B in tiles 256 pixels x 128 or 64 channels or 192 pixels x 128 channels; wgrad in
// tiles 128 (alone or in clusters of two column tiles) or 64 filters x 192 (tap, channel) columns.
// kNames[pass][dtype][variant], pass fprop, dgrad, wgrad.
enum Variant { kA256, kB128, kB64, kB192, kW128, kW128x2, kW64, kVariants };
char const* const kNames[3][2][kVariants] = {
    {{"sm90_conv_fprop_bf16_128x256x64_c2", "sm90_conv_fprop_bf16_256x128x64_c1", "sm90_conv_fprop_bf16_256x64x64_c1",
      "sm90_conv_fprop_bf16_192x128x64_c1", nullptr, nullptr, nullptr},
     {"sm90_conv_fprop_fp16_128x256x64_c2", "sm90_conv_fprop_fp16_256x128x64_c1", "sm90_conv_fprop_fp16_256x64x64_c1",
      "sm90_conv_fprop_fp16_192x128x64_c1", nullptr, nullptr, nullptr}},
    {{"sm90_conv_dgrad_bf16_128x256x64_c2", "sm90_conv_dgrad_bf16_256x128x64_c1", "sm90_conv_dgrad_bf16_256x64x64_c1",
      "sm90_conv_dgrad_bf16_192x128x64_c1", nullptr, nullptr, nullptr},
     {"sm90_conv_dgrad_fp16_128x256x64_c2", "sm90_conv_dgrad_fp16_256x128x64_c1", "sm90_conv_dgrad_fp16_256x64x64_c1",
      "sm90_conv_dgrad_fp16_192x128x64_c1", nullptr, nullptr, nullptr}},
    {{nullptr, nullptr, nullptr, nullptr, "sm90_conv_wgrad_bf16_128x192x64_c1", "sm90_conv_wgrad_bf16_128x192x64_c1x2",
      "sm90_conv_wgrad_bf16_64x192x64_c1"},
     {nullptr, nullptr, nullptr, nullptr, "sm90_conv_wgrad_fp16_128x192x64_c1", "sm90_conv_wgrad_fp16_128x192x64_c1x2",
      "sm90_conv_wgrad_fp16_64x192x64_c1"}}};

int pass_index(conv::Operator op) { return op == conv::Operator::kFprop ? 0 : op == conv::Operator::kDgrad ? 1 : 2; }

// The weight gradient as the implicit GEMM dw = dy^T x im2col(x) (im2col B): groups 1, 16-bit,
// channels a multiple of 64 (a 64-column block of B is one tap's channels), at least 64 filters
// in multiples of 8, dy's pixels evenly strided, dw's filter rows whole (taps x channels
// contiguous), 16-byte aligned tensors and strides, and the im2col tensor map expresses x.
bool wgrad_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op != conv::Operator::kWgrad || p.groups != 1) return false;
  if (dtype != DType::bf16 && dtype != DType::f16) return false;
  if (p.c % 64 != 0 || p.k < 64 || p.k % 8 != 0) return false;
  long long const step = sm90_conv_pixel_step(p);
  if (step == 0 || step % 8 != 0) return false;
  if (p.w_stride_k < static_cast<long long>(p.t) * p.r * p.s * p.c || p.w_stride_k % 8 != 0) return false;
  if (!aligned16(p.x) || !aligned16(p.y) || !aligned16(p.out) || (p.residual != nullptr && !aligned16(p.residual))) return false;
  for (int i = 0; i < 4; ++i)
    if (p.x_stride[i] % 8 != 0) return false;
  return p.pad_d >= 0 && p.pad_h >= 0 && p.pad_w >= 0 && kernel::detail::sm90_conv_im2col_fits(p);
}

// The variant the selection picks. wgrad: 64-row tiles for 64 filters; 128-row tiles otherwise, in
// clusters of two column tiles that share dy^T's box where C <= 128 and the column tiles pair up.
// By name on the H200 (3x3, TFLOP/s alone / in pairs): C128 28x28 K128 517 / 590, K256 644 / 703,
// batch 32 286 / 305; C256 14x14 K128 463 / 461; C512 7x7 K128 324 / 311; an odd count of column
// tiles pads the pairs (C64 28x28 K128 379 / 250, U-Net C320 K128 552 / 495).
//
// fprop and dgrad: the pixels as B in 256 x 64 tiles for up to 64 output channels; otherwise the
// wide tiles -- output channels a multiple of 256, the pixels as A in 128 x 256 tiles, else the
// pixels as B, 256 a tile, with 128 channels (m64n256 wgmmas; tiles of 64 or 128 channels with the
// pixels as A ran m64n64 / m64n128 ones, which read A as often as B from shared memory --
// docs/conv.md, Tried and not kept; the 256-multiple outputs ran 4-15% faster with the pixels as A
// than as B: H200, C256 14x14 and C512 7x7 dgrad, the 1x1 stride-2 C512->1024 fprop) -- unless
// tiles of 192 pixels x 128 channels take at most nine tenths of the wide tiles' work per SM,
// counted as the grid's rounds on an H100/H200-sized GPU (132 SMs, 66 clusters of two) times a
// tile's pixels x channels. That is where the wide tiles' last round is part-empty: C256 at 14x14,
// batch 128, is 98 cluster tiles of 128 x 256 (two rounds, the second half full) or 262 tiles of
// 192 x 128 (two full rounds); C512 at 7x7 is 50 cluster tiles (one round, 16 clusters idle) or 132
// tiles (one full round).
Variant pick_variant(kernel::Sm80ConvParams const& p) {
  if (p.op == conv::Operator::kWgrad) {
    // The tiles' columns, and the most channels at which pairs of column tiles ran faster.
    constexpr long long kColumns = 192, kPairsUpToChannels = 128;
    if (p.k <= 64) return kW64;
    long long const column_tiles = detail::ceil_div_ll(static_cast<long long>(p.t) * p.r * p.s * p.c, kColumns);
    return p.c <= kPairsUpToChannels && column_tiles % 2 == 0 ? kW128x2 : kW128;
  }
  kernel::Sm80ConvParams const q = as_fprop(p);
  if (q.k <= 64) return kB64;
  // The GPU the counts assume (an H100/H200: 132 SMs, 66 clusters of two), and the margin the
  // narrow tile needs: its work at most kNarrowShare tenths of the wide tile's, since at equal
  // work the wide tile ran faster (U-Net C320, four rounds of 192 x 128 or three of 256 x 128:
  // 545-548 TFLOP/s against 614-620).
  constexpr long long kSms = 132, kClusters = kSms / 2, kNarrowShare = 9;
  // A grid's work per SM: its rounds (tiles, or cluster tiles, over those that run at once) times a
  // tile's pixels x channels.
  using detail::ceil_div_ll;
  long long const pixels = static_cast<long long>(q.n) * q.z * q.p * q.q;
  long long const channel_tiles = ceil_div_ll(q.k, 128);
  bool const a256 = q.k % 256 == 0;
  long long const wide = a256 ? ceil_div_ll(ceil_div_ll(pixels, 256) * (q.k / 256), kClusters) * 128 * 256
                              : ceil_div_ll(channel_tiles * ceil_div_ll(pixels, 256), kSms) * 256 * 128;
  long long const narrow = ceil_div_ll(channel_tiles * ceil_div_ll(pixels, 192), kSms) * 192 * 128;
  if (10 * narrow <= kNarrowShare * wide) return kB192;
  return a256 ? kA256 : kB128;
}

// The variant a registry name stands for on p's pass and dtype, or kVariants.
Variant variant_of(kernel::Sm80ConvParams const& p, DType dtype, std::string_view name) {
  for (int v = 0; v < kVariants; ++v) {
    char const* const n = kNames[pass_index(p.op)][dtype == DType::bf16 ? 0 : 1][v];
    if (n != nullptr && name == n) return Variant(v);
  }
  return kVariants;
}

// Runs (query null) or sizes variant v of the implicit GEMM for p.
Status implicit_run(kernel::Sm80ConvParams const& p, DType dtype, Variant v, Sm90ConvCall const& call, std::size_t* query,
                    cudaStream_t stream) {
  namespace d = kernel::detail;
  using Run = Status (*)(kernel::Sm80ConvParams const&, conv::Operator, Sm90ConvCall const&, std::size_t*, cudaStream_t);
  static Run const runs[2][kVariants] = {
      {d::sm90_implicit_conv_bf16_n256, d::sm90_implicit_conv_bf16_pixels_b_m128, d::sm90_implicit_conv_bf16_pixels_b_m64,
       d::sm90_implicit_conv_bf16_pixels_b_n192, d::sm90_implicit_conv_bf16_wgrad_m128,
       d::sm90_implicit_conv_bf16_wgrad_m128_c1x2, d::sm90_implicit_conv_bf16_wgrad_m64},
      {d::sm90_implicit_conv_f16_n256, d::sm90_implicit_conv_f16_pixels_b_m128, d::sm90_implicit_conv_f16_pixels_b_m64,
       d::sm90_implicit_conv_f16_pixels_b_n192, d::sm90_implicit_conv_f16_wgrad_m128,
       d::sm90_implicit_conv_f16_wgrad_m128_c1x2, d::sm90_implicit_conv_f16_wgrad_m64}};
  return runs[dtype == DType::bf16 ? 0 : 1][v](p.op == conv::Operator::kWgrad ? p : as_fprop(p), p.op, call, query, stream);
}

// The direct kernel's rules: fprop, or dgrad with every stride 1, as the forward kernel takes them.
bool direct_takes(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op == conv::Operator::kDgrad) {
    if (p.stride_d != 1 || p.stride_h != 1 || p.stride_w != 1) return false;
  } else if (p.op != conv::Operator::kFprop) {
    return false;
  }
  return fprop_takes(as_fprop(p), dtype);
}

// Whether the implicit GEMM takes p: fprop and stride-1 dgrad on the direct kernel's rules plus
// implicit_takes, wgrad on wgrad_takes.
bool implicit_takes_problem(kernel::Sm80ConvParams const& p, DType dtype) {
  if (p.op == conv::Operator::kWgrad) return wgrad_takes(p, dtype);
  return direct_takes(p, dtype) && implicit_takes(as_fprop(p));
}

int width_index(int n) { return n == 256 ? 0 : n == 128 ? 1 : 2; }

// The halo-window fprop's name (sm90_halo_conv_takes).
char const* halo_kernel_name(DType dtype) {
  return dtype == DType::bf16 ? "sm90_conv_fprop_bf16_halo_64x256" : "sm90_conv_fprop_fp16_halo_64x256";
}

// The selection picks the halo-window fprop where it takes the problem without the fused terms and
// the image fills at least three quarters of its 64-position rows: its tensor cores compute every
// position of a row, so its speed falls with the width (H200, n128, TFLOP/s against the implicit
// GEMM: 62 wide 432 / 350, 56 wide 489 / 378, 48 wide 429 / 360, 40 wide 356 / 329). With a
// residual, bias or activation its epilogue ran at 73 (docs/conv.md): those keep the direct kernel.
constexpr int kHaloMinWidth = 48;

bool halo_picks(kernel::Sm80ConvParams const& p, DType dtype) {
  bool const fused = p.residual != nullptr || p.bias != nullptr || p.activation != kernel::ConvActivation::none;
  return !fused && p.w >= kHaloMinWidth && kernel::detail::sm90_halo_conv_takes(p, dtype);
}

}  // namespace

bool sm90_conv_takes(kernel::Sm80ConvParams const& p, DType dtype) { return direct_takes(p, dtype) || wgrad_takes(p, dtype); }

char const* sm90_conv_direct_kernel_name(kernel::Sm80ConvParams const& p, DType dtype) {
  if (!direct_takes(p, dtype)) return "none";
  static char const* const names[2][2][3] = {
      {{"sm90_conv_fprop_bf16_128x256x64", "sm90_conv_fprop_bf16_128x128x64", "sm90_conv_fprop_bf16_128x64x64"},
       {"sm90_conv_fprop_fp16_128x256x64", "sm90_conv_fprop_fp16_128x128x64", "sm90_conv_fprop_fp16_128x64x64"}},
      {{"sm90_conv_dgrad_bf16_128x256x64", "sm90_conv_dgrad_bf16_128x128x64", "sm90_conv_dgrad_bf16_128x64x64"},
       {"sm90_conv_dgrad_fp16_128x256x64", "sm90_conv_dgrad_fp16_128x128x64", "sm90_conv_dgrad_fp16_128x64x64"}}};
  return names[p.op == conv::Operator::kDgrad ? 1 : 0][dtype == DType::bf16 ? 0 : 1][width_index(tile_n(as_fprop(p)))];
}

char const* sm90_conv_kernel_name(kernel::Sm80ConvParams const& p, DType dtype) {
  if (halo_picks(p, dtype)) return halo_kernel_name(dtype);
  if (implicit_takes_problem(p, dtype)) return kNames[pass_index(p.op)][dtype == DType::bf16 ? 0 : 1][pick_variant(p)];
  return sm90_conv_direct_kernel_name(p, dtype);
}

std::vector<char const*> sm90_conv_kernel_names(kernel::Sm80ConvParams const& p, DType dtype) {
  std::vector<char const*> names;
  if (implicit_takes_problem(p, dtype))
    for (char const* n : kNames[pass_index(p.op)][dtype == DType::bf16 ? 0 : 1])
      if (n != nullptr) names.push_back(n);
  if (direct_takes(p, dtype)) names.push_back(sm90_conv_direct_kernel_name(p, dtype));
  if (kernel::detail::sm90_halo_conv_takes(p, dtype)) names.push_back(halo_kernel_name(dtype));
  return names;
}

Status sm90_conv_workspace_size(kernel::Sm80ConvParams const& p, DType dtype, char const* name, Sm90ConvCall const& call,
                                std::size_t* bytes) {
  *bytes = 0;
  Variant const v = variant_of(p, dtype, name);
  if (v == kVariants || !implicit_takes_problem(p, dtype)) return Status::success();  // (the direct kernel takes none)
  return implicit_run(p, dtype, v, call, bytes, nullptr);
}

Status sm90_conv_run(kernel::Sm80ConvParams const& p, DType dtype, char const* name, Sm90ConvCall const& call,
                     cudaStream_t stream) {
  namespace d = kernel::detail;
  if (!sm90_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 conv: the problem breaks a rule of sm90_conv_takes");
  if (Variant const v = variant_of(p, dtype, name); v != kVariants) {
    if (!implicit_takes_problem(p, dtype))
      return Status::error(StatusCode::not_supported, "sm90 conv: the implicit GEMM does not take this problem");
    return implicit_run(p, dtype, v, call, nullptr, stream);
  }
  if (std::string_view(name) == halo_kernel_name(dtype)) return kernel::detail::sm90_halo_conv_launch(p, dtype, stream);
  if (std::string_view(name) != sm90_conv_direct_kernel_name(p, dtype))
    return Status::error(StatusCode::invalid_argument, std::string("kernel: ") + name + " does not run this problem");
  using Launch = Status (*)(kernel::Sm80ConvParams const&, cudaStream_t);
  static Launch const launches[2][2][3] = {
      {{d::sm90_conv_fprop_launch_bf16_n256, d::sm90_conv_fprop_launch_bf16_n128, d::sm90_conv_fprop_launch_bf16_n64},
       {d::sm90_conv_fprop_launch_f16_n256, d::sm90_conv_fprop_launch_f16_n128, d::sm90_conv_fprop_launch_f16_n64}},
      {{d::sm90_conv_dgrad_launch_bf16_n256, d::sm90_conv_dgrad_launch_bf16_n128, d::sm90_conv_dgrad_launch_bf16_n64},
       {d::sm90_conv_dgrad_launch_f16_n256, d::sm90_conv_dgrad_launch_f16_n128, d::sm90_conv_dgrad_launch_f16_n64}}};
  kernel::Sm80ConvParams const q = as_fprop(p);
  return launches[p.op == conv::Operator::kDgrad ? 1 : 0][dtype == DType::bf16 ? 0 : 1][width_index(tile_n(q))](q, stream);
}

namespace kernel::detail {

bool sm90_halo_conv_takes(Sm80ConvParams const& p, DType dtype) {
  if (p.op != conv::Operator::kFprop || !fprop_takes(p, dtype) || p.c != 64 || p.k != 64) return false;
  if (p.d != 1 || p.t != 1 || p.z != 1 || p.r != 3 || p.s != 3 || p.pad_h != 1 || p.pad_w != 1) return false;
  if (p.stride_h != 1 || p.stride_w != 1 || p.dilation_h != 1 || p.dilation_w != 1) return false;
  if (p.w > kSm90HaloMaxWidth || p.w_stride_k < 9 * 64) return false;  // the filters' map: a row holds the 9 taps
  // The epilogue's offsets inside an image of y (and the residual) are 32-bit.
  return (long long)(p.p - 1) * p.y_stride[2] + (long long)(p.q - 1) * p.y_stride[3] + 64 <= INT32_MAX;
}

namespace {

// Whether p needs the rank-5 (3-D) im2col map: depth in the input, the filter, the output or the padding.
bool im2col_three_d(Sm80ConvParams const& p) { return p.d > 1 || p.t > 1 || p.z > 1 || p.pad_d > 0; }

}  // namespace

bool sm90_conv_im2col_fits(Sm80ConvParams const& p) {
  bool const three_d = im2col_three_d(p);
  int const spatial = three_d ? 3 : 2;
  int const corner_max = three_d ? 15 : 127;  // the driver's range: [-16, 15] at rank 5, [-128, 127] at rank 4
  int const pad[3] = {p.pad_w, p.pad_h, p.pad_d}, filter[3] = {p.s, p.r, p.t};
  int const dilation[3] = {p.dilation_w, p.dilation_h, p.dilation_d}, stride[3] = {p.stride_w, p.stride_h, p.stride_d};
  int const extent[3] = {p.w, p.h, p.d};
  for (int i = 0; i < spatial; ++i) {
    int const lower = -pad[i], upper = pad[i] - (filter[i] - 1) * dilation[i];
    if (lower < -corner_max - 1 || upper < -corner_max - 1 || upper > corner_max) return false;
    if (stride[i] > 8 || (filter[i] - 1) * dilation[i] > 0xffff) return false;  // traversal strides 1..8, 16-bit offsets
    if (lower > extent[i] - 1 + upper) return false;                          // an empty bounding box
  }
  return true;
}

int sm90_conv_im2col_map(Sm80ConvParams const& p, TmaDataType type, int pixels, int channels, TmaDescriptor* out) {
  if (!sm90_conv_im2col_fits(p)) return 0;
  int const rank = im2col_three_d(p) ? 5 : 4, spatial = rank - 2;
  int const pad[3] = {p.pad_w, p.pad_h, p.pad_d}, filter[3] = {p.s, p.r, p.t};
  int const dilation[3] = {p.dilation_w, p.dilation_h, p.dilation_d}, stride[3] = {p.stride_w, p.stride_h, p.stride_d};
  int const extent[3] = {p.w, p.h, p.d};
  long long const x_stride[3] = {p.x_stride[3], p.x_stride[2], p.x_stride[1]};
  int const bytes = type == TmaDataType::BFLOAT16 || type == TmaDataType::FLOAT16 ? 2 : 1;
  TmaIm2colArgs a;
  a.data_type = type;
  a.rank = std::uint32_t(rank);
  a.global_address = p.x;
  a.global_dim[0] = std::uint64_t(p.c);
  for (int i = 0; i < spatial; ++i) {
    a.lower_corner[i] = -pad[i];
    a.upper_corner[i] = pad[i] - (filter[i] - 1) * dilation[i];
    a.global_dim[1 + i] = std::uint64_t(extent[i]);
    a.global_strides[i] = std::uint64_t(x_stride[i]) * std::uint64_t(bytes);
    a.element_strides[1 + i] = std::uint32_t(stride[i]);
  }
  a.global_dim[rank - 1] = std::uint64_t(p.n);
  a.global_strides[rank - 2] = std::uint64_t(p.x_stride[0]) * std::uint64_t(bytes);
  a.channels_per_pixel = std::uint32_t(channels);
  a.pixels_per_column = std::uint32_t(pixels);
  a.swizzle = TmaSwizzle::B128;
  return encode_tma_im2col_descriptor(a, out).ok() ? rank : 0;
}

}  // namespace kernel::detail

}  // namespace tessel
