// bench/simt_variants.hpp -- the kernels bench_simt_tiles and bench_simt_variants time: each an
// fp32 GEMM launcher for a problem in the kernels' terms (D row-major; the operand orders pick
// the layout). Each TU registers a source of entries with a static SimtVariantRegistration; the
// binary runs what it links (bench_simt_tiles: the library's SIMT registry entries,
// simt_tiles_library.cpp; bench_simt_variants: the mainloop experiment, simt_experiment/).
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace tessel::bench {

struct SimtVariant {
  int order = 0;     // position in the report
  std::string name;  // what differs, for the report
  // Both take g as the kernels see it: fp32, D row-major, A and B in the layout under test.
  std::function<cudaError_t(GemmArguments const& g, cudaStream_t stream)> launch;
  std::function<cudaError_t(GemmArguments const& g, cudaFuncAttributes* attr)> attributes;  // the instance launch runs
};

// A TU's entries, listed when main asks (never during static initialisation, so a source may
// read other TUs' tables).
using SimtVariantSource = std::vector<SimtVariant> (*)();

inline std::vector<SimtVariantSource>& simt_variant_sources() {
  static std::vector<SimtVariantSource> all;
  return all;
}

struct SimtVariantRegistration {
  explicit SimtVariantRegistration(SimtVariantSource source) { simt_variant_sources().push_back(source); }
};

// Every registered entry, in report order.
inline std::vector<SimtVariant> simt_variants() {
  std::vector<SimtVariant> all;
  for (SimtVariantSource source : simt_variant_sources())
    for (SimtVariant& v : source()) all.push_back(std::move(v));
  std::stable_sort(all.begin(), all.end(), [](SimtVariant const& a, SimtVariant const& b) { return a.order < b.order; });
  return all;
}

}  // namespace tessel::bench
