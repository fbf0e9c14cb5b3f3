// src/conv/sm80_conv_dgrad_bf16.cu -- sm_80 implicit-GEMM dgrad, bf16: 128x128x32 tiles, 16-byte
// cp.async (channels per group and strides multiples of 8 elements).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_dgrad_bf16() {
  return make_sm80_conv_instance<Sm80ConvDefaultConfig<bfloat16_t, /*Access=*/8>, conv::Operator::kDgrad>();
}

}  // namespace tessel::kernel::detail
