// src/attention/sm90_attention_bwd_launch.cuh -- launching one sm_90a attention-backward
// configuration: the preprocess, the sm_90a dK/dV kernel over the tensor maps of Q, dO, K and V
// (and of the fp32 dQ accumulator, which it adds to by TMA), then the dQ conversion (the two small
// kernels are the sm_80 path's,
// attention_backward_instances.hpp). Included by the per-dtype
// TUs only (src/attention/sm90_attention_bwd_<dtype>.cu).
#pragma once

#include "attention_backward_instances.hpp"
#include "sm90_attention_launch.cuh"

#include <tessel/attention/kernel/sm90_attention_backward.hpp>

#include <cstdint>
#include <string>

namespace tessel::kernel::detail {

template <class Config>
Status sm90_attention_bwd_launch(AttentionBackwardArguments const& args, AttentionBackwardParams const& base, cudaStream_t stream) {
  using T = typename Config::Element;
  AttentionArguments const& a = args.problem;
  auto const blocks = [](std::int64_t n, int blk) { return static_cast<unsigned>((n + blk - 1) / blk); };
  unsigned const batch = static_cast<unsigned>(a.batch);
  Sm90AttentionBackwardParams p{};
  p.b = base;
  if (a.seqlen_q > 0 && a.seqlen_k > 0) {
    if (Status s = sm90_attention_tensor_map<T, Config::BlkM>("q", a.q.ptr, a.seqlen_q, Config::D, a.heads, a.batch, a.q, &p.tma_q); !s)
      return s;
    if (Status s = sm90_attention_tensor_map<T, Config::BlkM>("d_o", args.d_o.ptr, a.seqlen_q, Config::Dv, a.heads, a.batch,
                                                              args.d_o, &p.tma_do); !s)
      return s;
    if (Status s = sm90_attention_tensor_map<T, Config::BlkN>("k", a.k.ptr, a.seqlen_k, Config::D, a.kv_heads, a.batch, a.k, &p.tma_k); !s)
      return s;
    if (Status s = sm90_attention_tensor_map<T, Config::BlkN>("v", a.v.ptr, a.seqlen_k, Config::Dv, a.kv_heads, a.batch, a.v, &p.tma_v); !s)
      return s;
    // dq_accum [B * S_q, H, D]: boxes of BlkM rows by 32 fp32 columns.
    AttentionOperand const acc{base.dq_accum, a.seqlen_q * a.heads * Config::D, a.heads * Config::D, Config::D};
    if (Status s = sm90_attention_tensor_map<float, Config::BlkM>("dq_accum", acc.ptr, a.seqlen_q, Config::D, a.heads, a.batch, acc,
                                                                  &p.tma_dq); !s)
      return s;
    if (Status s = attention_bwd_preprocess<T>(args, base, stream); !s) return s;
  }
  if (a.seqlen_k > 0) {  // dK and dV (zeros where no query sees a key block), dQ's sums
    // dK and dV: stored by TMA in boxes of 64 keys, one a consumer warpgroup
    AttentionOperand const dk{args.dk.ptr, args.dk.batch_stride, args.dk.row_stride, args.dk.head_stride};
    AttentionOperand const dv{args.dv.ptr, args.dv.batch_stride, args.dv.row_stride, args.dv.head_stride};
    if (Status s = sm90_attention_tensor_map<T, 64>("dk", dk.ptr, a.seqlen_k, Config::D, a.kv_heads, a.batch, dk, &p.tma_dk); !s)
      return s;
    if (Status s = sm90_attention_tensor_map<T, 64>("dv", dv.ptr, a.seqlen_k, Config::Dv, a.kv_heads, a.batch, dv, &p.tma_dv); !s)
      return s;
    constexpr int smem = Config::SmemBytes;
    auto* kernel = &sm90_attention_bwd_kernel<Config>;
    if (Status s = attention_bwd_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)); !s)
      return s;
    kernel<<<dim3(blocks(a.seqlen_k, Config::BlkN), static_cast<unsigned>(a.kv_heads), batch), Config::Threads, smem, stream>>>(p);
    if (Status s = attention_bwd_status(cudaGetLastError()); !s) return s;
  }
  // dQ = scale * dq_accum (zeros when S_k = 0: the accumulator is zeroed)
  return a.seqlen_q > 0 ? attention_bwd_dq_convert<T>(args, base, stream) : Status::success();
}

template <class Config>
cudaError_t sm90_attention_bwd_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm90_attention_bwd_kernel<Config>);
}

template <class Config>
AttentionBackwardInstance make_sm90_attention_bwd_instance() {
  return {Config::D, Config::Dv, Config::BlkM, Config::BlkN, Config::Threads, Config::SmemBytes,
          sm90_attention_bwd_launch<Config>, sm90_attention_bwd_attributes<Config>};
}

}  // namespace tessel::kernel::detail
