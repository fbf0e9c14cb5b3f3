// src/conv/sm90_implicit_conv_wgrad_f16.cu -- the sm_90a implicit-GEMM wgrad kernels for f16: the GEMM
// kernel with B the im2col view (dw = dy^T x im2col(x)) in tiles 192 columns wide -- three column
// blocks, and 9 or 27 taps of 64·m channels are a whole number of them -- 128 filters a tile (two
// consumer warpgroups; or a cluster of two column tiles sharing dy^T's box by multicast) or 64 (one
// consumer); 4 stages, the epilogue in one slab.
#include "sm90_implicit_conv.cuh"

namespace tessel::kernel::detail {

namespace {
template <int ClusterN, int Consumers>
using Wgrad = Sm90GemmConfig<half_t, 192, 4, 1, ClusterN, Sm90Accumulation::Fast, 1, 1, false, Consumers, Sm90Build::general,
                             false, Sm90Im2colOperand::b_taps>;
}  // namespace

Status sm90_implicit_conv_f16_wgrad_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                         std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Wgrad<1, 2>>(p, op, call, query, stream);
}

Status sm90_implicit_conv_f16_wgrad_m128_c1x2(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                              std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Wgrad<2, 2>>(p, op, call, query, stream);
}

Status sm90_implicit_conv_f16_wgrad_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                        std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Wgrad<1, 1>>(p, op, call, query, stream);
}
}  // namespace tessel::kernel::detail
