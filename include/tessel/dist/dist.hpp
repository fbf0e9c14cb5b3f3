// tessel/dist/dist.hpp -- tensor-parallel GEMMs over NCCL, communication overlapped with the GEMM.
//
//   ncclComm_t world = ...;                                    // the caller's communicator, one GPU per rank
//   tessel::dist::Context* ctx = nullptr;
//   if (Status s = tessel::dist::Context::create(world, {}, &ctx); !s) ...   // collective: every rank calls it
//   tessel::dist::AllGatherGemmArguments g;                    // tessel/dist/dist_arguments.hpp
//   g.m_shard = 4096, g.n = 4096, g.k = 8192, g.a_shard = dA, g.lda = 8192, g.b = dW, g.ldb = 8192, g.d = dD, g.ldd = 4096;
//   if (Status s = tessel::dist::all_gather_gemm(*ctx, g, stream); !s) std::fprintf(stderr, "%s\n", s.reason.c_str());
//   tessel::dist::Context::destroy(ctx);
//
// A Context is created once per communicator (collectively) and owns what the calls reuse: a
// communicator split from the caller's with NCCL_CTA_POLICY_ZERO (NCCL >= 2.28 then runs
// all-gather and all-to-all on symmetric buffers with the copy engines, so no SM is taken from the
// GEMM), blocking (NCCL 2.28 refuses the first copy-engine collective of a non-blocking one; the
// collectives still return once enqueued, and the waits for them have deadlines; creating the
// context waits for every rank without one), symmetric staging buffers (ncclMemAlloc +
// ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)) grown on demand, a high-priority
// communication stream and its events. Creation also runs one all-gather: NCCL sets the
// copy-engine path up on a communicator's first collective, waiting on the host for every rank,
// which belongs where every rank is waited for anyway rather than in a call.
//
// A call (all_gather_gemm, gemm_reduce_scatter) is collective: every rank of the context makes it,
// in the same order. It
//   1. checks its own arguments (validate(), dist_arguments.hpp), then, unless
//      Options::agree_on_arguments is off, all-gathers a 64-byte CallRecord through the copy
//      engines and waits for it (a host wait of 0.1-0.3 ms on two H200s): if any rank's arguments
//      were refused, or the ranks' shapes or dtypes differ, every rank returns an error and no data
//      moves between ranks -- a bad shape on one rank never hangs the others. The work that needs
//      no other rank (all_gather_gemm: the own shard's GEMM; gemm_reduce_scatter: the partial sums
//      of the peers' blocks) is enqueued before this wait once the staging buffers have grown to
//      the call's size, so the GPU computes while the host waits; when the ranks then disagree,
//      all_gather_gemm has written this rank's own rows of D;
//   2. enqueues the overlapped pipeline on `stream` and the context's communication stream
//      (docs/dist.md draws it): the GEMMs on `stream`, the transfers on the communication stream,
//      joined by events; on return `stream` is ordered after all of it, and nothing synchronises
//      with the host beyond step 1.
// Every GEMM of one call runs one kernel, chosen for the whole problem and pinned by name with a
// fixed K order (pin_gemm): all_gather_gemm's D has the bits of the sequential all-gather + the
// pinned tessel::gemm; gemm_reduce_scatter's partial sums travel in D's dtype and are added in
// fp32, as NCCL's reduce-scatter of the same partial sums would within rounding.
//
// Errors: Status, like the rest of the host API. A wait for a call's collectives that passes
// Options::timeout_ms aborts the context's communicator (ncclCommAbort): that call and every later
// one return StatusCode::cuda_error saying so, and the context must be destroyed. A peer that never
// makes the call is caught by the agreement's wait; the aborted context's communication stream then
// stays blocked on NCCL's copy-engine wait for that peer (ncclCommAbort does not release it), so
// the caller's stream still synchronizes but a device-wide synchronize does not: end the process
// (docs/dist.md, Risks).
// One call at a time per context (calls from several threads are serialised).
#pragma once

#include <tessel/core/status.hpp>
#include <tessel/dist/dist_arguments.hpp>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <memory>

namespace tessel::dist {

struct Options {
  // The most a wait for the other ranks may take before the communicator is aborted (ms).
  std::int64_t timeout_ms = 600000;
  // Compare every call's shapes across ranks before data moves (step 1 above). Off: no host wait
  // (the call can be captured in a CUDA graph once its buffers are grown), but ranks that disagree
  // on shapes hang or corrupt memory, as with raw NCCL.
  bool agree_on_arguments = true;
};

// What the context learnt at creation; `nccl_version` is the runtime library's (ncclGetVersion).
struct ContextInfo {
  int nranks = 0, rank = 0, device = -1, nccl_version = 0;
};

class Context {
 public:
  // Splits `comm` (collective over it) into the context's own communicator. The caller keeps
  // `comm`; the context may outlive it. The current device must be the communicator's.
  static Status create(ncclComm_t comm, Options const& options, Context** out);
  // Creates the context's communicator directly: rank `rank` of `nranks` that share `id` (one
  // rank's ncclGetUniqueId, sent to the others), on the current device. Collective.
  static Status create(ncclUniqueId const& id, int nranks, int rank, Options const& options, Context** out);
  // Frees the buffers and the communicator (after the work already enqueued has finished).
  // Collective, like NCCL's teardown: every rank first all-gathers a destroy record, waiting up to
  // Options::timeout_ms. A rank absent or still in a call (a record that differs) makes it abort
  // the communicator instead of waiting in NCCL; an aborted context whose communication stream
  // still waits on a peer keeps its buffers and stream until the process ends (freeing them would
  // wait forever or free memory a transfer may write).
  static void destroy(Context* ctx);

  ContextInfo info() const;

  struct State;  // src/dist/context.cpp
  State& state() { return *state_; }

  Context(Context const&) = delete;
  Context& operator=(Context const&) = delete;

 private:
  static Status finish_create(std::unique_ptr<State> s, Context** out);  // after the communicator exists
  explicit Context(std::unique_ptr<State> s);
  ~Context();
  std::unique_ptr<State> state_;
};

// D = all-gather(A) B_r on every rank (dist_arguments.hpp), overlapped (file comment).
Status all_gather_gemm(Context& ctx, AllGatherGemmArguments const& args, cudaStream_t stream);

// D_r = block r of sum over ranks of A_s B_s (dist_arguments.hpp), overlapped (file comment).
Status gemm_reduce_scatter(Context& ctx, GemmReduceScatterArguments const& args, cudaStream_t stream);

}  // namespace tessel::dist
