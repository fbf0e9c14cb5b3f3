// bench/sm80_experiment/bf16_128x256x64_s3_interior_spread_passes.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
// The epilogue without its whole-tile path (staging budget 0): the pass-by-pass epilogue.
struct Config : Sm80GemmConfig<bfloat16_t, 128, 256, 64, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/3, Sm80MainloopSchedule<true, true, 2>> {
  static constexpr int EpilogueStagingBytes = 0;
};
Sm80VariantRegistration const registered{make_sm80_variant<Config>(8, "bf16 128x256x64 s3 interior spread passes-epilogue")};
}  // namespace
}  // namespace tessel::bench
