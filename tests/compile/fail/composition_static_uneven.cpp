// CuTe accepts this and returns a wrong layout (oracle README, surprise 3): the stride 5 of the
// tiler splits the mode of extent 7 unevenly. tessel refuses at compile time.
// EXPECT-ERROR: composition: the right-hand layout walks across a mode of the left-hand layout unevenly
#include <tessel/layout.hpp>

using namespace tessel;

int main() {
  auto a = make_layout(make_shape(make_shape(_7{}, Int<10>{})), make_stride(make_stride(_1{}, Int<14>{})));
  auto t = make_layout(make_shape(_5{}, Int<14>{}), make_stride(_1{}, _5{}));
  auto r = logical_divide(a, t);
  return int(size(r));
}
