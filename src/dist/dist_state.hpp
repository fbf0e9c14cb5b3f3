// src/dist/dist_state.hpp -- what a tessel::dist::Context owns, and the steps every call shares:
// NCCL results as Status, waits with a deadline, the argument agreement, symmetric staging.
#pragma once

#include <tessel/dist/dist.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace tessel::dist {

// One ncclMemAlloc allocation registered as a symmetric window on the context's communicator.
struct SymmetricBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  ncclWindow_t window = nullptr;
};

struct Context::State {
  Options options;
  ncclComm_t comm = nullptr;  // the context's own: split or created, CTA policy zero, blocking
  int nranks = 0, rank = 0, device = -1, nccl_version = 0;
  cudaStream_t comm_stream = nullptr;
  cudaEvent_t call_start = nullptr;  // on the caller's stream: the inputs are ready
  cudaEvent_t last_use = nullptr;    // on the caller's stream: the previous call's GEMMs read staging until here
  cudaEvent_t comm_done = nullptr;   // on the communication stream: its last work of the call
  cudaEvent_t records_in = nullptr;  // on the communication stream: the agreement's records are on the host
  std::vector<cudaEvent_t> chunk_events;  // per chunk: produced (compute) and arrived (communication)
  SymmetricBuffer records;            // P CallRecords (all-gathered)
  SymmetricBuffer staging;            // the chunks in flight
  CallRecord* host_records = nullptr; // pinned: P + 1 records (this rank's first, then the gathered ones)
  bool aborted = false;
  std::string abort_reason;
  std::mutex call_mutex;

  ~State();
};

namespace detail {

using Clock = std::chrono::steady_clock;

Status cuda_status(char const* what, cudaError_t err);
Status nccl_status(char const* what, ncclResult_t r);

// An NCCL call's result: waits (ncclCommGetAsyncError, polled) while it reports ncclInProgress,
// until `deadline`, then aborts the communicator; an error aborts it too.
Status nccl_settle(Context::State& s, char const* what, ncclResult_t r, Clock::time_point deadline);

// Waits for `ev` on the host, watching the communicator for errors, until `deadline`.
Status wait_event(Context::State& s, cudaEvent_t ev, char const* what, Clock::time_point deadline);

Clock::time_point deadline_of(Context::State const& s);

// A refusal of the context itself: aborted, or a current device that is not the context's.
Status check_usable(Context::State& s);

// Step 1 of a call (dist.hpp), in two halves, so that a call can enqueue the work that needs no
// other rank between them and the host's wait runs beside it on the GPU:
//   post_call_record  enqueues the all-gather of this rank's record (its verdict on its own
//                     arguments, and what the ranks must agree on) on the communication stream;
//   await_agreement   waits for every rank's record and compares them: returns `own` when it
//                     failed, else agree()'s verdict; communication errors as such.
// Both do nothing (await returns `own`) with Options::agree_on_arguments off or one rank.
Status post_call_record(Context::State& s, CallRecord record);

// The in-place all-gather of s.records (one CallRecord per rank) on the communication stream:
// the agreement's, and the one a context runs at creation.
Status all_gather_records(Context::State& s, char const* what);
Status await_agreement(Context::State& s, Status own);

// Makes s.staging at least `bytes` (collective: every rank asks for the same size at the same call,
// which the agreement guarantees), waiting for the previous call's users of the old buffer first.
Status ensure_staging(Context::State& s, std::size_t bytes);

// Makes s.chunk_events hold at least n events.
Status ensure_events(Context::State& s, std::size_t n);

// `rows` rows of `row_bytes` bytes from src to dst (pitches in bytes), on the stream: a kernel of
// 16-byte copies where every address, pitch and the width allow (twice the copy engines' rate
// for the all-gather's own shard), else cudaMemcpy2DAsync.
cudaError_t copy_rows(void const* src, std::int64_t src_pitch, void* dst, std::int64_t dst_pitch, std::int64_t rows,
                      std::int64_t row_bytes, cudaStream_t stream);

// dst(i, j) = sum over slices s != skip of src[s * slice_stride + i * ld_src + j], for i < rows,
// j < cols, summed in fp32 and rounded once to dtype (bf16, f16 or f32): the partial sums a
// reduce-scatter received from the other ranks (slice `skip` is this rank's own slot).
cudaError_t sum_partials(DType dtype, void const* src, std::int64_t slice_stride, int slices, int skip,
                         std::int64_t rows, std::int64_t cols, std::int64_t ld_src, void* dst, std::int64_t ld_dst,
                         cudaStream_t stream);

// The kernel the whole problem runs (pin_gemm pins it by this name): the registry's pick and an
// image for this GPU; empty when no kernel runs (nothing to compute, K = 0, alpha = 0).
Status pick_kernel(GemmArguments const& full, std::string* name);

// The address `elements` elements of dtype t past p.
inline char* at(void* p, std::int64_t elements, DType t) {
  return static_cast<char*>(p) + elements * std::int64_t(size_of(t));
}
inline char const* at(void const* p, std::int64_t elements, DType t) {
  return static_cast<char const*>(p) + elements * std::int64_t(size_of(t));
}

}  // namespace detail
}  // namespace tessel::dist
