// src/conv/sm80_conv_run.cpp -- the host side of the sm_80 convolution kernels: which kernel runs a
// problem, the parameters it derives once (Sm80ConvKernelParams), and the launch.
//
// Selection (sm80_conv_launch.hpp lists the kernels):
//   depthwise  2-D, groups == c == k, R*S <= kSm80DepthwiseMaxTaps: the direct kernel of the pass
//              (fprop, dgrad, wgrad), 8 channels per thread when the tensors it reads allow 16-byte
//              loads (c and their strides multiples of 8, their addresses 16-byte aligned: x for
//              fprop, dy for dgrad, both for wgrad), else 1
//   small C    2-D, groups 1: fprop with c <= 4; dgrad with c <= 8, k <= 64 a multiple of 8, dy's
//              strides multiples of 8 and its address 16-byte aligned, R, S <= 32; wgrad with c <= 4,
//              k <= 64 a multiple of 8, dy as for dgrad, x's pixels c elements apart, dilation 1
//              across, R <= 7 and S*C <= 32 (kSmallcWgradMaxGroups column tiles); where the
//              kernel's shared memory (tessel/conv/kernel/sm80_smallc_geometry.hpp) is within the
//              GPU's (smallc_smem_limit): the small-channel kernel of the pass (sm80_smallc_conv.hpp)
//   otherwise  the implicit GEMM of the op and dtype: 16-byte accesses when every operand it
//              gathers allows them (the channels per group it reads contiguously, the strides of
//              those tensors and their addresses multiples of 8 elements / 16 bytes), else the
//              element-wise instance
// A stride is ignored where its dimension has extent 1 (it never multiplies a non-zero index).
//
// Split reduction (wgrad): through the implicit GEMM, conv_split_reduction's slices for the tile
// grid and the SMs (Sm80ConvRunOptions), then the slice sum; through the small-channel kernel,
// always a slice sum after it: 2 * sms slices of the output rows (its CTAs, two an SM: one
// wave), fewer where the rows are fewer, one without the SM count; through the depthwise kernel,
// conv_depthwise_wgrad_split's slices of output pixels, the kernel's second pass summing them.
// Either way the fp32 partials live in the caller's workspace or in the library's stream-ordered
// pool (allocated before and freed after the launches, on the call's stream: nothing
// synchronises).
#include "../gemm/gemm_canonical.hpp"  // pool_allocate: the stream-ordered pool the GEMM API uses
#include "sm80_conv_instances.hpp"
#include "sm80_conv_launch.hpp"

#include <tessel/conv/conv3d_problem_size.hpp>
#include <tessel/conv/conv_depthwise_split.hpp>
#include <tessel/conv/implicit_gemm_problem_size.hpp>
#include <tessel/conv/kernel/sm80_smallc_geometry.hpp>

#include <array>
#include <cstdint>
#include <exception>
#include <string>

