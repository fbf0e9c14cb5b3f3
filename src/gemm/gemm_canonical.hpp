// src/gemm/gemm_canonical.hpp -- what the tensor-core GEMM adapters (sm80_gemm.cpp, sm90_gemm.cpp)
// share: the canonical problem, alignment tests, operand staging and the workspace pool.
//
// Canonical problem: a row-major D (m x n) = A' (m x K) * B' (n x K)^T. A row-major D takes
// A' = op(A), B' = op(B)^T; a column-major D is computed as D^T = op(B)^T op(A)^T (A and B swap,
// M and N swap). Each operand is then a view: element (r, k) of batch b at
// ptr + b*batch_stride + r*row_stride + k*k_stride (elements).
#pragma once

#include "sm80_instances.hpp"

#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel::detail {

struct OperandView {
  void const* ptr;
  std::int64_t rows, batch_stride, row_stride, k_stride;
};

struct CanonicalGemm {
  std::int64_t m, n;  // of the row-major D computed
  OperandView a, b;   // (m, K) and (n, K)
};

CanonicalGemm canonical_gemm(GemmArguments const& g);

// `elements` consecutive elements of each row of a matrix at p (rows ld elements apart, batches
// batch_stride) can be read or written as one access: p is a multiple of their bytes, ld and --
// when batch > 1 -- the batch stride multiples of `elements`. A null p is not.
inline bool vector_aligned(void const* p, std::int64_t ld, std::int64_t batch_stride, std::int64_t batch,
                           std::size_t bytes, int elements) {
  return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % (std::size_t(elements) * bytes) == 0 &&
         ld % elements == 0 && (batch == 1 || batch_stride % elements == 0);
}

// p, ld and (when batch > 1) the batch stride are multiples of 16 bytes.
bool aligned16(void const* p, std::int64_t ld, std::int64_t batch_stride, std::int64_t batch, std::size_t bytes);

// The operand can be read in place by 16-byte copies: K-major (k stride 1) with 16-byte aligned rows.
bool readable_in_place(OperandView const& v, std::int64_t batch, std::size_t bytes);

inline std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

Status cuda_failure(char const* what, cudaError_t err);

// A stream-ordered memory pool per device that keeps its memory between calls (staged operands,
// split-K partial sums).
Status workspace_pool(cudaMemPool_t* out);

// `bytes` from workspace_pool on `stream` into *out, for the caller to cudaFreeAsync on a stream
// after its work; a failure's reason names `what` ("the 96 KiB of ...").
Status pool_allocate(void** out, std::size_t bytes, std::string const& what, cudaStream_t stream);

// ---- one call's workspace: staged operands, then the kernel's scratch ------------------------------

// An operand as the kernels read it: K-major, rows 16-byte aligned.
struct KMajorOperand {
  void const* ptr;
  std::int64_t ld, batch_stride;
};

struct CallWorkspace {
  KMajorOperand a{}, b{};    // the canonical A and B, in place or staged
  float* partials = nullptr;  // split-K partial sums
  int* flags = nullptr;       // split-K flags / counters, zeroed
  char* base = nullptr;       // the scratch: the pool's (release_workspace frees it) or the caller's
  bool pooled = false;        // base came from the library's pool
};

// Where a call's scratch comes from, and whether the call only asks its size.
struct WorkspaceSource {
  void* caller = nullptr;          // GemmArguments::workspace: the caller's memory, or nullptr: the pool
  std::size_t caller_bytes = 0;    // GemmArguments::workspace_bytes
  std::size_t* query = nullptr;    // non-null: store the bytes the call needs here, allocate and enqueue nothing
};
inline WorkspaceSource workspace_source(GemmArguments const& g, std::size_t* query) {
  return {g.workspace, g.workspace_bytes, query};
}

// When prepare_operands copies an operand: when it is MN-major or its rows are not 16-byte aligned
// (if_unaligned), always (a kernel that cannot take it in place), or never (the caller reads it
// in place some other way).
enum class Staging { if_unaligned, always, never };

// Makes the canonical operands readable by the kernels: an operand chosen by `a`, `b` is copied
// by sm80_stage_operands (one launch for both where it can) into scratch memory (the caller's or
// the pool's, `from`) as rows of kp = K rounded up to 128 bytes (zero past K; whole 128-byte lines
// per row, so no copy of a k-slice straddles more sectors than it must), batches back to back; the
// kernel's split-K scratch follows: `partials` floats and `flags` ints, the flags zeroed. On
// failure nothing stays allocated. With from.query, stores the bytes all that takes and does
// nothing else (the caller then returns without launching).
Status prepare_operands(CanonicalGemm const& c, std::int64_t k, std::int64_t batch, int element_bytes, Staging a,
                        Staging b, std::size_t partials, std::size_t flags, WorkspaceSource const& from,
                        cudaStream_t stream, CallWorkspace* w);

// Frees w's allocation (stream-ordered, after the kernels that use it); returns `result`, or the
// failure to free when result was a success.
Status release_workspace(CallWorkspace& w, Status result, cudaStream_t stream);

// ---- a fused epilogue in a pass of its own ----------------------------------------------------------

// g without its fused epilogue (bias, activation): the product a kernel computes before the pass.
GemmArguments without_fusion(GemmArguments g);

// D = act(S + beta * C + bias), rounded once to D's dtype, from S, the unfused fp32 result
// (alpha * op(A) op(B)) in the canonical D's orientation: row r, column c at
// s + b * s_batch_stride + r * s_ld + c. S may be D itself (an fp32 D that already holds
// alpha * A B + beta * C: with_c false). The fused epilogue of a call whose kernel has none (the
// SIMT kernels) or whose D is fp32 (the tensor-core kernels fuse 16-bit D only); the split-K fix-up
// with one slice (src/gemm/splitk_reduce.cu), the activations in their accurate forms.
Status fused_epilogue_pass(GemmArguments const& g, float const* s, std::int64_t s_ld, std::int64_t s_batch_stride,
                           bool with_c, cudaStream_t stream);

// A fused call with an fp32 D on a tensor-core kernel: `run` computes g without its fusion into D
// (or, with `query`, the scratch it needs), then fused_epilogue_pass finishes D in place -- the
// same fp32 arithmetic as an epilogue in the kernel, one pass over D later.
template <class Run>
Status run_fused_fp32(GemmArguments const& g, std::size_t* query, cudaStream_t stream, Run run) {
  GemmArguments const k = without_fusion(g);
  Status s = run(k, query, stream);
  if (!s || query != nullptr) return s;
  return fused_epilogue_pass(g, static_cast<float const*>(g.d), g.ldd, g.batch_stride_d, /*with_c=*/false, stream);
}

}  // namespace tessel::detail
