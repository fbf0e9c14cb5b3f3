// src/dist/gemm_reduce_scatter.cpp -- D_r = block r of sum over ranks of A_s B_s, the transfers
// overlapped with the GEMMs (tessel/dist/dist.hpp; docs/dist.md draws the timeline).
//
// Staging (symmetric): send[c][b] holds this rank's partial sum of chunk c of block b, recv[c][s]
// rank s's partial of chunk c of this rank's block, each [chunk_rows][N] packed, so that chunk c
// of every block is one ncclAlltoAll. The own block comes last: by then the peers' partials of
// its first chunks have long arrived.
//   caller's stream:  GEMM(chunk 0 of each peer's block) | ... | chunk C-1 | wait recv 0 | GEMM(own chunk 0, C = recv) | ...
//   comm stream:      records | wait | all-to-all chunk 0 | wait | all-to-all chunk 1 | ...
// The peers' blocks need no other rank, so once the staging has grown to the call's size they are
// enqueued before the argument agreement's host wait and run under it (on two H200s at 8192^3 the
// agreement took ~0.2 ms before the first GEMM began). The own block's GEMMs read C, so they run
// the kernel picked for a C-reading problem: the one picked for the whole problem reads C from
// registers when it has no TMA load of C, and ran 1.4x as long.
// With two ranks the own chunk's GEMM adds the one received partial as its C (beta = 1); with
// more, sum_partials first adds the P - 1 received partials (fp32, rounded once) into C.
//
// Two ranks move each chunk with an in-place ncclAllGather instead: rank r writes its partial of
// the peer's block to send[c][r], and the all-gather brings the peer's partial of r's block to
// send[c][peer]. It moves only the peer's partial (an all-to-all also copies each rank's own slot
// to itself, a local copy that may need SMs the persistent GEMM holds) and needs half the staging.
// On two H200s both ways measured the same (docs/dist.md: the transfers are not yet hidden).
#include "dist_state.hpp"

#include <tessel/gemm/device/gemm.hpp>

