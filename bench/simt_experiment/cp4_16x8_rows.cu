// bench/simt_experiment/cp4_16x8_rows.cu -- one variant of the SIMT mainloop experiment
// (bench_simt_variants): cp.async, 4 stages, K-contiguous operands stored as k rows, 16x8 per
// thread. It beat the register-staged default where neither operand is K-contiguous (CLI nt,
// 1.015x cuBLAS at 4096^3 on the H100) and lost where one is (0.73-0.79).
#include "simt_experiment.cuh"

namespace tessel::bench {
namespace {
using Tile = kernel::SimtTile<128, 128, 8, 2, 2, 4, 2>;  // 128 threads, 16x8 each, 2 CTAs/SM
SimtVariantRegistration const registered{[] {
  return std::vector<SimtVariant>{
      make_simt_variant<SimtPipelinedKernel<Tile, kernel::SimtCpAsync<4>, true>, Tile>(10, "cp.async4 16x8 k-rows"),
  };
}};
}  // namespace
}  // namespace tessel::bench
