// bench/simt_experiment/library_16x8.cu -- one variant of the SIMT mainloop experiment (bench_simt_variants).
#include "../simt_variants.cuh"

namespace tessel::bench {
namespace {
using kernel::SimtCpAsync;
using kernel::SimtRegisterStaged;
using kernel::SimtTile;
using Tile = SimtTile<128, 128, 8, 2, 2, 4, 2>;  // 128 threads, 16x8 each, 2 CTAs/SM
SimtVariantRegistration const registered{
    make_simt_variant<SimtRegisterKernel<Tile>, Tile>(1, "library loop, 16x8/thr 128 thr"),
};
}  // namespace
}  // namespace tessel::bench
