// bench/simt_experiment/regs_8x8.cu -- one variant of the SIMT mainloop experiment (bench_simt_variants).
#include "../simt_variants.cuh"

namespace tessel::bench {
namespace {
using kernel::SimtCpAsync;
using kernel::SimtRegisterStaged;
using kernel::SimtTile;
using Tile = SimtTile<128, 128, 8, 4, 2, 4, 2>;  // 256 threads, 8x8 each, 2 CTAs/SM
SimtVariantRegistration const registered{
    make_simt_variant<SimtPipelinedKernel<Tile, SimtRegisterStaged, false>, Tile>(2, "pipelined regs 8x8"),
};
}  // namespace
}  // namespace tessel::bench