namespace tessel {

namespace {

using kernel::Sm80ConvKernelParams;
using kernel::Sm80ConvParams;
using kernel::detail::Sm80ConvInstance;
using conv::Operator;

constexpr long long kIndexLimit = (1LL << 31) - 256;  // GEMM indices (plus a tile) stay below 2^31

bool aligned(void const* ptr, int bytes) { return ptr == nullptr || reinterpret_cast<std::uintptr_t>(ptr) % bytes == 0; }

// Every stride of a dimension with extent > 1 is a multiple of `elems`.
bool strides_multiple(long long const (&stride)[4], int const (&extent)[4], int elems) {
  for (int i = 0; i < 4; ++i)
    if (extent[i] > 1 && stride[i] % elems != 0) return false;
  return true;
}

struct Extents {
  int x[4], y[4];  // n, d, h, w and n, z, p, q
};
Extents extents_of(Sm80ConvParams const& p) { return {{p.n, p.d, p.h, p.w}, {p.n, p.z, p.p, p.q}}; }

// The implicit GEMM may read its operands `elems` elements at a time (file comment).
bool gemm_access_ok(Sm80ConvParams const& p, int elems) {
  Extents const e = extents_of(p);
  int const cg = p.c / p.groups, kg = p.k / p.groups;
  int const bytes = 2 * elems;
  bool const filters_ok = (p.k == 1 || p.w_stride_k % elems == 0) && aligned(p.filter, bytes);
  bool const x_ok = strides_multiple(p.x_stride, e.x, elems) && aligned(p.x, bytes);
  bool const y_ok = strides_multiple(p.y_stride, e.y, elems) && aligned(p.y, bytes);
  switch (p.op) {
    case Operator::kFprop: return cg % elems == 0 && x_ok && filters_ok;
    case Operator::kDgrad: return cg % elems == 0 && kg % elems == 0 && y_ok && filters_ok;
    case Operator::kWgrad: return cg % elems == 0 && kg % elems == 0 && x_ok && y_ok;
  }
  return false;
}

bool is_depthwise(Sm80ConvParams const& p) {
  return p.groups == p.c && p.k == p.c && p.d == 1 && p.t == 1 && p.z == 1 &&
         static_cast<long long>(p.r) * p.s <= kernel::detail::kSm80DepthwiseMaxTaps;
}

// The depthwise kernel of p's pass may load 8 channels at a time from each tensor it reads.
bool depthwise_vec8(Sm80ConvParams const& p) {
  Extents const e = extents_of(p);
  bool const x_ok = strides_multiple(p.x_stride, e.x, 8) && aligned(p.x, 16);
  bool const y_ok = strides_multiple(p.y_stride, e.y, 8) && aligned(p.y, 16);
  switch (p.op) {
    case Operator::kFprop: return p.c % 8 == 0 && x_ok;
    case Operator::kDgrad: return p.c % 8 == 0 && y_ok;
    case Operator::kWgrad: return p.c % 8 == 0 && x_ok && y_ok;
  }
  return false;
}

// The small-channel kernels take p on a GPU of compute capability cc (file comment).
bool is_smallc(Sm80ConvParams const& p, int cc) {
  int const limit = kernel::smallc_smem_limit(cc);
  if (p.groups != 1 || p.d != 1 || p.t != 1 || p.z != 1) return false;
  if (p.op == Operator::kFprop)
    return p.c <= kernel::kSmallcMaxC &&
           kernel::smallc_fprop_smem(p.p, p.q, p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w) <= limit;
  Extents const e = extents_of(p);
  bool const dy_ok = p.k % 8 == 0 && strides_multiple(p.y_stride, e.y, 8) && aligned(p.y, 16);
  if (p.op == Operator::kWgrad)
    return p.c <= kernel::kSmallcMaxC && p.k <= kernel::kSmallcWgradMaxK && dy_ok && p.dilation_w == 1 &&
           (p.w == 1 || p.x_stride[3] == p.c) && p.r <= kernel::kSmallcWgradWarpTiles &&
           kernel::smallc_wgrad_groups(p.s, p.c) <= kernel::kSmallcWgradMaxGroups &&
           kernel::smallc_wgrad_smem(p.q, p.w, p.s, p.c, p.stride_w, p.pad_w) <= limit;
  if (p.op == Operator::kDgrad) {
    return p.c <= kernel::kSmallcDgradMaxC && p.k <= kernel::kSmallcDgradMaxK && dy_ok && p.r <= 32 && p.s <= 32 &&
           kernel::smallc_dgrad_smem(p.r, p.s, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.c) <= limit;
  }
  return false;
}

// What sm80_conv_run launches for p (kind and instance), or a refusal.
struct Choice {
  Sm80ConvInstance (*gemm)() = nullptr;                   // the implicit GEMM or a small-channel kernel, or
  Sm80ConvInstance (*depthwise)(int vec) = nullptr;       // the depthwise kernel of the pass with
  int vec = 0;                                            // this many channels per thread
  int index = -1;                                         // into kNames
  bool depthwise_wgrad = false;                           // the depthwise wgrad: its split is over pixels
  bool smallc_wgrad = false;                              // the small-channel wgrad: over output rows, always
};

// clang-format off
constexpr std::array<char const*, 30> kNames = {{
    "sm80_conv_fprop_bf16_128x128x32", "sm80_conv_fprop_bf16_128x128x32_align1",
    "sm80_conv_dgrad_bf16_128x128x32", "sm80_conv_dgrad_bf16_128x128x32_align1",
    "sm80_conv_wgrad_bf16_128x128x32", "sm80_conv_wgrad_bf16_128x128x32_align1",
    "sm80_conv_fprop_fp16_128x128x32", "sm80_conv_fprop_fp16_128x128x32_align1",
    "sm80_conv_dgrad_fp16_128x128x32", "sm80_conv_dgrad_fp16_128x128x32_align1",
    "sm80_conv_wgrad_fp16_128x128x32", "sm80_conv_wgrad_fp16_128x128x32_align1",
    "sm80_conv_depthwise_bf16_vec8",       "sm80_conv_depthwise_bf16_vec1",
    "sm80_conv_depthwise_fp16_vec8",       "sm80_conv_depthwise_fp16_vec1",
    "sm80_conv_depthwise_dgrad_bf16_vec8", "sm80_conv_depthwise_dgrad_bf16_vec1",
    "sm80_conv_depthwise_dgrad_fp16_vec8", "sm80_conv_depthwise_dgrad_fp16_vec1",
    "sm80_conv_depthwise_wgrad_bf16_vec8", "sm80_conv_depthwise_wgrad_bf16_vec1",
    "sm80_conv_depthwise_wgrad_fp16_vec8", "sm80_conv_depthwise_wgrad_fp16_vec1",
    "sm80_conv_fprop_bf16_smallc",         "sm80_conv_dgrad_bf16_smallc",
    "sm80_conv_fprop_fp16_smallc",         "sm80_conv_dgrad_fp16_smallc",
    "sm80_conv_wgrad_bf16_smallc",         "sm80_conv_wgrad_fp16_smallc",
}};
// The small-channel kernels of (dtype, pass): kNames[24 + 2 * dtype + pass] for fprop and dgrad,
// kNames[28 + dtype] for wgrad.
constexpr Sm80ConvInstance (*kSmallc[2][3])() = {
    {kernel::detail::sm80_conv_instance_fprop_bf16_smallc, kernel::detail::sm80_conv_instance_dgrad_bf16_smallc,
     kernel::detail::sm80_conv_instance_wgrad_bf16_smallc},
    {kernel::detail::sm80_conv_instance_fprop_f16_smallc,  kernel::detail::sm80_conv_instance_dgrad_f16_smallc,
     kernel::detail::sm80_conv_instance_wgrad_f16_smallc},
};
// The depthwise kernels of each pass (fprop, dgrad, wgrad) and dtype (bf16, fp16); their names are
// kNames[12 + 4 * pass + 2 * dtype] (vec8) and the one after it (vec1).
constexpr Sm80ConvInstance (*kDepthwise[3][2])(int vec) = {
    {kernel::detail::sm80_conv_instance_depthwise_bf16,       kernel::detail::sm80_conv_instance_depthwise_f16},
    {kernel::detail::sm80_conv_instance_depthwise_dgrad_bf16, kernel::detail::sm80_conv_instance_depthwise_dgrad_f16},
    {kernel::detail::sm80_conv_instance_depthwise_wgrad_bf16, kernel::detail::sm80_conv_instance_depthwise_wgrad_f16},
};
constexpr std::array<Sm80ConvInstance (*)(), 12> kGemms = {{
    kernel::detail::sm80_conv_instance_fprop_bf16, kernel::detail::sm80_conv_instance_fprop_bf16_align1,
    kernel::detail::sm80_conv_instance_dgrad_bf16, kernel::detail::sm80_conv_instance_dgrad_bf16_align1,
    kernel::detail::sm80_conv_instance_wgrad_bf16, kernel::detail::sm80_conv_instance_wgrad_bf16_align1,
    kernel::detail::sm80_conv_instance_fprop_f16,  kernel::detail::sm80_conv_instance_fprop_f16_align1,
    kernel::detail::sm80_conv_instance_dgrad_f16,  kernel::detail::sm80_conv_instance_dgrad_f16_align1,
    kernel::detail::sm80_conv_instance_wgrad_f16,  kernel::detail::sm80_conv_instance_wgrad_f16_align1,
}};
// clang-format on

Choice choose(Sm80ConvParams const& p, DType dtype, int cc) {
  int const dt = dtype == DType::bf16 ? 0 : 1;
  int const op = p.op == Operator::kFprop ? 0 : p.op == Operator::kDgrad ? 1 : 2;
  Choice c;
  if (is_depthwise(p)) {
    c.vec = depthwise_vec8(p) ? 8 : 1;
    c.depthwise = kDepthwise[op][dt];
    c.index = 12 + 4 * op + 2 * dt + (c.vec == 8 ? 0 : 1);
    c.depthwise_wgrad = p.op == Operator::kWgrad;
    return c;
  }
  if (is_smallc(p, cc)) {
    c.index = op == 2 ? 28 + dt : 24 + 2 * dt + op;
    c.gemm = kSmallc[dt][op];
    c.smallc_wgrad = op == 2;
    return c;
  }
  c.index = 6 * dt + 2 * op + (gemm_access_ok(p, 8) ? 0 : 1);
  c.gemm = kGemms[static_cast<std::size_t>(c.index)];
  return c;
}

Status refuse(StatusCode code, std::string why) { return Status::error(code, "sm80_conv_run: " + std::move(why)); }

// The rules sm80_conv_run relies on (the host API checks them first; this keeps the kernels from
// ever reading out of bounds when called directly). Fills the GEMM extents of one group.
Status check(Sm80ConvParams const& p, DType dtype, GemmCoord* gemm) {
  if (dtype != DType::bf16 && dtype != DType::f16)
    return refuse(StatusCode::not_supported, std::string("dtype ") + to_string(dtype) + " is not bf16 or fp16");
  for (int v : {p.n, p.d, p.h, p.w, p.c, p.k, p.t, p.r, p.s, p.z, p.p, p.q, p.groups, p.stride_d, p.stride_h, p.stride_w,
                p.dilation_d, p.dilation_h, p.dilation_w})
    if (v < 1) return refuse(StatusCode::invalid_argument, "every extent, stride, dilation and groups must be >= 1");
  if (p.pad_d < 0 || p.pad_h < 0 || p.pad_w < 0) return refuse(StatusCode::invalid_argument, "padding must be >= 0");
  if (p.c % p.groups != 0 || p.k % p.groups != 0)
    return refuse(StatusCode::invalid_argument, "c = " + std::to_string(p.c) + " and k = " + std::to_string(p.k) +
                                                    " must be multiples of groups = " + std::to_string(p.groups));
  int const cg = p.c / p.groups, kg = p.k / p.groups;
  long long const taps = static_cast<long long>(p.t) * p.r * p.s;
  if (p.w_stride_k < taps * cg)
    return refuse(StatusCode::invalid_argument, "w_stride_k = " + std::to_string(p.w_stride_k) + " is below t*r*s*c/groups = " +
                                                    std::to_string(taps * cg));
  bool const fprop = p.op == Operator::kFprop, dgrad = p.op == Operator::kDgrad, wgrad = p.op == Operator::kWgrad;
  if (((fprop || wgrad) && p.x == nullptr) || ((dgrad || wgrad) && p.y == nullptr) || ((fprop || dgrad) && p.filter == nullptr) ||
      p.out == nullptr)
    return refuse(StatusCode::invalid_argument, std::string("a tensor ") + conv::to_string(p.op) + " reads or writes is null");
  try {
    conv::Conv3dProblemSize const ps(p.n, p.d, p.h, p.w, cg, kg, p.t, p.r, p.s, p.pad_d, p.pad_h, p.pad_w, p.stride_d,
                                     p.stride_h, p.stride_w, p.dilation_d, p.dilation_h, p.dilation_w);
    if (ps.Z != p.z || ps.P != p.p || ps.Q != p.q)
      return refuse(StatusCode::invalid_argument, "output extents (z, p, q) = (" + std::to_string(p.z) + ", " +
                                                      std::to_string(p.p) + ", " + std::to_string(p.q) +
                                                      ") differ from the convolution's (" + std::to_string(ps.Z) + ", " +
                                                      std::to_string(ps.P) + ", " + std::to_string(ps.Q) + ")");
    *gemm = conv::implicit_gemm_problem_size(p.op, ps);
  } catch (std::exception const& e) {
    return refuse(StatusCode::invalid_argument, e.what());
  }
  if (gemm->m() > kIndexLimit || gemm->n() > kIndexLimit || gemm->k() > kIndexLimit)
    return refuse(StatusCode::not_supported, "the implicit GEMM of one group is (" + std::to_string(gemm->m()) + ", " +
                                                 std::to_string(gemm->n()) + ", " + std::to_string(gemm->k()) +
                                                 "); the sm80 kernels index it in 32 bits (each extent below 2^31 - 256)");
  return Status::success();
}

// Sm80ConvKernelParams for p and the chosen kernel (tile extents from the instance).
Sm80ConvKernelParams kernel_params(Sm80ConvParams const& p, GemmCoord const& gemm, int tile_m, int tile_n, int tile_k) {
  Sm80ConvKernelParams kp{};
  kp.p = p;
  kp.gemm_m = static_cast<int>(gemm.m());
  kp.gemm_n = static_cast<int>(gemm.n());
  kp.gemm_k = static_cast<int>(gemm.k());
  kp.cg = p.c / p.groups;
  kp.kg = p.k / p.groups;
  if (tile_k > 0) {
    kp.tiles_m = static_cast<int>((gemm.m() + tile_m - 1) / tile_m);
    kp.tiles_n = static_cast<int>((gemm.n() + tile_n - 1) / tile_n);
    kp.k_tiles = static_cast<int>((gemm.k() + tile_k - 1) / tile_k);
  }
  bool const dgrad = p.op == Operator::kDgrad;
  kp.div_chan = FastDivisor32::make(dgrad ? kp.kg : kp.cg);
  kp.div_s = FastDivisor32::make(p.s);
  kp.div_r = FastDivisor32::make(p.r);
  kp.div_px[0] = FastDivisor32::make(dgrad ? p.w : p.q);
  kp.div_px[1] = FastDivisor32::make(dgrad ? p.h : p.p);
  kp.div_px[2] = FastDivisor32::make(dgrad ? p.d : p.z);
  kp.div_stride[0] = FastDivisor32::make(p.stride_w);
  kp.div_stride[1] = FastDivisor32::make(p.stride_h);
  kp.div_stride[2] = FastDivisor32::make(p.stride_d);

  // Whether the epilogue may move out's (and residual's) 8-channel chunks as 16-byte words: the
  // address of channel 8j of every row is 16-byte aligned.
  Extents const e = extents_of(p);
  auto const vec_ok = [&](void const* ptr) {
    if (!aligned(ptr, 16)) return false;
    if (is_depthwise(p)) {  // a thread's 8 channels start at a multiple of 8; the wgrad writes dw element by element
      if (p.op == Operator::kWgrad) return false;
      return p.op == Operator::kFprop ? strides_multiple(p.y_stride, e.y, 8) : strides_multiple(p.x_stride, e.x, 8);
    }
    switch (p.op) {
      case Operator::kFprop: return strides_multiple(p.y_stride, e.y, 8) && (p.groups == 1 || kp.kg % 8 == 0);
      case Operator::kDgrad: return strides_multiple(p.x_stride, e.x, 8) && (p.groups == 1 || kp.cg % 8 == 0);
      case Operator::kWgrad: return p.k == 1 || p.w_stride_k % 8 == 0;
    }
    return false;
  };
  kp.out_vec = vec_ok(p.out);
  kp.residual_vec = p.residual != nullptr && vec_ok(p.residual);
  if (is_depthwise(p) && p.op == Operator::kWgrad) kp.k_tiles = kp.gemm_k;  // its k-tile is one output pixel
  kp.slices = 1;
  kp.k_tiles_per_slice = kp.k_tiles;
  return kp;
}

// The fp32 partials' row pitch: the implicit GEMM's GEMM-N rounded up to 8 floats (whole 32-byte
// chunks per row); the depthwise wgrad's C (rows of taps, tessel/conv/kernel/sm80_depthwise_wgrad.hpp).
int partial_ld(Sm80ConvParams const& p, GemmCoord const& gemm, Choice const& c) {
  return c.depthwise_wgrad ? p.c : static_cast<int>((gemm.n() + 7) / 8 * 8);
}

// The partials of `slices` slices: [slices][k][partial_ld] (implicit GEMM, small-channel wgrad) or
// [slices][r*s][c] (depthwise); none without a split, except for the small-channel wgrad (which
// always writes partials).
std::size_t partials_bytes(Sm80ConvParams const& p, GemmCoord const& gemm, Choice const& c, int slices) {
  std::size_t const rows = c.depthwise_wgrad ? std::size_t(p.r) * std::size_t(p.s) : std::size_t(p.k);
  return slices > 1 || c.smallc_wgrad ? std::size_t(slices) * rows * std::size_t(partial_ld(p, gemm, c)) * sizeof(float) : 0;
}

// The split of a problem that passed check(), with its choice c.
ConvSplit split_of(Sm80ConvParams const& p, GemmCoord const& gemm, Choice const& c, Sm80ConvRunOptions const& o) {
  if (c.depthwise_wgrad) {  // slices of the gemm.k() output pixels; a slice takes one CTA per channel block and tap group
    Sm80ConvInstance const inst = c.depthwise(c.vec);
    long long const taps = static_cast<long long>(p.r) * p.s;
    long long const ctas = (p.c + inst.tile_n - 1) / inst.tile_n *
                           ((taps + kernel::detail::kSm80DepthwiseWgradTaps - 1) / kernel::detail::kSm80DepthwiseWgradTaps);
    return o.slices > 0 ? conv_split_forced(gemm.k(), o.slices) : conv_depthwise_wgrad_split(ctas, gemm.k(), o.sms);
  }
  if (c.smallc_wgrad) {  // slices of the n*p output rows, a CTA each
    long long const rows = static_cast<long long>(p.n) * p.p;
    if (o.slices > 0) return conv_split_forced(rows, o.slices);
    return conv_split_forced(rows, o.sms > 0 ? 2LL * o.sms : 1);
  }
  if (c.gemm == nullptr || p.op != Operator::kWgrad) return {};
  Sm80ConvInstance const inst = c.gemm();
  long long const tiles = ((gemm.m() + inst.tile_m - 1) / inst.tile_m) * p.groups * ((gemm.n() + inst.tile_n - 1) / inst.tile_n);
  long long const k_tiles = (gemm.k() + inst.tile_k - 1) / inst.tile_k;
  return o.slices > 0 ? conv_split_forced(k_tiles, o.slices) : conv_split_reduction(tiles, k_tiles, o.sms);
}

}  // namespace

char const* sm80_conv_kernel_name(Sm80ConvParams const& p, DType dtype, int cc) {
  GemmCoord gemm;
  if (!check(p, dtype, &gemm).ok()) return "none";
  return kNames[static_cast<std::size_t>(choose(p, dtype, cc).index)];
}

ConvSplit sm80_conv_split(Sm80ConvParams const& p, DType dtype, Sm80ConvRunOptions const& o) {
  GemmCoord gemm;
  if (!check(p, dtype, &gemm).ok()) return {};
  return split_of(p, gemm, choose(p, dtype, o.cc), o);
}

std::size_t sm80_conv_workspace_size(Sm80ConvParams const& p, DType dtype, Sm80ConvRunOptions const& o) {
  GemmCoord gemm;
  if (!check(p, dtype, &gemm).ok()) return 0;
  Choice const c = choose(p, dtype, o.cc);
  return partials_bytes(p, gemm, c, split_of(p, gemm, c, o).slices);
}

Status sm80_conv_run(Sm80ConvParams const& p, DType dtype, cudaStream_t stream, Sm80ConvRunOptions const& o) {
  GemmCoord gemm;
  if (Status s = check(p, dtype, &gemm); !s.ok()) return s;
  Choice const c = choose(p, dtype, o.cc);
  Sm80ConvInstance const inst = c.gemm ? c.gemm() : c.depthwise(c.vec);
  Sm80ConvKernelParams kp = kernel_params(p, gemm, inst.tile_m, inst.tile_n, inst.tile_k);
  ConvSplit const split = split_of(p, gemm, c, o);
  std::size_t const bytes = partials_bytes(p, gemm, c, split.slices);
  if (bytes > 0 && o.workspace != nullptr && o.workspace_bytes < bytes)
    return Status::error(StatusCode::invalid_argument, "workspace_bytes: " + std::to_string(o.workspace_bytes) +
                                                           " is below the " + std::to_string(bytes) +
                                                           " bytes this call needs (conv_workspace_size)");
  if (c.gemm) {
    if (static_cast<long long>(kp.tiles_m) * p.groups > 0x7fffffffLL || kp.tiles_n > 65535)
      return refuse(StatusCode::not_supported, "the grid of " + std::to_string(kp.tiles_m) + " x " +
                                                   std::to_string(p.groups) + " groups by " + std::to_string(kp.tiles_n) +
                                                   " tiles exceeds CUDA's limits (2^31 - 1 by 65535)");
  } else if (!c.depthwise_wgrad && (p.c + 63) / 64 > 65535) {
    return refuse(StatusCode::not_supported, "depthwise: c = " + std::to_string(p.c) + " needs more than 65535 channel blocks");
  } else if (c.depthwise_wgrad && split.slices > 65535) {
    return refuse(StatusCode::not_supported, "depthwise wgrad: " + std::to_string(split.slices) + " slices exceed CUDA's grid limit (65535)");
  }
  std::string const name = kNames[static_cast<std::size_t>(c.index)];
  if (bytes == 0) {
    if (cudaError_t err = inst.launch(kp, stream); err != cudaSuccess)
      return refuse(StatusCode::cuda_error, name + " launch: " + cudaGetErrorString(err));
    return Status::success();
  }

  // The split: partials, the implicit GEMM into them and the slice sum into dw (the depthwise
  // kernel's launch runs both of its passes).
  void* partials = o.workspace;
  if (partials == nullptr)
    if (Status s = detail::pool_allocate(&partials, bytes,
                                         "the " + std::to_string(bytes >> 10) + " KiB of partial sums of a split wgrad", stream);
        !s)
      return s;
  kp.slices = split.slices;
  kp.k_tiles_per_slice = split.k_tiles_per_slice;
  kp.partials = static_cast<float*>(partials);
  kp.partial_ld = partial_ld(p, gemm, c);
  Status result = Status::success();
  if (cudaError_t err = inst.launch(kp, stream); err != cudaSuccess)
    result = refuse(StatusCode::cuda_error, name + " launch (" + std::to_string(split.slices) + " slices): " + cudaGetErrorString(err));
  else if (cudaError_t err2 = c.gemm ? kernel::detail::sm80_conv_slice_sum(kp, dtype == DType::bf16, stream) : cudaSuccess;
           err2 != cudaSuccess)
    result = refuse(StatusCode::cuda_error, std::string("slice sum of a split wgrad: ") + cudaGetErrorString(err2));
  if (o.workspace == nullptr) {
    if (cudaError_t err = cudaFreeAsync(partials, stream); err != cudaSuccess && result.ok())
      result = detail::cuda_failure("cudaFreeAsync (split wgrad partials)", err);
  }
  return result;
}

}  // namespace tessel
