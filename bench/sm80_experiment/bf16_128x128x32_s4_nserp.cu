// bench/sm80_experiment/bf16_128x128x32_s4_nserp.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 128, 32, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/4, Sm80MainloopSchedule<false, false, 2, Tf32Rounding::nearest_away, false, false, Sm80MmaOrder::n_serpentine>>;  // 128 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(2, "bf16 128x128x32 s4 nserp")};
}  // namespace
}  // namespace tessel::bench
