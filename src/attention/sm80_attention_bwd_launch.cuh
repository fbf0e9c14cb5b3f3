// src/attention/sm80_attention_bwd_launch.cuh -- launching one sm_80 attention-backward
// configuration (included by the per-dtype TUs only).
#pragma once

#include "attention_backward_instances.hpp"

#include <tessel/attention/kernel/sm80_attention_backward.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessel::kernel::detail {

// Both kernels move 16 bytes at a time: attention_backward_validate has checked that O, dO and dQ
// have 16-byte-aligned rows and the workspace is 256-byte aligned; every head dim is a multiple of 8.
template <class Element>
Status attention_bwd_preprocess(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream) {
  AttentionArguments const& a = args.problem;
  std::int64_t const rows = attention_is_varlen(a) ? a.seqlen_q : p.stat_seqlen;  // fixed lengths: the padding too
  int const lanes = attention_bwd_preprocess_lanes(p.head_dim_v);
  std::int64_t const per_cta = 8 * (32 / lanes);
  dim3 const grid(static_cast<unsigned>((rows + per_cta - 1) / per_cta), static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch));
  sm80_attention_bwd_preprocess_kernel<Element><<<grid, 256, 0, stream>>>(p, lanes);
  return attention_bwd_status(cudaGetLastError());
}

template <class Element>
Status attention_bwd_dq_convert(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream) {
  AttentionArguments const& a = args.problem;
  constexpr std::int64_t kMaxConvertCtas = 65535LL * 16;
  std::int64_t const units = p.rows * a.heads * (a.head_dim / 8);
  unsigned const ctas = static_cast<unsigned>(std::clamp<std::int64_t>((units + 255) / 256, 1, kMaxConvertCtas));
  sm80_attention_bwd_dq_convert_kernel<Element><<<ctas, 256, 0, stream>>>(p, int(a.batch));
  return attention_bwd_status(cudaGetLastError());
}

template <class Config>
Status sm80_attention_bwd_launch(AttentionBackwardArguments const& args, AttentionBackwardParams const& p, cudaStream_t stream) {
  using Element = typename Config::Element;
  constexpr int smem = Config::SmemBytes;
  AttentionArguments const& a = args.problem;
  auto const blocks = [](std::int64_t n, int blk) { return static_cast<unsigned>((n + blk - 1) / blk); };
  unsigned const heads = static_cast<unsigned>(a.heads), kv_heads = static_cast<unsigned>(a.kv_heads);
  unsigned const batch = static_cast<unsigned>(a.batch);
  dim3 const dkdv_grid(blocks(a.seqlen_k, Config::BlkN), kv_heads, batch);
  dim3 const dq_grid(blocks(a.seqlen_q, Config::BlkM), heads, batch);
  auto* const dkdv = &sm80_attention_bwd_dkdv_kernel<Config>;  // adds dS K to p.dq_accum where that is set
  auto* const dq = &sm80_attention_bwd_dq_kernel<Config>;
  if (Status s = attention_bwd_status(cudaFuncSetAttribute(dkdv, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)); !s)
    return s;
  if (Status s = attention_bwd_status(cudaFuncSetAttribute(dq, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)); !s)
    return s;

  if (a.seqlen_q == 0) {  // dK = dV = 0: no query block sees a key block
    dkdv<<<dkdv_grid, Config::Threads, smem, stream>>>(p);
    return attention_bwd_status(cudaGetLastError());
  }
  if (a.seqlen_k == 0) {  // dQ = 0: no query block has a key block
    dq<<<dq_grid, Config::Threads, smem, stream>>>(p);
    return attention_bwd_status(cudaGetLastError());
  }
  if (Status s = attention_bwd_preprocess<Element>(args, p, stream); !s) return s;
  if (args.deterministic) {
    dkdv<<<dkdv_grid, Config::Threads, smem, stream>>>(p);
    if (Status s = attention_bwd_status(cudaGetLastError()); !s) return s;
    dq<<<dq_grid, Config::Threads, smem, stream>>>(p);
    return attention_bwd_status(cudaGetLastError());
  }
  dkdv<<<dkdv_grid, Config::Threads, smem, stream>>>(p);
  if (Status s = attention_bwd_status(cudaGetLastError()); !s) return s;
  return attention_bwd_dq_convert<Element>(args, p, stream);
}

template <class Config>
cudaError_t sm80_attention_bwd_attributes(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_attention_bwd_dkdv_kernel<Config>);
}

template <class Config>
AttentionBackwardInstance make_sm80_attention_bwd_instance() {
  return {Config::D, Config::Dv, Config::BlkM, Config::BlkN, Config::Threads, Config::SmemBytes,
          sm80_attention_bwd_launch<Config>, sm80_attention_bwd_attributes<Config>};
}

}  // namespace tessel::kernel::detail
