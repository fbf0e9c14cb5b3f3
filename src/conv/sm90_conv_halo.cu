// src/conv/sm90_conv_halo.cu -- the halo-window fprop (tessel/conv/kernel/sm90_halo_conv.hpp): the
// problems it takes, its two tensor maps, the persistent launch.
#include "sm90_conv_launch.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/conv/kernel/sm90_halo_conv.hpp>
#include <tessel/runtime/tma_descriptor.hpp>

#include <cstdint>
#include <string>

namespace tessel::kernel::detail {

namespace {

bool aligned16(void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

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
  p.y_stride[0] = c.y_stride[0], p.y_stride[1] = c.y_stride[2], p.y_stride[2] = c.y_stride[3];
  p.n = c.n, p.p = c.p, p.q = c.q;
  p.alpha = c.alpha;

  tessel::detail::Here here;
  if (Status s = tessel::detail::current_device(&here); !s) return s;
  constexpr int Smem = kSm90HaloSmemBytes<Element>;
  auto const kernel = sm90_halo_conv_kernel<Element>;
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

bool sm90_halo_conv_takes(Sm80ConvParams const& p, DType dtype) {
  if (p.op != conv::Operator::kFprop || (dtype != DType::bf16 && dtype != DType::f16)) return false;
  if (p.groups != 1 || p.c != 64 || p.k != 64) return false;
  if (p.d != 1 || p.t != 1 || p.z != 1 || p.r != 3 || p.s != 3 || p.pad_h != 1 || p.pad_w != 1) return false;
  if (p.stride_h != 1 || p.stride_w != 1 || p.dilation_h != 1 || p.dilation_w != 1) return false;
  if (p.w > kSm90HaloPitch - 2 || p.n < 1 || p.h < 1 || p.w < 1) return false;
  // The fused terms are not in its epilogue yet: alpha only.
  if (p.residual != nullptr || p.bias != nullptr || p.activation != ConvActivation::none) return false;
  // TMA: 16-byte aligned bases and strides; y's rows take 16-byte stores.
  if (!aligned16(p.x) || !aligned16(p.filter) || !aligned16(p.out)) return false;
  for (int i : {0, 2, 3})
    if (p.x_stride[i] % 8 != 0 || p.y_stride[i] % 8 != 0) return false;
  return p.w_stride_k % 8 == 0 && p.w_stride_k >= 9 * 64;
}

Status sm90_halo_conv_launch(Sm80ConvParams const& p, DType dtype, cudaStream_t stream) {
  if (!sm90_halo_conv_takes(p, dtype))
    return Status::error(StatusCode::not_supported, "sm90 halo conv: the problem breaks a rule of sm90_halo_conv_takes");
  return dtype == DType::bf16 ? launch<bfloat16_t>(p, stream) : launch<half_t>(p, stream);
}

}  // namespace tessel::kernel::detail
