// src/conv/sm80_conv_depthwise_wgrad_f16.cu -- sm_80 direct depthwise weight gradient (both
// passes), fp16: 8 channels per thread (16-byte loads) or 1 (any channel count).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_depthwise_wgrad_f16(int vec) {
  if (vec == 8) return make_sm80_depthwise_wgrad_instance<Sm80DepthwiseWgradDefaultConfig<half_t, 8>>();
  return make_sm80_depthwise_wgrad_instance<Sm80DepthwiseWgradDefaultConfig<half_t, 1>>();
}

}  // namespace tessel::kernel::detail
