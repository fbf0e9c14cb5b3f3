// bench/sm80_experiment/bf16_128x256x128_s2_interior_persistent.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 256, 128, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/2, Sm80MainloopSchedule<true, false, 2>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_persistent_variant<Config>(14, "bf16 128x256x128 s2 interior persistent")};
}  // namespace
}  // namespace tessel::bench
