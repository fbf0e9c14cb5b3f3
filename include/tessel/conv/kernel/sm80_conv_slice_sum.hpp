// tessel/conv/kernel/sm80_conv_slice_sum.hpp -- the second kernel of a split wgrad reduction
// (tessel/conv/conv_split.hpp): dw = act(alpha * sum_z partials[z] + beta * residual), the sum
// over the slices z = 0, 1, ..., slices - 1 in that order, in fp32, so the result is the same bits
// on every run. One thread per 8-channel chunk of one filter row (k, then t*r*s*c/g columns),
// grid-stride; the partials are read as 32-byte rows (kp.partial_ld a multiple of 8 floats) and
// the chunk is written through conv_store_chunk (16-byte stores where out's chunks are aligned).
//   e.g. k = 64, t*r*s*c/g = 576, 12 slices: 64 * 72 chunks, each the sum of 12 partial chunks.
#pragma once

#include <tessel/config.hpp>
#include <tessel/conv/kernel/sm80_conv_epilogue.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>

#include <cstdint>

namespace tessel::kernel {

// Pre: kp as the implicit-GEMM wgrad kernel received it (partials set, its slices finished).
template <class Element>
__global__ void sm80_conv_slice_sum_kernel(Sm80ConvKernelParams const kp) {
  Sm80ConvParams const& p = kp.p;
  int const chunks_per_row = (kp.gemm_n + 7) / 8;
  std::int64_t const chunks = std::int64_t(p.k) * chunks_per_row;
  std::int64_t const slice_stride = std::int64_t(p.k) * kp.partial_ld;
  Element* const out = static_cast<Element*>(p.out);
  Element const* const residual = static_cast<Element const*>(p.residual);
  detail::ConvEpilogueOps const ops{p.alpha, p.beta, nullptr, p.activation};
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < chunks;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t const row = i / chunks_per_row;
    int const c8 = int(i - row * chunks_per_row) * 8;
    float const* src = kp.partials + row * kp.partial_ld + c8;
    float acc[8] = {};
    for (int z = 0; z < kp.slices; ++z, src += slice_stride) {
      float4 const lo = __ldg(reinterpret_cast<float4 const*>(src));
      float4 const hi = __ldg(reinterpret_cast<float4 const*>(src) + 1);
      acc[0] += lo.x, acc[1] += lo.y, acc[2] += lo.z, acc[3] += lo.w;
      acc[4] += hi.x, acc[5] += hi.y, acc[6] += hi.z, acc[7] += hi.w;
    }
    std::int64_t const offset = row * p.w_stride_k + c8;
    int const cols = kp.gemm_n - c8 < 8 ? kp.gemm_n - c8 : 8;
    detail::conv_store_chunk<Element>(ops, acc, out + offset, residual ? residual + offset : nullptr, 0, cols, kp.out_vec,
                                      kp.residual_vec);
  }
}

}  // namespace tessel::kernel
