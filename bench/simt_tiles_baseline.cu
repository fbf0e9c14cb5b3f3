// bench/simt_tiles_baseline.cu -- the library's SIMT kernel as the registry builds it (the reference row).
#include "simt_variants.cuh"

namespace tessel::bench {
namespace {
using T128 = kernel::SimtTile<128, 128, 8, 4, 2, 4, 2>;
SimtVariantRegistration const registered{
    make_simt_variant<SimtRegisterKernel<T128>, T128>(0, "regs 128x128x8 w4x2 (library)"),
};
}  // namespace
}  // namespace tessel::bench
