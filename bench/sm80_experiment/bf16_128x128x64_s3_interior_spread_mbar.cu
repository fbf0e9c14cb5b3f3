// bench/sm80_experiment/bf16_128x128x64_s3_interior_spread_mbar.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 128, 64, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2, Tf32Rounding::nearest_away, true>>;
Sm80VariantRegistration const registered{make_sm80_variant<Config>(17, "bf16 128x128x64 s3 interior spread mbar")};
}  // namespace
}  // namespace tessel::bench
