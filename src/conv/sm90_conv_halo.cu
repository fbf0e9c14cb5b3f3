// src/conv/sm90_conv_halo.cu -- the halo-window fprop (tessel/conv/kernel/sm90_halo_conv.hpp): its
// two tensor maps and the persistent launch (the problems it takes: sm90_conv_run.cpp).
#include "sm90_conv_launch.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/conv/kernel/sm90_halo_conv.hpp>
#include <tessel/runtime/tma_descriptor.hpp>

#include <cstdint>
#include <string>

namespace tessel::kernel::detail {

static_assert(kSm90HaloMaxWidth == kSm90HaloPitch - 2, "a window row is the image's pixels and a pad column each side");

namespace {

template <class Element>
Status launch(Sm80ConvParams const& c, cudaStream_t stream) {
  constexpr int Pitch = kSm90HaloPitch, RowsOut = kSm90HaloRowsOut;
  constexpr std::uint64_t E = sizeof(Element);
  Sm90HaloConvParams p{};
  // x as (C, W, H, N), one box the window: 64 channels x Pitch pixels x RowsOut + 2 rows.
  TmaEncodeArgs x;
  x.data_type = tma_data_type_of<Element>();
  x.rank = 4;
  x.global_address = c.x;
  x.global_dim[0] = 64, x.global_dim[1] = std::uint64_t(c.w), x.global_dim[2] = std::uint64_t(c.h);
  x.global_dim[3] = std::uint64_t(c.n);
  x.global_strides[0] = std::uint64_t(c.x_stride[3]) * E;
  x.global_strides[1] = std::uint64_t(c.x_stride[2]) * E;
  x.global_strides[2] = std::uint64_t(c.x_stride[0]) * E;
  x.box_dim[0] = 64, x.box_dim[1] = Pitch, x.box_dim[2] = RowsOut + 2, x.box_dim[3] = 1;
  for (int i = 0; i < 4; ++i) x.element_strides[i] = 1;
  x.swizzle = TmaSwizzle::B128;
  x.oob_fill = TmaOobFill::NONE;  // zeros: the pad rows and columns
  if (Status s = encode_tma_descriptor(x, &p.x_map); !s) return s;
  // The filters as (9 taps x 64 channels, K), rows w_stride_k apart: tap t's box is (64, 64) at (64 t, 0).
  TmaEncodeArgs w;
  w.data_type = x.data_type;
  w.rank = 2;
  w.global_address = c.filter;
  w.global_dim[0] = 9 * 64, w.global_dim[1] = 64;
  w.global_strides[0] = std::uint64_t(c.w_stride_k) * E;
  w.box_dim[0] = 64, w.box_dim[1] = 64;
  w.element_strides[0] = w.element_strides[1] = 1;
  w.swizzle = TmaSwizzle::B128;
  if (Status s = encode_tma_descriptor(w, &p.w_map); !s) return s;
  p.y = c.out;
  p.residual = c.residual;
  p.y_stride[0] = c.y_stride[0], p.y_stride[1] = c.y_stride[2], p.y_stride[2] = c.y_stride[3];
  p.n = c.n, p.p = c.p, p.q = c.q;
  p.ops = {c.alpha, c.beta, c.bias, c.activation};

  tessel::detail::Here here;
  if (Status s = tessel::detail::current_device(&here); !s) return s;
  constexpr int Smem = kSm90HaloSmemBytes<Element>;
  bool const fused = c.residual != nullptr || c.bias != nullptr || c.activation != ConvActivation::none;
  auto const kernel = fused ? sm90_halo_conv_kernel<Element, true> : sm90_halo_conv_kernel<Element, false>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Smem); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("sm90 halo conv: cudaFuncSetAttribute: ") + cudaGetErrorString(err));
  long long const tiles = (long long)c.n * ((c.p + RowsOut - 1) / RowsOut);
  int const grid = int(tiles < here.sms ? tiles : here.sms);
  kernel<<<grid, 384, Smem, stream>>>(p);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("sm90 halo conv: launch: ") + cudaGetErrorString(err));
  return Status::success();
}

}  // namespace

Status sm90_halo_conv_launch(Sm80ConvParams const& p, DType dtype, cudaStream_t stream) {
  if (!sm90_halo_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 halo conv: the problem breaks a rule of sm90_halo_conv_takes");
  return dtype == DType::bf16 ? launch<bfloat16_t>(p, stream) : launch<half_t>(p, stream);
}

}  // namespace tessel::kernel::detail
