// Modes that overlap have no complement: refused at compile time.
// EXPECT-ERROR: complement: the modes of the layout overlap or interleave
#include <tessel/layout.hpp>

using namespace tessel;

int main() {
  auto a = make_layout(make_shape(_4{}, _4{}), make_stride(_1{}, _2{}));
  return int(size(complement(a, _64{})));
}
