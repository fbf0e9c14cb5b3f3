// src/conv/sm80_conv_slice_sum.cu -- the slice-sum kernel of a split wgrad reduction
// (tessel/conv/kernel/sm80_conv_slice_sum.hpp), for bf16 and fp16 outputs.
#include "sm80_conv_instances.hpp"

#include <tessel/conv/kernel/sm80_conv_slice_sum.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

cudaError_t sm80_conv_slice_sum(Sm80ConvKernelParams const& kp, bool bf16, cudaStream_t stream) {
  constexpr int kThreads = 256;
  long long const chunks = static_cast<long long>(kp.p.k) * ((kp.gemm_n + 7) / 8);
  unsigned const grid = static_cast<unsigned>(std::clamp<long long>((chunks + kThreads - 1) / kThreads, 1, 65535LL * 32));
  if (bf16)
    sm80_conv_slice_sum_kernel<bfloat16_t><<<grid, kThreads, 0, stream>>>(kp);
  else
    sm80_conv_slice_sum_kernel<half_t><<<grid, kThreads, 0, stream>>>(kp);
  return cudaGetLastError();
}

}  // namespace tessel::kernel::detail
