// src/conv/sm90_conv_fprop_bf16.cu -- the sm_90a fprop and stride-1 dgrad kernels for bf16: 128 x 256,
// 128 x 128 and 128 x 64 tiles, 64 channels per k-tile, 4, 6 and 8 stages.
#include "sm90_conv_fprop.cuh"

namespace tessel::kernel::detail {

Status sm90_conv_fprop_launch_bf16_n256(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 256>>(p, stream);
}

Status sm90_conv_fprop_launch_bf16_n128(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 128>>(p, stream);
}

Status sm90_conv_fprop_launch_bf16_n64(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 64>>(p, stream);
}

Status sm90_conv_dgrad_launch_bf16_n256(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 256, true>>(p, stream);
}

Status sm90_conv_dgrad_launch_bf16_n128(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 128, true>>(p, stream);
}

Status sm90_conv_dgrad_launch_bf16_n64(Sm80ConvParams const& p, cudaStream_t stream) {
  return sm90_conv_fprop_launch<Sm90ConvFpropConfig<bfloat16_t, 64, true>>(p, stream);
}

}  // namespace tessel::kernel::detail
