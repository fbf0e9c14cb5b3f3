// left_inverse orders modes by stride at compile time, so run-time strides are refused.
// EXPECT-ERROR: left_inverse: the layout's strides must be static
#include <tessel/layout.hpp>

using namespace tessel;

int main(int argc, char**) {
  auto a = make_layout(make_shape(_4{}, _2{}), make_stride(argc, 4));
  return int(size(left_inverse(a)));
}
