// bench/sm80_variants.cuh -- the kernels bench_sm80_variants times: one entry per sm_80
// configuration and mainloop schedule (Sm80GemmConfig, Sm80MainloopSchedule), launched through the
// same Sm80Instance as the library's registry entries. Each TU of bench/sm80_experiment/ registers
// its entries with a static Sm80VariantRegistration; the binary runs what it links.
#pragma once

#include "../src/gemm/sm80_launch.cuh"
#include "sm80_gemm_persistent.cuh"

#include <tessel/gemm/device/gemm_arguments.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::kernel::detail {

// The persistent kernel (sm80_gemm_persistent.cuh): as many CTAs as can be resident, at
// most one per unit of work.
template <class Config, class ElementOut16, int CtasPerSm>
cudaError_t sm80_launch_persistent(Sm80GemmParams const& p, cudaStream_t stream) {
  using G = Sm80GemmPersistent<Config, ElementOut16, CtasPerSm>;
  constexpr int smem = G::SmemBytes;
  auto* kernel = &sm80_gemm_persistent_kernel<Config, ElementOut16, CtasPerSm>;
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); err != cudaSuccess)
    return err;
  int device = 0, sms = 0, resident = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
  if (cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); err != cudaSuccess) return err;
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Config::Threads, smem); err != cudaSuccess)
    return err;
  if (resident < 1) return cudaErrorInvalidConfiguration;
  std::int64_t const units = std::int64_t(p.tiles_m) * p.tiles_n * p.batch * p.splits;
  std::int64_t const ctas = std::min<std::int64_t>(units, std::int64_t(sms) * resident);
  if (ctas == 0) return cudaSuccess;
  kernel<<<dim3(static_cast<unsigned>(ctas), 1, 1), Config::Threads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Config, class ElementOut16, int CtasPerSm>
cudaError_t sm80_attributes_persistent(cudaFuncAttributes* attr) {
  return cudaFuncGetAttributes(attr, &sm80_gemm_persistent_kernel<Config, ElementOut16, CtasPerSm>);
}

template <class Config, class ElementOut16, int CtasPerSm>
Sm80Instance make_sm80_persistent_instance() {
  return {Config::TileM,
          Config::TileN,
          Config::TileK,
          Config::Threads,
          Sm80GemmPersistent<Config, ElementOut16, CtasPerSm>::SmemBytes,
          int(sizeof(typename Config::Element)),
          sm80_launch_persistent<Config, ElementOut16, CtasPerSm>,
          sm80_attributes_persistent<Config, ElementOut16, CtasPerSm>};
}

}  // namespace tessel::kernel::detail

namespace tessel::bench {

struct Sm80Variant {
  int order = 0;               // position in the report
  std::string name;            // what differs, for the report
  DType ab = DType::bf16;      // input dtype (bf16, or tf32 for fp32 operands)
  kernel::detail::Sm80Instance (*instance)() = nullptr;
};

inline std::vector<Sm80Variant>& sm80_variant_registry() {
  static std::vector<Sm80Variant> all;
  return all;
}

struct Sm80VariantRegistration {
  Sm80VariantRegistration(std::initializer_list<Sm80Variant> vs) {
    for (Sm80Variant const& v : vs) sm80_variant_registry().push_back(v);
    std::sort(sm80_variant_registry().begin(), sm80_variant_registry().end(),
              [](Sm80Variant const& a, Sm80Variant const& b) { return a.order < b.order; });
  }
};

// Config: an Sm80GemmConfig; bf16 configurations write bf16 or fp32, tf32 ones fp32.
template <class Config>
Sm80Variant make_sm80_variant(int order, char const* name) {
  using E = typename Config::Element;
  constexpr bool tf32 = std::is_same_v<E, float>;
  using Out16 = std::conditional_t<tf32, void, E>;
  return {order, name, tf32 ? DType::tf32 : DType::bf16, &kernel::detail::make_sm80_instance<Config, Out16>};
}

// The persistent kernel of the same configuration (sm80_gemm_persistent.cuh).
template <class Config, int CtasPerSm = 1>
Sm80Variant make_sm80_persistent_variant(int order, char const* name) {
  using E = typename Config::Element;
  constexpr bool tf32 = std::is_same_v<E, float>;
  using Out16 = std::conditional_t<tf32, void, E>;
  return {order, name, tf32 ? DType::tf32 : DType::bf16, &kernel::detail::make_sm80_persistent_instance<Config, Out16, CtasPerSm>};
}

// Shorthands for the experiment's TUs.
using collective::Sm80GemmConfig;
using collective::Sm80MainloopSchedule;
using collective::Sm80MmaOrder;
using collective::Tf32Rounding;

}  // namespace tessel::bench
