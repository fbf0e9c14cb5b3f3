// A row-major 64 x 16 bf16 tile (rows 32 bytes apart) is no wgmma operand layout: the
// descriptor's core matrices are 8 rows of 16 contiguous bytes. Refused at compile time.
// EXPECT-ERROR: make_gmma_desc: the layout is not one the descriptor can describe for this Major
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/numeric/bfloat16.hpp>

using namespace tessel;

int main() {
  auto d = GMMA::make_gmma_desc<GMMA::Major::K, bfloat16_t>(Layout<Shape<_64, _16>, Stride<_16, _1>>{}, 0);
  return int(d & 1);
}
