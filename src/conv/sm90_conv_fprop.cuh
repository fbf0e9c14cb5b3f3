// src/conv/sm90_conv_fprop.cuh -- launching one sm_90a fprop (or stride-1 dgrad) configuration: the
// tensor maps and the kernel (included by src/conv/sm90_conv_fprop_<dtype>.cu only).
#pragma once

#include "sm90_conv_launch.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/conv/kernel/sm90_conv_fprop.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/runtime/tma_descriptor.hpp>
#include <tessel/tensor.hpp>

#include <string>

namespace tessel::kernel::detail {

template <class Config>
Status sm90_conv_fprop_launch(Sm80ConvParams const& c, cudaStream_t stream) {
  using T = typename Config::Element;
  Sm90ConvParams p{};
  p.c = c;
  int const taps = c.t * c.r * c.s;
  p.n_tiles = (c.k + Config::BlkN - 1) / Config::BlkN;
  p.c_blocks = (c.c + Config::BlkK - 1) / Config::BlkK;
  p.k_tiles = taps * p.c_blocks;
  // Filters as (filters, channels, taps): rows of w_stride_k, channels contiguous, taps a row of
  // channels apart. A dgrad problem comes in forward terms (as_fprop), its C and K swapped back here.
  std::int64_t const filters = Config::Dgrad ? c.c : c.k, channels = Config::Dgrad ? c.k : c.c;
  Tensor g = make_tensor(make_gmem_ptr(static_cast<T const*>(c.filter)), make_shape(filters, channels, std::int64_t(taps)),
                         make_stride(std::int64_t(c.w_stride_k), Int<1>{}, channels));
  auto const box = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<Int<Config::BoxRows>, Int<Config::BlkK>>{});
  TmaEncodeResult const e = make_tma_encode_args(g, box);
  if (!e.ok()) return Status::error(StatusCode::not_supported, "filter: " + e.error);
  if (e.args.mode_of_dim[0] != 1 || e.args.mode_of_dim[1] != 0 || e.args.mode_of_dim[2] != 2)
    return Status::error(StatusCode::not_supported, "filter: the tensor map's dimensions are not (C, K, taps)");
  if (Status s = encode_tma_descriptor(e.args, &p.tma_w); !s) return s;
  p.im2col_rank = sm90_conv_im2col_map(c, tma_data_type_of<T>(), Config::BlkM, Config::BlkK, &p.tma_x);

  std::int64_t const tiles = (std::int64_t(c.n) * c.z * c.p * c.q + Config::BlkM - 1) / Config::BlkM * p.n_tiles;
  if (tiles > 0x7fffffff) return Status::error(StatusCode::not_supported, "problem: more than 2^31 - 1 output tiles");
  p.tiles = int(tiles);
  tessel::detail::Here here;  // the persistent grid: one CTA per SM
  if (Status s = tessel::detail::current_device(&here); !s) return s;
  constexpr int smem = Config::SmemBytes;
  auto* kernel = &sm90_conv_fprop_kernel<Config>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err == cudaSuccess) {
    kernel<<<static_cast<unsigned>(tiles < here.sms ? tiles : here.sms), Config::Threads, smem, stream>>>(p);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) return Status::error(StatusCode::cuda_error, std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
  return Status::success();
}

}  // namespace tessel::kernel::detail
