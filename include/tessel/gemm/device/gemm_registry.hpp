// tessel/gemm/device/gemm_registry.hpp -- the compiled GEMM kernels, what each can do, and the
// heuristic that picks one.
//
// Every kernel behind tessel::gemm() has one entry here; `tessel list` prints this table and
// `tessel gemm --kernel NAME` runs an entry by name. An entry answers for itself: `check` says
// whether it takes a (validated) problem and why not, `attributes` reports the image the driver
// would run on the current device (cudaErrorNoKernelImageForDevice when there is none, which the
// API turns into StatusCode::arch_mismatch instead of launching).
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <span>
#include <string_view>

namespace tessel {

struct GemmKernelInfo {
  char const* name;       // registry name, e.g. "simt_64x64x8"
  char const* summary;    // one line: the algorithm
  char const* tile;       // CTA tile and threads
  char const* dtypes;     // A/B -> C/D combinations it runs
  char const* layouts;    // operand orders it runs
  char const* alignment;  // what it needs, and what it does with more
  char const* selection;  // when the heuristic picks it
  int min_cc;             // lowest compute capability (major * 10 + minor) it is built and correct for
  Status (*check)(GemmArguments const&);                     // pre: gemm_validate passed
  Status (*launch)(GemmArguments const&, cudaStream_t);     // pre: check passed, M, N, K > 0, alpha != 0
  cudaError_t (*attributes)(GemmArguments const&, cudaFuncAttributes*);  // the instance launch would run
  // The bytes of scratch launch would take for these arguments (staged operands, split-K
  // partials), launching nothing; nullptr: the kernel takes none. Pre: as launch.
  Status (*workspace)(GemmArguments const&, std::size_t*) = nullptr;
};

// All compiled kernels, in the order `tessel list` prints them.
std::span<GemmKernelInfo const> gemm_kernels();

// The entry named `name`, or nullptr.
GemmKernelInfo const* find_gemm_kernel(std::string_view name);

// The kernel gemm() runs for `args` (validated): args.kernel when named, else the heuristic's
// choice. nullptr when none takes the problem; *why then says which argument and rule.
GemmKernelInfo const* select_gemm_kernel(GemmArguments const& args, Status* why = nullptr);

// Whether `k` has an image for the current device that can run `args`: compute capability at
// least min_cc and a binary or PTX the driver accepts. arch_mismatch (with the fix) otherwise.
Status gemm_kernel_runs_here(GemmKernelInfo const& k, GemmArguments const& args);

}  // namespace tessel
