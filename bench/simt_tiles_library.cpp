// bench/simt_tiles_library.cpp -- the library's SIMT kernels, as the registry runs them
// (bench_simt_tiles): every entry named simt_*, in the registry's order. No kernel is compiled
// here; the entries' attributes are those of their tn instance (the one the registry probes).
#include "simt_variants.hpp"

#include <tessel/gemm/device/gemm_registry.hpp>

#include <cstdio>
#include <string_view>

namespace tessel::bench {
namespace {
SimtVariantRegistration const registered{[] {
  std::vector<SimtVariant> vs;
  int order = 0;
  for (GemmKernelInfo const& k : gemm_kernels()) {
    if (!std::string_view(k.name).starts_with("simt_")) continue;
    SimtVariant v;
    v.order = order++, v.name = k.name;
    v.launch = [&k](GemmArguments const& g, cudaStream_t s) {
      Status const st = k.launch(g, s);
      if (!st) std::fprintf(stderr, "%s: %s\n", k.name, st.reason.c_str());
      return st ? cudaSuccess : cudaErrorLaunchFailure;
    };
    v.attributes = [&k](GemmArguments const& g, cudaFuncAttributes* a) { return k.attributes(g, a); };
    vs.push_back(std::move(v));
  }
  return vs;
}};
}  // namespace
}  // namespace tessel::bench
