// src/conv/sm90_implicit_conv.cuh -- running one implicit-GEMM convolution configuration: the sm_90a
// GEMM kernel with one operand read as the activations' im2col view (Sm90GemmConfig::Im2col;
// tessel/gemm/kernel/sm90_gemm_producer_im2col.hpp) -- A for fprop and stride-1 dgrad, B for
// wgrad. This file makes the two tensor maps and the GEMM's arguments; the GEMM's host side
// (src/gemm/sm90_implicit_gemm.hpp) does the rest.
// Included by the src/conv/sm90_implicit_conv_*.cu files only.
#pragma once

#include "sm90_conv_launch.hpp"
#include "../gemm/sm90_implicit_gemm.hpp"
#include "../gemm/sm90_launch.cuh"
#include "../runtime/current_device.hpp"

#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/conv/conv_split.hpp>
#include <tessel/gemm/kernel/sm90_im2col_walk.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/runtime/tma_descriptor.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::kernel::detail {

// Runs (query null) or sizes one implicit-GEMM convolution: fprop and dgrad in forward terms
// (as_fprop; dgrad reads the filters transposed and flipped), wgrad as the caller gave it.
template <class Config>
Status sm90_implicit_conv_run(Sm80ConvParams const& c, conv::Operator op, Sm90ConvCall const& call, std::size_t* query,
                              cudaStream_t stream) {
  using T = typename Config::Element;
  using Atom = GMMA::Layout_K_SW128_Atom<T>;
  bool const wgrad = op == conv::Operator::kWgrad, dgrad = op == conv::Operator::kDgrad;
  // fprop and dgrad with the pixels as B: the filters' box is A, D written transposed.
  constexpr bool Swapped = Config::Im2col == Sm90Im2colOperand::b_pixels;
  tessel::detail::Sm90ImplicitOperands ops{};
  int const taps = c.t * c.r * c.s;
  Sm90Im2col& g = ops.im2col;
  // The activations' im2col map: a tile's pixels (TileM, TileN with the pixels as B, or a k-tile,
  // TileK, for wgrad) x 64 channels a box.
  int const box_pixels = wgrad ? Config::TileK : Swapped ? Config::TileN : Config::TileM;
  g.rank = sm90_conv_im2col_map(c, tma_data_type_of<T>(), box_pixels, Config::TileK, wgrad || Swapped ? &ops.b : &ops.a);
  if (g.rank == 0) return Status::error(StatusCode::not_supported, "x: the im2col tensor map cannot express this problem");
  g.q = c.q, g.p = c.p, g.z = c.z;
  g.stride_w = c.stride_w, g.stride_h = c.stride_h, g.stride_d = c.stride_d;
  g.pad_w = c.pad_w, g.pad_h = c.pad_h, g.pad_d = c.pad_d;
  g.dilation_w = c.dilation_w, g.dilation_h = c.dilation_h, g.dilation_d = c.dilation_d;
  g.s = c.s, g.r = c.r, g.taps = taps;
  g.c_blocks = (c.c + Config::TileK - 1) / Config::TileK;
  g.channels = c.c;
  g.flip = dgrad;
  std::int64_t const pixels = std::int64_t(c.n) * c.z * c.p * c.q;
  GemmArguments a;
  a.a_type = a.b_type = a.c_type = std::is_same_v<T, bfloat16_t> ? DType::bf16 : DType::f16;
  a.c_order = MatrixOrder::row_major;
  a.alpha = c.alpha;
  a.beta = c.residual != nullptr ? c.beta : 0.0f;
  a.activation = c.activation;
  a.workspace = call.workspace, a.workspace_bytes = call.workspace_bytes;
  a.options.lean_builds = call.lean_builds;
  if (wgrad) {
    // dw (filters x taps * channels, rows of w_stride_k) = dy^T (filters x pixels) x im2col(x):
    // dy^T's map as the GEMM's MN-major A, (filters, pixels, 1) in boxes of 64 x 64.
    std::int64_t const step = sm90_conv_pixel_step(c);  // (checked: evenly strided)
    Tensor dy = make_tensor(make_gmem_ptr(static_cast<T const*>(c.y)), make_shape(pixels, std::int64_t(c.k), std::int64_t(1)),
                            make_stride(step, Int<1>{}, step * pixels));
    TmaEncodeResult const e = make_tma_encode_args(dy, tile_to_shape(Atom{}, Shape<Int<64>, Int<Config::TileK>>{}));
    if (!e.ok()) return Status::error(StatusCode::not_supported, "y: " + e.error);
    if (e.args.mode_of_dim[0] != 1 || e.args.mode_of_dim[1] != 0)
      return Status::error(StatusCode::not_supported, "y: the tensor map's dimensions are not (K, pixels)");
    if (Status s = encode_tma_descriptor(e.args, &ops.a); !s) return s;
    ops.a_mn_major = ops.b_mn_major = true;
    g.k_tile_step = sm90_pixel_digits(g, Config::TileK);  // the producer walks its k-tiles' pixels
    a.m = c.k, a.n = std::int64_t(taps) * c.c, a.k = pixels;
    a.d = c.out, a.ldd = c.w_stride_k;
    a.c = c.residual, a.ldc = c.w_stride_k;
    a.options.splits = call.wgrad_slices;  // the caller's count, else the rule's for this GPU's SMs
    if (a.options.splits == 0) {
      tessel::detail::Here here;
      if (Status s = tessel::detail::current_device(&here); !s) return s;
      std::int64_t const tiles = (a.m + Config::TileM - 1) / Config::TileM * ((a.n + Config::TileN - 1) / Config::TileN);
      a.options.splits = conv_sm90_wgrad_slices(tiles, (pixels + Config::TileK - 1) / Config::TileK, here.sms);
    }
  } else {
    // The filters as (filters, channels, taps): rows of w_stride_k, channels contiguous, taps a row
    // of channels apart (a dgrad problem comes in forward terms: its C and K are the filters' K and
    // C); the tensor map's dimensions are then (channels, filters, taps). Forward: the filters'
    // operand is K-major, boxes of its share of the tile's filters x 64 channels; data gradient:
    // MN-major (its rows or columns are the channels), boxes of 64 filters x 64 channels.
    std::int64_t const filters = dgrad ? c.c : c.k, channels = dgrad ? c.k : c.c;
    Tensor w = make_tensor(make_gmem_ptr(static_cast<T const*>(c.filter)), make_shape(filters, channels, std::int64_t(taps)),
                           make_stride(std::int64_t(c.w_stride_k), Int<1>{}, channels));
    constexpr int Rows = Swapped ? Config::TileM / Config::ClusterN : Config::TileN / Config::ClusterM;
    TmaEncodeResult const e = dgrad ? make_tma_encode_args(w, tile_to_shape(Atom{}, Shape<Int<64>, Int<Config::TileK>>{}))
                                    : make_tma_encode_args(w, tile_to_shape(Atom{}, Shape<Int<Rows>, Int<Config::TileK>>{}));
    if (!e.ok()) return Status::error(StatusCode::not_supported, "filter: " + e.error);
    if (e.args.mode_of_dim[0] != 1 || e.args.mode_of_dim[1] != 0 || e.args.mode_of_dim[2] != 2)
      return Status::error(StatusCode::not_supported, "filter: the tensor map's dimensions are not (C, K, taps)");
    if (Status s = encode_tma_descriptor(e.args, Swapped ? &ops.a : &ops.b); !s) return s;
    (Swapped ? ops.a_mn_major : ops.b_mn_major) = dgrad;
    ops.transposed = Swapped;
    a.m = pixels, a.n = c.k, a.k = std::int64_t(taps) * g.c_blocks * Config::TileK;
    a.d = c.out, a.ldd = sm90_conv_pixel_step(c);  // (checked: evenly strided)
    a.c = c.residual, a.ldc = a.ldd;
  }
  // (A and B are read through ops' maps only; the views below keep the GEMM's bookkeeping whole.)
  a.a = c.x != nullptr ? c.x : c.y, a.a_order = MatrixOrder::row_major, a.lda = a.k;
  a.b = c.filter != nullptr ? c.filter : c.x, a.b_order = MatrixOrder::col_major, a.ldb = a.k;
  // The lean builds: K-major filters (fprop) and, MN-major, the data gradient's (lean_mn).
  using tessel::detail::sm90_implicit_gemm_run;
  if constexpr (Config::HasLeanTwin)
    return sm90_implicit_gemm_run(make_sm90_instance<Config, Sm90Build::lean_mn>(), a.a_type, a, ops, query, stream);
  else
    return sm90_implicit_gemm_run(make_sm90_instance<Config>(), a.a_type, a, ops, query, stream);
}

}  // namespace tessel::kernel::detail
