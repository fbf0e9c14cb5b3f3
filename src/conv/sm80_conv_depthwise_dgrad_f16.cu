// src/conv/sm80_conv_depthwise_dgrad_f16.cu -- sm_80 direct depthwise data gradient, fp16: 8
// channels per thread (16-byte loads of dy) and 1 channel per thread (any channel count).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_depthwise_dgrad_f16(int vec) {
  if (vec == 8) return make_sm80_depthwise_dgrad_instance<Sm80DepthwiseConfig<half_t, 8>>();
  return make_sm80_depthwise_dgrad_instance<Sm80DepthwiseConfig<half_t, 1>>();
}

}  // namespace tessel::kernel::detail
