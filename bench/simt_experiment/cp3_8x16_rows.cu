// bench/simt_experiment/cp3_8x16_rows.cu -- one variant of the SIMT mainloop experiment (bench_simt_variants).
#include "../simt_variants.cuh"

namespace tessel::bench {
namespace {
using kernel::SimtCpAsync;
using kernel::SimtRegisterStaged;
using kernel::SimtTile;
using Tile = SimtTile<128, 128, 8, 2, 2, 8, 2>;  // 128 threads, 8x16 each, 2 CTAs/SM
SimtVariantRegistration const registered{
    make_simt_variant<SimtPipelinedKernel<Tile, SimtCpAsync<3>, true>, Tile>(8, "pipelined cp.async3 8x16 k-rows"),
};
}  // namespace
}  // namespace tessel::bench
