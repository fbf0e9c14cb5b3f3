// A swizzle whose bit fields overlap (|S| < B) is not a permutation: refused at compile time.
// EXPECT-ERROR: |S| must be >= B
#include <tessel/layout.hpp>

int main() { return tessel::Swizzle<3, 3, 2>{}(5); }
