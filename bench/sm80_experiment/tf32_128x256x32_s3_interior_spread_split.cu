// bench/sm80_experiment/tf32_128x256x32_s3_interior_spread_split.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<float, 128, 256, 32, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2, Tf32Rounding::split>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(30, "tf32 128x256x32 s3 interior spread split")};
}  // namespace
}  // namespace tessel::bench
