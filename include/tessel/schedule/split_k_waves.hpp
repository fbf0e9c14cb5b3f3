// tessel/schedule/split_k_waves.hpp -- how many K slices to cut each output tile into so that the
// CTAs fill the GPU in whole waves.
//
// choose_split_k_waves(tiles, iterations, slots, overhead, min_iterations, max_slices):
//   `tiles` output tiles, each a loop of `iterations` k-iterations; `slots` CTAs run at once
//   (SMs x CTAs per SM). With S slices there are tiles*S CTAs in ceil(tiles*S / slots) waves, each
//   as long as one CTA: ceil(iterations / S) k-iterations plus `overhead` (pipeline fill, epilogue
//   and the split-K reduction, in k-iteration equivalents). The answer minimises
//     cost(S) = ceil(tiles*S / slots) * (ceil(iterations / S) + overhead)
//   over 1 <= S <= max_slices with ceil(iterations / S) >= min_iterations (S = 1 always allowed);
//   ties go to fewer slices (less reduction traffic).
//   e.g. the skinny GEMM at M=16, N=K=8192 (128-column strips, 64-deep k-iterations) on 132 SMs
//        x 2 CTAs: tiles 64, iterations 128, slots 264, overhead 4 -> S = 4 (256 CTAs, one wave of
//        32 iterations each; S = 8 would take two waves of 16).
// Pure function of its arguments (host and device); tests/host/split_k_waves_test.cpp.
#pragma once

#include <tessel/config.hpp>

namespace tessel {

TESSEL_HOST_DEVICE constexpr long long split_k_waves_cost(long long tiles, long long iterations, long long slots,
                                                          int overhead, int slices) {
  long long const waves = (tiles * slices + slots - 1) / slots;
  return waves * ((iterations + slices - 1) / slices + overhead);
}

// Pre: tiles >= 1, iterations >= 0, slots >= 1, overhead >= 0, max_slices >= 1.
TESSEL_HOST_DEVICE constexpr int choose_split_k_waves(long long tiles, long long iterations, long long slots,
                                                      int overhead, int min_iterations, int max_slices) {
  int best = 1;
  long long best_cost = split_k_waves_cost(tiles, iterations, slots, overhead, 1);
  for (int s = 2; s <= max_slices; ++s) {
    if ((iterations + s - 1) / s < min_iterations) break;
    long long const c = split_k_waves_cost(tiles, iterations, slots, overhead, s);
    if (c < best_cost) best = s, best_cost = c;
  }
  return best;
}

}  // namespace tessel
