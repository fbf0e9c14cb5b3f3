// bench/sm80_experiment/bf16_256x128x64_s3_interior_spread_persistent.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 256, 128, 64, /*WarpsM=*/4, /*WarpsN=*/2, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_persistent_variant<Config>(12, "bf16 256x128x64 s3 interior spread persistent")};
}  // namespace
}  // namespace tessel::bench
