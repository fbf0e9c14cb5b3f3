// src/conv/sm80_conv_smallc_bf16.cu -- the small-channel sm_80 kernels, bf16: fprop with C <= 4 and
// dgrad with C <= 8, K <= 64 (tessel/conv/kernel/sm80_smallc_conv.hpp).
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_fprop_bf16_smallc() { return make_sm80_smallc_instance<bfloat16_t, conv::Operator::kFprop>(); }
Sm80ConvInstance sm80_conv_instance_dgrad_bf16_smallc() { return make_sm80_smallc_instance<bfloat16_t, conv::Operator::kDgrad>(); }

}  // namespace tessel::kernel::detail
