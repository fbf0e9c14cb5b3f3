// src/dist/context.cpp -- tessel::dist::Context: the zero-CTA communicator, the staging buffers,
// the waits with deadlines and the argument agreement (tessel/dist/dist.hpp).
#include "dist_state.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace tessel::dist {

namespace detail {

Status cuda_status(char const* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::success();
  (void)cudaGetLastError();
  return Status::error(StatusCode::cuda_error,
                       std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

Status nccl_status(char const* what, ncclResult_t r) {
  if (r == ncclSuccess) return Status::success();
  return Status::error(StatusCode::cuda_error, std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
}

Clock::time_point deadline_of(Context::State const& s) {
  return Clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(s.options.timeout_ms, 1));
}

namespace {

// Gives up on the communicator: its pending work is cancelled and every later call is refused.
Status abort_comm(Context::State& s, std::string why) {
  if (!s.aborted && s.comm != nullptr) (void)ncclCommAbort(s.comm);
  s.comm = nullptr;
  s.aborted = true;
  s.abort_reason = why;
  return Status::error(StatusCode::cuda_error, why + "; the communicator was aborted: destroy this context and create another");
}

// The communicator's state: ncclSuccess, ncclInProgress, or the error it hit.
ncclResult_t async_state(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  if (ncclResult_t r = ncclCommGetAsyncError(comm, &state); r != ncclSuccess) return r;
  return state;
}

// One step of a host wait: a yield for the first `kSpin` of it, then 20 us sleeps. The argument
// agreement's wait is a few hundred microseconds, and a sleep of 20 us asked is ~70 us taken.
constexpr auto kSpin = std::chrono::milliseconds(2);
void pause(Clock::time_point waiting_since) {
  if (Clock::now() - waiting_since < kSpin) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

Status nccl_settle(Context::State& s, char const* what, ncclResult_t r, Clock::time_point deadline) {
  auto const since = Clock::now();
  while (r == ncclInProgress) {
    if (Clock::now() > deadline)
      return abort_comm(s, std::string("NCCL: ") + what + " did not finish within " +
                               std::to_string(s.options.timeout_ms) + " ms (a rank that never made the call?)");
    pause(since);
    r = async_state(s.comm);
  }
  if (r != ncclSuccess) return abort_comm(s, std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
  return Status::success();
}

Status wait_event(Context::State& s, cudaEvent_t ev, char const* what, Clock::time_point deadline) {
  auto const since = Clock::now();
  for (;;) {
    cudaError_t const q = cudaEventQuery(ev);
    if (q == cudaSuccess) return Status::success();
    if (q != cudaErrorNotReady) return cuda_status(what, q);
    if (ncclResult_t const r = async_state(s.comm); r != ncclSuccess && r != ncclInProgress)
      return abort_comm(s, std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
    if (Clock::now() > deadline)
      return abort_comm(s, std::string(what) + " did not finish within " + std::to_string(s.options.timeout_ms) +
                               " ms (a rank that never made the call?)");
    pause(since);
  }
}

Status check_usable(Context::State& s) {
  if (s.aborted)
    return Status::error(StatusCode::cuda_error, "the context's communicator was aborted (" + s.abort_reason +
                                                     "); destroy this context and create another");
  int device = -1;
  if (Status st = cuda_status("cudaGetDevice", cudaGetDevice(&device)); !st) return st;
  if (device != s.device)
    return Status::error(StatusCode::invalid_argument, "the current device is " + std::to_string(device) +
                                                           ", but the context was created on device " +
                                                           std::to_string(s.device) + "; make it current");
  return Status::success();
}

Status all_gather_records(Context::State& s, char const* what) {
  char* const slots = static_cast<char*>(s.records.ptr);
  std::size_t const bytes = sizeof(CallRecord);
  return nccl_settle(s, what,
                     ncclAllGather(slots + bytes * std::size_t(s.rank), slots, bytes, ncclInt8, s.comm, s.comm_stream),
                     deadline_of(s));
}

namespace {

// Enqueues the all-gather of `record` (this rank's) into s.records and its copy back to
// s.host_records[1..P], then records s.records_in, on the communication stream.
Status post_record(Context::State& s, CallRecord record) {
  s.host_records[0] = record;
  char* const slots = static_cast<char*>(s.records.ptr);
  std::size_t const bytes = sizeof(CallRecord);
  if (Status st = cuda_status("cudaMemcpyAsync (this rank's call record)",
                              cudaMemcpyAsync(slots + bytes * std::size_t(s.rank), &s.host_records[0], bytes,
                                              cudaMemcpyHostToDevice, s.comm_stream));
      !st)
    return st;
  if (Status st = all_gather_records(s, "ncclAllGather (the call records)"); !st) return st;
  if (Status st = cuda_status("cudaMemcpyAsync (the gathered call records)",
                              cudaMemcpyAsync(&s.host_records[1], slots, bytes * std::size_t(s.nranks),
                                              cudaMemcpyDeviceToHost, s.comm_stream));
      !st)
    return st;
  return cuda_status("cudaEventRecord", cudaEventRecord(s.records_in, s.comm_stream));
}

}  // namespace

Status post_call_record(Context::State& s, CallRecord record) {
  if (!s.options.agree_on_arguments || s.nranks == 1) return Status::success();
  return post_record(s, record);
}

Status await_agreement(Context::State& s, Status own) {
  if (!s.options.agree_on_arguments || s.nranks == 1) return own;
  if (Status st = wait_event(s, s.records_in, "the all-gather of the call records", deadline_of(s)); !st) return st;
  if (!own) return own;
  return agree(std::span<CallRecord const>(&s.host_records[1], std::size_t(s.nranks)), s.rank);
}

Status ensure_events(Context::State& s, std::size_t n) {
  while (s.chunk_events.size() < n) {
    cudaEvent_t ev = nullptr;
    if (Status st = cuda_status("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)); !st)
      return st;
    s.chunk_events.push_back(ev);
  }
  return Status::success();
}

namespace {

// ncclMemAlloc + a symmetric window over it (collective).
Status allocate_symmetric(Context::State& s, std::size_t bytes, SymmetricBuffer* out) {
  void* p = nullptr;
  if (Status st = nccl_status("ncclMemAlloc", ncclMemAlloc(&p, bytes)); !st) return st;
  ncclWindow_t win = nullptr;
  if (Status st = nccl_settle(s, "ncclCommWindowRegister (NCCL_WIN_COLL_SYMMETRIC)",
                              ncclCommWindowRegister(s.comm, p, bytes, &win, NCCL_WIN_COLL_SYMMETRIC),
                              deadline_of(s));
      !st) {
    (void)ncclMemFree(p);
    return st;
  }
  *out = {p, bytes, win};
  return Status::success();
}

void free_symmetric(Context::State& s, SymmetricBuffer* b) {
  if (b->ptr == nullptr) return;
  if (b->window != nullptr && s.comm != nullptr && !s.aborted)
    (void)nccl_settle(s, "ncclCommWindowDeregister", ncclCommWindowDeregister(s.comm, b->window), deadline_of(s));
  (void)ncclMemFree(b->ptr);
  *b = {};
}

constexpr std::size_t kStagingGranule = std::size_t(2) << 20;  // ncclMemAlloc's VMM granularity on Hopper

}  // namespace

Status ensure_staging(Context::State& s, std::size_t bytes) {
  if (bytes <= s.staging.bytes) return Status::success();
  // The previous calls' readers (GEMMs on their streams) and writers (this stream) of the old buffer.
  if (Status st = wait_event(s, s.last_use, "the previous call's GEMMs", deadline_of(s)); !st) return st;
  if (Status st = cuda_status("cudaStreamSynchronize (communication stream)", cudaStreamSynchronize(s.comm_stream)); !st)
    return st;
  free_symmetric(s, &s.staging);
  std::size_t grown = std::max(bytes, s.staging.bytes + s.staging.bytes / 2);
  grown = (grown + kStagingGranule - 1) / kStagingGranule * kStagingGranule;
  return allocate_symmetric(s, grown, &s.staging);
}

namespace {

// Whether every rank is destroying its context too: an all-gather of a record no call writes,
// waited for with the deadline. Otherwise (a rank absent, or still in a call this rank never made:
// NCCL's teardown would wait for it on the host, without a deadline) the communicator is aborted,
// as it is for a context whose creation failed before its records could travel.
bool peers_destroy_too(Context::State& s) {
  if (s.nranks == 1) return true;
  if (s.host_records == nullptr || s.records.ptr == nullptr || s.records_in == nullptr) {
    (void)abort_comm(s, "the context's creation did not finish");
    return false;
  }
  CallRecord mine;
  mine.v[CallRecord::op] = kDestroyOperation;
  Status st = post_record(s, mine);
  if (st) st = wait_event(s, s.records_in, "the all-gather of the destroy records", deadline_of(s));
  if (st) st = agree(std::span<CallRecord const>(&s.host_records[1], std::size_t(s.nranks)), s.rank);
  if (!st && !s.aborted) (void)abort_comm(s, st.reason);
  return bool(st);
}

}  // namespace

}  // namespace detail

using detail::cuda_status;
using detail::nccl_status;

Context::State::~State() {
  int previous = -1;  // the context's device is current while its resources are released
  if (device >= 0 && cudaGetDevice(&previous) == cudaSuccess && previous != device) (void)cudaSetDevice(device);
  if (comm != nullptr && !aborted && detail::peers_destroy_too(*this)) {
    (void)cudaStreamSynchronize(comm_stream);
    detail::free_symmetric(*this, &staging);
    detail::free_symmetric(*this, &records);
    ncclResult_t r = ncclCommFinalize(comm);
    auto const deadline = detail::deadline_of(*this);
    while (r == ncclInProgress && detail::Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      (void)ncclCommGetAsyncError(comm, &r);
    }
    if (r == ncclSuccess)
      (void)ncclCommDestroy(comm);
    else
      (void)ncclCommAbort(comm);
  } else if (comm_stream == nullptr || cudaStreamQuery(comm_stream) == cudaSuccess) {
    if (staging.ptr != nullptr) (void)ncclMemFree(staging.ptr);
    if (records.ptr != nullptr) (void)ncclMemFree(records.ptr);
  } else {
    // Aborted with the communication stream still waiting on a peer (ncclCommAbort does not
    // release that wait): its buffers, the stream and the pinned records stay allocated until the
    // process ends. Freeing them would synchronise with a stream that never finishes, or free
    // memory a transfer may still write.
    (void)cudaGetLastError();
    staging = {}, records = {}, comm_stream = nullptr, host_records = nullptr;
  }
  for (cudaEvent_t ev : chunk_events) (void)cudaEventDestroy(ev);
  for (cudaEvent_t ev : {call_start, last_use, comm_done, records_in})
    if (ev != nullptr) (void)cudaEventDestroy(ev);
  if (comm_stream != nullptr) (void)cudaStreamDestroy(comm_stream);
  if (host_records != nullptr) (void)cudaFreeHost(host_records);
  if (previous >= 0 && previous != device) (void)cudaSetDevice(previous);
}

Context::Context(std::unique_ptr<State> s) : state_(std::move(s)) {}
Context::~Context() = default;

void Context::destroy(Context* ctx) { delete ctx; }

ContextInfo Context::info() const { return {state_->nranks, state_->rank, state_->device, state_->nccl_version}; }

namespace {

// The config of the context's communicator: copy-engine collectives on symmetric buffers
// (NCCL_CTA_POLICY_ZERO), blocking. NCCL 2.28.3 and 2.28.9 refuse the first copy-engine collective
// of a non-blocking communicator ("Attempt to use communicator before the previous operation
// returned ncclSuccess", then ncclInvalidArgument, on the two-H200 machine), so the calls block;
// a collective call returns once enqueued, and the waits on its completion keep their deadlines.
ncclConfig_t zero_cta_config() {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.blocking = 1;
  c.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  c.commName = "tessel::dist";
  return c;
}

}  // namespace

// Everything after the communicator exists: streams, events, the records' buffer.
Status Context::finish_create(std::unique_ptr<Context::State> s, Context** out) {
  auto const deadline = detail::deadline_of(*s);
  if (Status st = detail::nccl_settle(*s, "creating the communicator", ncclInProgress, deadline); !st) return st;
  if (Status st = nccl_status("ncclCommCount", ncclCommCount(s->comm, &s->nranks)); !st) return st;
  if (Status st = nccl_status("ncclCommUserRank", ncclCommUserRank(s->comm, &s->rank)); !st) return st;
  if (Status st = nccl_status("ncclGetVersion", ncclGetVersion(&s->nccl_version)); !st) return st;
  int lo = 0, hi = 0;
  if (Status st = cuda_status("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&lo, &hi)); !st)
    return st;
  // The transfers feed the GEMM: their stream's work goes first whenever both are ready.
  if (Status st = cuda_status("cudaStreamCreateWithPriority",
                              cudaStreamCreateWithPriority(&s->comm_stream, cudaStreamNonBlocking, hi));
      !st)
    return st;
  for (cudaEvent_t* ev : {&s->call_start, &s->last_use, &s->comm_done, &s->records_in})
    if (Status st = cuda_status("cudaEventCreateWithFlags", cudaEventCreateWithFlags(ev, cudaEventDisableTiming)); !st)
      return st;
  if (Status st = cuda_status("cudaMallocHost", cudaMallocHost(reinterpret_cast<void**>(&s->host_records),
                                                               sizeof(CallRecord) * std::size_t(s->nranks + 1)));
      !st)
    return st;
  std::size_t const record_bytes =
      std::max<std::size_t>(NCCL_WIN_REQUIRED_ALIGNMENT, sizeof(CallRecord) * std::size_t(s->nranks));
  if (Status st = detail::allocate_symmetric(*s, record_bytes, &s->records); !st) return st;
  // One all-gather of the records buffer now, on every rank. NCCL sets a communicator's copy-engine
  // collectives up on its first one, inside the host call and waiting there for every rank: in a
  // call, a rank that never came would hold the others inside NCCL past any deadline (two H200s,
  // NCCL 2.28.9: a fresh communicator's first all-gather on one rank did not return; once one had
  // run on both, one rank's returned in 5 ms and its wait was on the GPU, where the deadline sees it).
  // Creating the context waits for every rank anyway.
  if (Status st = detail::all_gather_records(*s, "ncclAllGather (the first, setting up the copy engines' collectives)");
      !st)
    return st;
  if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(s->records_in, s->comm_stream)); !st) return st;
  if (Status st = detail::wait_event(*s, s->records_in, "the first all-gather", deadline); !st) return st;
  *out = new Context(std::move(s));
  return Status::success();
}

namespace {

Status start_state(Options const& options, std::unique_ptr<Context::State>* s) {
  if (options.timeout_ms <= 0)
    return Status::error(StatusCode::invalid_argument,
                         "options.timeout_ms: " + std::to_string(options.timeout_ms) + " is not positive");
  *s = std::make_unique<Context::State>();
  (*s)->options = options;
  if (Status st = cuda_status("cudaGetDevice", cudaGetDevice(&(*s)->device)); !st) return st;
  int version = 0;
  if (Status st = nccl_status("ncclGetVersion", ncclGetVersion(&version)); !st) return st;
  if (version < 22800)
    return Status::error(StatusCode::not_supported,
                         "NCCL " + std::to_string(version) +
                             " is loaded; tessel::dist needs NCCL 2.28 or newer (zero-CTA collectives on symmetric "
                             "windows)");
  return Status::success();
}

}  // namespace

Status Context::create(ncclComm_t comm, Options const& options, Context** out) {
  if (out == nullptr) return Status::error(StatusCode::invalid_argument, "out: null");
  *out = nullptr;
  if (comm == nullptr) return Status::error(StatusCode::invalid_argument, "comm: null");
  std::unique_ptr<State> s;
  if (Status st = start_state(options, &s); !st) return st;
  int rank = 0;
  if (Status st = nccl_status("ncclCommUserRank", ncclCommUserRank(comm, &rank)); !st) return st;
  ncclConfig_t config = zero_cta_config();
  ncclResult_t const r = ncclCommSplit(comm, 0, rank, &s->comm, &config);
  if (r != ncclSuccess && r != ncclInProgress) return nccl_status("ncclCommSplit", r);
  return finish_create(std::move(s), out);
}

Status Context::create(ncclUniqueId const& id, int nranks, int rank, Options const& options, Context** out) {
  if (out == nullptr) return Status::error(StatusCode::invalid_argument, "out: null");
  *out = nullptr;
  if (nranks < 1) return Status::error(StatusCode::invalid_argument, "nranks: " + std::to_string(nranks) + " is below 1");
  if (rank < 0 || rank >= nranks)
    return Status::error(StatusCode::invalid_argument,
                         "rank: " + std::to_string(rank) + " is outside 0.." + std::to_string(nranks - 1));
  std::unique_ptr<State> s;
  if (Status st = start_state(options, &s); !st) return st;
  ncclConfig_t config = zero_cta_config();
  ncclResult_t const r = ncclCommInitRankConfig(&s->comm, nranks, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) return nccl_status("ncclCommInitRankConfig", r);
  return finish_create(std::move(s), out);
}

}  // namespace tessel::dist
