// bench/sm80_experiment/bf16_128x256x128_s2_interior.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
// BLK_K 128 (256-byte rows, two swizzled 128-byte column blocks), 2 stages (192 KiB): one barrier
// per 8 k-blocks instead of 4; the copies all at k-block 0 (spread, the last ones would have one
// k-block to land).
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<bfloat16_t, 128, 256, 128, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/2, Sm80MainloopSchedule<true, false, 2>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(13, "bf16 128x256x128 s2 interior")};
}  // namespace
}  // namespace tessel::bench
