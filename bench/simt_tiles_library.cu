// bench/simt_tiles_library.cu -- the library's mainloops under other tilings (bench_simt_tiles).
#include "simt_variants.cuh"

namespace tessel::bench {
namespace {
using kernel::SimtTile;
using T128 = SimtTile<128, 128, 8, 4, 2, 4, 2>;
using T128w24 = SimtTile<128, 128, 8, 2, 4, 8, 2>;
using T256x128 = SimtTile<256, 128, 8, 4, 2, 8, 1>;
using T64 = SimtTile<64, 64, 8, 2, 1, 4, 4>;
SimtVariantRegistration const registered{
    make_simt_variant<SimtRegisterKernel<T128w24>, T128w24>(10, "regs 128x128x8 w2x4"),
    make_simt_variant<SimtCpAsyncKernel<T128, 3>, T128>(20, "cp.async3 128x128x8 w4x2 (library)"),
    make_simt_variant<SimtCpAsyncKernel<T128, 4>, T128>(30, "cp.async4 128x128x8 w4x2"),
    make_simt_variant<SimtCpAsyncKernel<T128w24, 3>, T128w24>(40, "cp.async3 128x128x8 w2x4"),
    make_simt_variant<SimtCpAsyncKernel<T256x128, 3>, T256x128>(50, "cp.async3 256x128x8 16x8/thr"),
    make_simt_variant<SimtRegisterKernel<T64>, T64>(60, "regs 64x64x8"),
};
}  // namespace
}  // namespace tessel::bench
