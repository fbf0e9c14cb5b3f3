// src/conv/sm90_implicit_conv_n192.cu -- the sm_90a implicit-GEMM fprop and stride-1 dgrad kernels
// with the pixels as B in tiles of 192 pixels x 128 output channels (4 stages, no cluster), bf16 and
// f16: where the 256-pixel or 256-channel tiles leave the grid's last round part-empty, 192-pixel
// tiles fill it (sm90_conv_run.cpp, pick_variant). Its own file: it compiles beside the others.
#include "sm90_implicit_conv.cuh"

namespace tessel::kernel::detail {

namespace {
template <class T>
Status run_n192(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call, std::size_t* query,
                cudaStream_t stream) {
  using Config = Sm90GemmConfig<T, 192, 4, 1, 1, Sm90Accumulation::Fast, 1, 1, false, 2, Sm90Build::general, false,
                                Sm90Im2colOperand::b_pixels>;
  return sm90_implicit_conv_run<Config>(p, op, call, query, stream);
}
}  // namespace

Status sm90_implicit_conv_bf16_pixels_b_n192(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                             std::size_t* query, cudaStream_t stream) {
  return run_n192<bfloat16_t>(p, op, call, query, stream);
}

Status sm90_implicit_conv_f16_pixels_b_n192(Sm80ConvParams const& p, conv::Operator op, Sm90ConvCall const& call,
                                            std::size_t* query, cudaStream_t stream) {
  return run_n192<half_t>(p, op, call, query, stream);
}

}  // namespace tessel::kernel::detail
