// A non-injective layout has no left inverse; CuTe returns (_2,_2):(_1,_4), whose R(A(2)) is 4.
// EXPECT-ERROR: left_inverse: the layout is not injective
#include <tessel/layout.hpp>

using namespace tessel;

int main() {
  auto a = make_layout(make_shape(_4{}, _2{}), make_stride(_1{}, _2{}));
  return int(size(left_inverse(a)));
}
