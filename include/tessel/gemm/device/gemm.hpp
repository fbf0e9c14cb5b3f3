// tessel/gemm/device/gemm.hpp -- the GEMM host API.
//
//   tessel::GemmArguments g = tessel::make_packed_gemm(m, n, k, 1, DType::f32, DType::f32,
//                                                      MatrixOrder::row_major, MatrixOrder::col_major,
//                                                      MatrixOrder::row_major);
//   g.a = dA; g.b = dB; g.d = dD;                 // device pointers; C unused while beta == 0
//   if (tessel::Status s = tessel::gemm(g, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//
// gemm() validates (gemm_validate.hpp: cuBLAS's rules, every refusal names the argument), returns
// at once for size 0, computes D = beta * C for K = 0 or alpha = 0 without reading A or B, and
// otherwise launches the kernel the heuristic picks (or GemmArguments::kernel, by registry name;
// `tessel list` shows them). It never launches a kernel that has no image for the current GPU:
// that is StatusCode::arch_mismatch. The launch is asynchronous on `stream`; launch errors and
// errors left pending by earlier work are returned as StatusCode::cuda_error, never dropped.
#pragma once

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

namespace tessel {

// Whether gemm(args) would run: the argument rules, a kernel that takes the problem, and an
// image of that kernel for the current device. Makes no launch.
Status can_implement(GemmArguments const& args);

// D = alpha * op(A) * op(B) + beta * C on `stream` (see the file comment).
Status gemm(GemmArguments const& args, cudaStream_t stream = nullptr);

// The scratch bytes gemm(args) would take (operands staged into aligned copies, split-K partial
// sums and flags) with the kernel it would pick on the current device; 0 for most calls (aligned
// K-major operands, no split K). Launches nothing and enqueues nothing. A caller that owns its
// memory (CUDA graphs, frameworks' allocators) passes that many bytes as args.workspace.
Status gemm_workspace_size(GemmArguments const& args, std::size_t* bytes);

}  // namespace tessel
