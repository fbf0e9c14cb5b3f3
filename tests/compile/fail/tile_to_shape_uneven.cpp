// A 128-byte-swizzle K-major atom is 64 bf16 wide: a 64 x 48 tile is not made of whole atoms.
// EXPECT-ERROR: tile_to_shape: each extent of the shape must be a multiple of the block's extent in that mode
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/numeric/bfloat16.hpp>

using namespace tessel;

int main() {
  auto l = tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_64, _48>{});
  return int(size(l));
}
