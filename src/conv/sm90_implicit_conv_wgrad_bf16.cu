// src/conv/sm90_implicit_conv_wgrad_bf16.cu -- the sm_90a implicit-GEMM wgrad kernels for bf16: the GEMM
// kernel with B the im2col view (dw = dy^T x im2col(x)), 128 x 256 tiles (the epilogue in two slabs)
// and, for 64 filters, 64 x 256 tiles of one consumer warpgroup; 4 stages.
#include "sm90_implicit_conv.cuh"

namespace tessel::kernel::detail {

namespace {
constexpr Sm90Im2colOperand BT = Sm90Im2colOperand::b_taps;
template <int TileN, int Stages, int ClusterM, int Slabs, Sm90Im2colOperand Im2col, int Consumers = 2>
using Conv = Sm90GemmConfig<bfloat16_t, TileN, Stages, ClusterM, 1, Sm90Accumulation::Fast, Slabs, 1, false, Consumers,
                            Sm90Build::general, false, Im2col>;
}  // namespace

Status sm90_implicit_conv_bf16_wgrad_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                          std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Conv<256, 4, 1, 2, BT>>(p, op, call, query, stream);
}

Status sm90_implicit_conv_bf16_wgrad_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                         std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Conv<256, 4, 1, 1, BT, 1>>(p, op, call, query, stream);
}
}  // namespace tessel::kernel::detail
