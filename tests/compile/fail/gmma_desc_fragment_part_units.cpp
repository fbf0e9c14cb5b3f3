// A partition whose instruction slices are 8 bytes apart (the second k-slice of a bf16 operand
// starting 4 elements on) cannot be a fragment of descriptors: a descriptor's start address
// moves in 16-byte units. Refused at compile time.
// EXPECT-ERROR: make_gmma_desc_fragment: a step between the partition's instruction slices is not a multiple of 16 bytes
#include <tessel/atom/gmma_desc_fragment.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/numeric/bfloat16.hpp>

using namespace tessel;

int main() {
  // (MMA,MMA_M,MMA_K): one K-major SW128 (64,16) operand, two k-slices 4 elements apart.
  auto partition = composition(Swizzle<3, 3, 3>{}, Layout<Shape<Shape<_64, _16>, _1, _2>, Stride<Stride<_64, _1>, _0, _4>>{});
  auto frag = GMMA::make_gmma_desc_fragment<GMMA::Major::K, bfloat16_t>(partition, 0);
  return int(frag(0, 0, 1) & 1);
}
