#include <tessel/layout.hpp>

#include <iostream>

int main() {
  using namespace tessel;
  std::cout << right_inverse(make_layout(make_shape(_4{}, _2{}), make_stride(_2{}, _1{}))) << "\n";
}
