// blocked_product((_2):(_2), _4:_1) would zip a rank-1 block with a rank-2 repetition and drop a
// mode (a result of size 4 instead of 8): refused.
// EXPECT-ERROR: zip: the tuples must have the same rank
#include <tessel/layout.hpp>

using namespace tessel;

int main() {
  auto r = blocked_product(make_layout(make_shape(_2{}), make_stride(_2{})), make_layout(_4{}, _1{}));
  return int(size(r));
}