namespace tessel::dist {

using namespace detail;

Status gemm_reduce_scatter(Context& ctx, GemmReduceScatterArguments const& g, cudaStream_t stream) {
  Context::State& s = ctx.state();
  std::lock_guard<std::mutex> const lock(s.call_mutex);
  if (Status st = check_usable(s); !st) return st;
  int const P = s.nranks, r = s.rank;

  Status own = validate(g, P, r);
  GemmArguments full = full_gemm(g);
  full.d = g.d != nullptr ? g.d : s.records.ptr;  // any aligned address: the heuristic may look at D's alignment
  full.ldd = full.ldc = g.n > 1 ? g.n : 1;
  // The own block's GEMMs read the received partials as C: the kernel picked for that (one that
  // loads C by TMA, where it can), pinned separately.
  GemmArguments full_c = full;
  full_c.c = s.records.ptr, full_c.beta = 1.0f;
  std::string kernel, kernel_c;
  if (own) own = pick_kernel(full, &kernel);
  if (own && P > 1) own = pick_kernel(full_c, &kernel_c);

  std::int64_t const M = g.m, N = g.n;
  GemmArguments const base = pin_gemm(full, kernel.empty() ? nullptr : kernel.c_str());
  GemmArguments const base_c = pin_gemm(full_c, kernel_c.empty() ? nullptr : kernel_c.c_str());
  DType const ab = g.ab_type, dt = g.d_type;
  std::int64_t const stride = rs_block_stride(M, P);

  // One GEMM: `rows` rows of A from `row` into `d` (row stride ldd), plus `c` (row stride N) when given.
  auto const gemm_rows = [&](std::int64_t row, std::int64_t rows, void* d, std::int64_t ldd, void const* c) -> Status {
    if (rows == 0) return Status::success();
    GemmArguments x = c != nullptr ? base_c : base;
    x.m = rows;
    x.a = g.a_order == MatrixOrder::row_major ? at(g.a, row * g.lda, ab) : at(g.a, row, ab);
    x.d = d, x.ldd = ldd;
    if (c != nullptr) x.c = c, x.ldc = N, x.beta = 1.0f;
    return gemm(x, stream);
  };

  // The pipeline's shape, from this rank's own arguments (after the agreement, everyone's).
  bool const pipelined = own.ok() && P > 1 && M > 0 && N > 0;
  ChunkPlan const plan = pipelined ? chunk_plan(stride, g.chunk_rows, kReduceScatterChunks) : ChunkPlan{};
  std::int64_t const ch = plan.chunk_rows, C = plan.chunks;
  bool const pair = P == 2;  // the in-place all-gather (file comment)
  std::int64_t const slot_elems = ch * N, half = C * P * slot_elems;
  std::int64_t const scratch = P > 2 ? slot_elems : 0;  // the sum of the received partials, as C
  std::size_t const staging_bytes = std::size_t((pair ? 1 : 2) * half + scratch) * size_of(dt);
  auto const send = [&](std::int64_t c, int b) { return at(s.staging.ptr, (c * P + b) * slot_elems, dt); };
  auto const recv = [&](std::int64_t c, int b) { return at(s.staging.ptr, half + (c * P + b) * slot_elems, dt); };

  // The peers' blocks, chunk by chunk, the next rank's first, into the send slots, once the
  // previous call has finished with the staging buffer; produced[c] marks chunk c computed (the
  // communication stream's transfer of chunk c waits for it).
  auto const produce = [&](std::int64_t c) -> Status {
    if (c == 0)
      if (Status st = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, s.last_use, 0)); !st) return st;
    Status result = Status::success();
    for (int i = 1; i < P && result; ++i) {
      int const b = (r + i) % P;
      result = gemm_rows(rs_block_start(M, P, b) + c * ch, plan.rows_of(c, rs_block_rows(M, P, b)),
                         send(c, pair ? r : b), N, nullptr);
    }
    // A failed GEMM still marks the chunk: the peers' collectives must find this rank there.
    if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(s.chunk_events[std::size_t(c)], stream)); !st)
      return st;
    return result;
  };

  // The peers' blocks need no other rank. When the staging already holds the call, they are
  // computed ahead of the agreement and run under its host wait (a rank whose enqueue fails
  // refuses in it).
  bool const early = pipelined && s.staging.bytes >= staging_bytes && s.chunk_events.size() >= std::size_t(2 * C);
  for (std::int64_t c = 0; early && own && c < C; ++c) own = produce(c);
  if (Status st = post_call_record(s, call_record(g, !own.ok())); !st) return st;
  if (Status st = await_agreement(s, own); !st) {
    if (early) (void)cudaEventRecord(s.last_use, stream);  // the send slots may have been written
    return st;
  }

  if (M == 0 || N == 0) return Status::success();
  if (P == 1) return gemm_rows(0, M, g.d, g.ldd, nullptr);

  if (Status st = ensure_staging(s, staging_bytes); !st) return st;
  if (Status st = ensure_events(s, std::size_t(2 * C)); !st) return st;
  cudaEvent_t* const produced = s.chunk_events.data();
  cudaEvent_t* const arrived = s.chunk_events.data() + C;
  void* const sum = at(s.staging.ptr, 2 * half, dt);
  // The transfers write the staging too: after the previous call's last reader of it, whatever
  // this call's GEMMs do (a chunk whose GEMM failed to launch still travels, on a stale event).
  if (Status st = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(s.comm_stream, s.last_use, 0)); !st) return st;

  // Each chunk leaves once computed.
  auto const deadline = deadline_of(s);
  std::size_t const slot_bytes = std::size_t(slot_elems) * size_of(dt);
  Status result = Status::success();
  for (std::int64_t c = 0; c < C; ++c) {
    if (!early && result) result = produce(c);
    if (Status st = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(s.comm_stream, produced[c], 0)); !st)
      return st;
    ncclResult_t const moved =
        pair ? ncclAllGather(send(c, r), send(c, 0), slot_bytes, ncclInt8, s.comm, s.comm_stream)
             : ncclAlltoAll(send(c, 0), recv(c, 0), slot_bytes, ncclInt8, s.comm, s.comm_stream);
    char const* const what =
        pair ? "ncclAllGather (a chunk of partial sums)" : "ncclAlltoAll (a chunk of partial sums)";
    if (Status st = nccl_settle(s, what, moved, deadline); !st) return st;
    if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(arrived[c], s.comm_stream)); !st) return st;
  }
  if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(s.comm_done, s.comm_stream)); !st) return st;

  // The own block: this rank's partial plus the received ones.
  std::int64_t const own_start = rs_block_start(M, P, r), own_rows = rs_block_rows(M, P, r);
  for (std::int64_t c = 0; c < C && result; ++c) {
    std::int64_t const rows = plan.rows_of(c, own_rows);
    result = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, arrived[c], 0));
    if (!result || rows == 0) continue;
    void const* partials = pair ? send(c, (r + 1) % P) : recv(c, (r + 1) % P);
    if (P > 2) {
      result = cuda_status("sum_partials",
                           sum_partials(dt, recv(c, 0), slot_elems, P, r, rows, N, N, sum, N, stream));
      partials = sum;
    }
    if (result) result = gemm_rows(own_start + c * ch, rows, at(g.d, c * ch * g.ldd, dt), g.ldd, partials);
  }
  Status joined = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, s.comm_done, 0));
  if (joined) joined = cuda_status("cudaEventRecord", cudaEventRecord(s.last_use, stream));
  return result ? joined : result;
}

}  // namespace tessel::dist
