// tessel/gemm/device/sm80_gemm_kernels.hpp -- the sm_80 tensor-core GEMM kernels as registry entries.
//
// mma.sync + ldmatrix + a cp.async multistage pipeline (tessel/gemm/kernel/sm80_gemm.hpp), for
// bf16 and fp16 inputs (bf16/fp16 or fp32 output) and fp32 inputs in tf32 mode (fp32 output), in
// several CTA tiles. Every entry takes any M, N, K, any leading dimensions and strides, any
// operand order and batch count:
//   - a column-major D is computed as D^T = B^T A^T (row-major);
//   - an operand that is not K-major, or whose pointer, leading dimension or batch stride is not a
//     multiple of 16 bytes, is first copied into a K-major, 16-byte aligned buffer (one pass over
//     the operand, from a tessel-owned stream-ordered memory pool); D and C without 16-byte aligned
//     rows are written and read element by element;
//   - serial split-K (deterministic) when the output tiles cannot fill the GPU and K is long.
// Two more entries, sm80_bf16_skinny and sm80_fp16_skinny, run skinny problems (one of M, N small)
// at memory bandwidth: the small side on the MMA's M, strips of the long operand streamed through
// a deep pipeline, parallel split-K reduced in a fixed order (docs/skinny_gemm.md); the heuristic
// picks them by sm80_skinny_pays (tessel/gemm/device/sm80_skinny_policy.hpp).
// The registry (gemm_registry.hpp) lists these entries; sm80_select_gemm_kernel is the heuristic
// among them. Needs the CUDA runtime headers (cudaStream_t), like the registry.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <span>

namespace tessel {

// The entries: the multistage ones (bf16, then fp16, then tf32; within a dtype the heuristic's order
// of preference for large problems), then the skinny ones (bf16, fp16).
std::span<GemmKernelInfo const> sm80_gemm_kernels();

// The entry the sm_80 heuristic runs for `args` (validated; bf16, fp16 or tf32 inputs) on a GPU
// with `sm_count` SMs, or nullptr when the inputs are plain fp32 (not a tensor-core dtype).
GemmKernelInfo const* sm80_select_gemm_kernel(GemmArguments const& args, int sm_count);

// What sm80 entries' launch() decides for itself, fixed by hand (tests, benchmarks).
struct Sm80RunOptions {
  int splits = 0;              // split-K slices (serial; skinny entries: parallel); 0: the heuristic's choice
  bool force_staging = false;  // stage A and B even when they could be read in place
};

// Run sm80 entry `kernel` on `args` with `options`. Pre: gemm_validate(args) passed, kernel.check(args)
// passed, M, N, K > 0 and alpha != 0 (tessel::gemm handles the rest). Asynchronous on `stream`.
Status sm80_gemm_run(GemmKernelInfo const& kernel, GemmArguments const& args, Sm80RunOptions const& options,
                     cudaStream_t stream);

}  // namespace tessel
