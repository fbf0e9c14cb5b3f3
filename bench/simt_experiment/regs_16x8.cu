// bench/simt_experiment/regs_16x8.cu -- the reference row of the SIMT mainloop experiment
// (bench_simt_variants): the configuration of the library's simt_128x128x8_128t, compiled here
// (src/gemm/simt_launch.cuh, SimtTile128x128x8_128t).
#include "simt_experiment.cuh"

namespace tessel::bench {
namespace {
using Tile = kernel::SimtTile<128, 128, 8, 2, 2, 4, 2>;  // 128 threads, 16x8 each, 2 CTAs/SM
SimtVariantRegistration const registered{[] {
  return std::vector<SimtVariant>{
      make_simt_variant<SimtPipelinedKernel<Tile, kernel::SimtRegisterStaged, false>, Tile>(0, "regs 16x8 (simt_128x128x8_128t)"),
  };
}};
}  // namespace
}  // namespace tessel::bench
