// bench/sm80_experiment/bf16_128x128x32_s4.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 128, 32, /*WarpsM=*/2, /*WarpsN=*/2, /*Stages=*/4>;  // 128 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(0, "bf16 128x128x32 s4 (library)")};
}  // namespace
}  // namespace tessel::bench
