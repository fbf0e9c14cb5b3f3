// src/attention/sm90_attention_launch.cuh -- launching one sm_90a attention configuration: the
// tensor maps of Q, K, V and O (make_tma_encode_args over each (S, D, H, B) tensor, boxes of the
// kernel's 128-byte-swizzled smem chunks) and the kernel. Included by the per-configuration TUs
// only (src/attention/sm90_attention_<dtype>_d<dims>.cu), each of which instantiates one kernel.
#pragma once

#include "attention_instances.hpp"
#include "../runtime/current_device.hpp"

#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/attention/kernel/sm90_attention.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/runtime/tma_descriptor.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>
#include <string>

namespace tessel::kernel::detail {

// The tensor map of one operand, (S, cols, heads, batch) with cols contiguous, boxes of BoxRows x
// BoxCols (BoxCols elements: one 128-byte swizzled row; 64 of 16 bits, 32 of fp32).
template <class T, int BoxRows, int BoxCols = 128 / int(sizeof(T))>
Status sm90_attention_tensor_map(char const* name, void const* ptr, std::int64_t rows, int cols, std::int64_t heads,
                                 std::int64_t batch, AttentionOperand const& t, TmaDescriptor* out) {
  Tensor g = make_tensor(make_gmem_ptr(static_cast<T const*>(ptr)), make_shape(rows, std::int64_t(cols), heads, batch),
                         make_stride(t.row_stride, Int<1>{}, t.head_stride, t.batch_stride));
  auto const box = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<Int<BoxRows>, Int<BoxCols>>{});
  TmaEncodeResult const e = make_tma_encode_args(g, box);
  if (!e.ok()) return Status::error(StatusCode::invalid_argument, std::string(name) + ": " + e.error);
  if (e.args.mode_of_dim[0] != 1 || e.args.mode_of_dim[1] != 0)
    return Status::error(StatusCode::not_supported, std::string(name) + ": the tensor map's dimensions are not (D, S, H, B)");
  return encode_tma_descriptor(e.args, out);
}

template <class Config>
Status sm90_attention_launch(AttentionArguments const& args, AttentionParams const& base, cudaStream_t stream) {
  using T = typename Config::Element;
  Sm90AttentionParams p{};
  p.a = base;
  if (Status s = sm90_attention_tensor_map<T, Config::BlkM>("q", args.q.ptr, args.seqlen_q, Config::D, args.heads, args.batch,
                                                            args.q, &p.tma_q); !s)
    return s;
  if (Status s = sm90_attention_tensor_map<T, Config::BlkN>("k", args.k.ptr, args.seqlen_k, Config::D, args.kv_heads,
                                                            args.batch, args.k, &p.tma_k); !s)
    return s;
  if (Status s = sm90_attention_tensor_map<T, Config::BlkN>("v", args.v.ptr, args.seqlen_k, Config::Dv, args.kv_heads,
                                                            args.batch, args.v, &p.tma_v); !s)
    return s;
  // O's boxes are one consumer warpgroup's 64 rows: each stores its own.
  AttentionOperand const o{args.o, args.o_batch_stride, args.o_row_stride, args.o_head_stride};
  if (Status s = sm90_attention_tensor_map<T, 64>("o", args.o, args.seqlen_q, Config::Dv, args.heads, args.batch, o, &p.tma_o); !s)
    return s;
  constexpr int smem = Config::SmemBytes;
  auto* kernel = &sm90_attention_kernel<Config>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  dim3 grid(static_cast<unsigned>(p.a.m_blocks), static_cast<unsigned>(p.a.heads), static_cast<unsigned>(args.batch));
  if constexpr (Config::Persistent) {  // one CTA per SM (or per tile, when fewer), each walking the tiles
    std::int64_t const tiles = std::int64_t(p.a.m_blocks) * args.heads * args.batch;
    if (tiles > std::int64_t(INT32_MAX))
      return Status::error(StatusCode::not_supported,
                           "batch x heads x query tiles: " + std::to_string(tiles) +
                               " exceeds 2^31 - 1 (the persistent kernel's tile ids are 32-bit)");
    p.tiles = int(tiles);
    tessel::detail::Here here;
    if (Status s = tessel::detail::current_device(&here); !s) return s;
    grid = dim3(static_cast<unsigned>(tiles < here.sms ? tiles : here.sms));
  }
  if (err == cudaSuccess) {
    kernel<<<grid, Config::Threads, smem, stream>>>(p);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess) return Status::error(StatusCode::cuda_error, std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
  return Status::success();
}

template <class Config>
cudaError_t sm90_attention_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm90_attention_kernel<Config>);
}

template <class Config>
AttentionInstance make_sm90_attention_instance() {
  return {Config::D, Config::Dv, Config::BlkM, Config::BlkN, Config::Threads, Config::SmemBytes,
          sm90_attention_launch<Config>, sm90_attention_attributes<Config>};
}

}  // namespace tessel::kernel::detail
