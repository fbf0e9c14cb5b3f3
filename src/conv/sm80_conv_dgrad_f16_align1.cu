// src/conv/sm80_conv_dgrad_f16_align1.cu -- sm_80 implicit-GEMM dgrad, fp16: 128x128x32 tiles,
// element-wise global loads (any channel count, any strides).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_dgrad_f16_align1() {
  return make_sm80_conv_instance<Sm80ConvDefaultConfig<half_t, /*Access=*/1>, conv::Operator::kDgrad>();
}

}  // namespace tessel::kernel::detail
