// src/conv/sm90_implicit_conv_bf16.cu -- the sm_90a implicit-GEMM fprop and stride-1 dgrad kernels for
// bf16: the GEMM kernel with an im2col operand. The pixels as A in 128 x 256 tiles (2x1 clusters, 4
// stages, the epilogue in two slabs), or as B for outputs of 64 or 128 channels: 64 x 256 tiles of one
// consumer warpgroup with 4 stages, 128 x 256 with 3 (sm90_conv_run.cpp, pick_variant).
#include "sm90_implicit_conv.cuh"

namespace tessel::kernel::detail {

namespace {
constexpr Sm90Im2colOperand A = Sm90Im2colOperand::a, BP = Sm90Im2colOperand::b_pixels;
template <int TileN, int Stages, int ClusterM, int Slabs, Sm90Im2colOperand Im2col, int Consumers = 2>
using Conv = Sm90GemmConfig<bfloat16_t, TileN, Stages, ClusterM, 1, Sm90Accumulation::Fast, Slabs, 1, false, Consumers,
                            Sm90Build::general, false, Im2col>;
}  // namespace

Status sm90_implicit_conv_bf16_n256(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                    std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Conv<256, 4, 2, 2, A>>(p, op, call, query, stream);
}

Status sm90_implicit_conv_bf16_pixels_b_m128(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                             std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Conv<256, 3, 1, 1, BP>>(p, op, call, query, stream);
}

Status sm90_implicit_conv_bf16_pixels_b_m64(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                            std::size_t* query, cudaStream_t stream) {
  return sm90_implicit_conv_run<Conv<256, 4, 1, 1, BP, 1>>(p, op, call, query, stream);
}
}  // namespace tessel::kernel::detail
