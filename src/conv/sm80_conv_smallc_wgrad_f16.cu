// src/conv/sm80_conv_smallc_wgrad_f16.cu -- the small-channel sm_80 weight gradient, fp16: C <= 4,
// K <= 64 (tessel/conv/kernel/sm80_smallc_conv.hpp); its own unit so that it compiles beside the others.
#include "sm80_conv_launch.cuh"

namespace tessel::kernel::detail {

Sm80ConvInstance sm80_conv_instance_wgrad_f16_smallc() { return make_sm80_smallc_instance<half_t, conv::Operator::kWgrad>(); }

}  // namespace tessel::kernel::detail
