// bench/sm80_experiment/bf16_128x256x64_s3_interior_spread_persistent.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 256, 64, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_persistent_variant<Config>(10, "bf16 128x256x64 s3 interior spread persistent")};
}  // namespace
}  // namespace tessel::bench
