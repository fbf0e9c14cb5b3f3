// bench/sm80_experiment/tf32_128x256x64_s2_interior_rn.cu -- one variant of the sm80 mainloop experiment (bench_sm80_variants).
// BLK_K 64 fp32 (256-byte rows, two swizzled 128-byte column blocks), 2 stages (192 KiB): one
// barrier per 8 k-blocks instead of 4; the copies all at k-block 0.
#include "../sm80_variants.cuh"

namespace tessel::bench {
namespace {
using Config = Sm80GemmConfig<float, 128, 256, 64, /*WarpsM=*/2, /*WarpsN=*/4, /*Stages=*/2,
                              Sm80MainloopSchedule<true, false, 2, Tf32Rounding::nearest_even>>;  // 256 threads
Sm80VariantRegistration const registered{make_sm80_variant<Config>(26, "tf32 128x256x64 s2 interior rn")};
}  // namespace
}  // namespace tessel::bench
