// bench/sm80_experiment/tf32_128x128x32_s3_interior_spread_split.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<float, 128, 128, 32, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2, Tf32Rounding::split>>;  // 128 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(29, "tf32 128x128x32 s3 interior spread split")};
}  // namespace
}  // namespace tessel::bench
