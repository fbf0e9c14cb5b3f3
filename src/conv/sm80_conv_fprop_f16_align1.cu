// src/conv/sm80_conv_fprop_f16_align1.cu -- sm_80 implicit-GEMM fprop, fp16: 128x128x32 tiles,
// element-wise global loads (any channel count, any strides).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_fprop_f16_align1() {
  return make_sm80_conv_instance<Sm80ConvDefaultConfig<half_t, /*Access=*/1>, conv::Operator::kFprop>();
}

}  // namespace tessel::kernel::detail
