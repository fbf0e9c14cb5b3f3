// bench/sm80_registry_shim.cpp -- the GEMM registry API (gemm_registry.hpp, gemm.hpp) over the
// sm80 entries alone, so that `tessel gemm` can benchmark them before the library's registry
// (src/gemm/gemm.cpp) lists them. scripts/bench-sm80.sh links the CLI's objects against this file
// first and libtessel_kernels.a after it (the archive's gemm.cpp is then not needed); the result is
// `tessel-sm80`, a CLI whose `auto` is sm80_select_gemm_kernel and whose `tessel list` shows the
// sm80 entries. Once gemm.cpp lists them this file has no use beyond the bench script's fallback.
#include "gemm/simt_instances.hpp"  // launch_gemm_scale: D = beta * C for K = 0 or alpha = 0

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/gemm/device/sm80_gemm_kernels.hpp>
#include <tessel/runtime/device.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace tessel {

namespace {
int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 132;
  return sms;
}
}  // namespace

std::span<GemmKernelInfo const> gemm_kernels() { return sm80_gemm_kernels(); }

GemmKernelInfo const* find_gemm_kernel(std::string_view name) {
  for (GemmKernelInfo const& k : sm80_gemm_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

GemmKernelInfo const* select_gemm_kernel(GemmArguments const& g, Status* why) {
  GemmKernelInfo const* k = nullptr;
  if (g.kernel != nullptr && std::string_view(g.kernel) != "auto") {
    k = find_gemm_kernel(g.kernel);
    if (k == nullptr && why) *why = Status::error(StatusCode::invalid_argument, std::string("kernel: '") + g.kernel + "' is not an sm80 kernel");
  } else {
    k = sm80_select_gemm_kernel(g, sm_count());
    if (k == nullptr && why) *why = Status::error(StatusCode::not_supported, "a_type: the sm80 shim runs bf16, fp16 and tf32 only");
  }
  if (k != nullptr) {
    if (Status s = k->check(g); !s) {
      if (why) *why = std::move(s);
      return nullptr;
    }
  }
  return k;
}

Status gemm_kernel_runs_here(GemmKernelInfo const& k, GemmArguments const& g) {
  cudaFuncAttributes attr{};
  if (cudaError_t err = k.attributes(g, &attr); err != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::error(StatusCode::arch_mismatch, std::string("kernel ") + k.name + " has no image for this GPU (" +
                                                        cudaGetErrorName(err) + ")");
  }
  return Status::success();
}

Status can_implement(GemmArguments const& g) {
  if (Status s = gemm_validate(g); !s) return s;
  if (gemm_is_noop(g)) return Status::success();
  Status why;
  GemmKernelInfo const* k = select_gemm_kernel(g, &why);
  if (k == nullptr) return why;
  return gemm_kernel_runs_here(*k, g);
}

Status gemm(GemmArguments const& g, cudaStream_t stream) {
  if (Status s = gemm_validate(g); !s) return s;
  if (gemm_is_noop(g)) return Status::success();
  Status why;
  GemmKernelInfo const* k = select_gemm_kernel(g, &why);
  if (k == nullptr) return why;
  if (!gemm_reads_ab(g)) {
    cudaError_t const err = kernel::detail::launch_gemm_scale(g, stream);
    if (err != cudaSuccess) return Status::error(StatusCode::cuda_error, std::string("D = beta * C: ") + cudaGetErrorString(err));
    return Status::success();
  }
  return k->launch(g, stream);
}

}  // namespace tessel
