// src/dist/all_gather_gemm.cpp -- D = all-gather(A) B_r, the transfers overlapped with the GEMMs
// (tessel/dist/dist.hpp; docs/dist.md draws the timeline).
//
// Staging (symmetric): chunk c of rank q's shard at slot(c, q), [chunks][P][chunk_rows][K] packed,
// so that chunk c of every rank is one in-place ncclAllGather.
//   caller's stream:  own shard -> slots | GEMM(own shard) | wait chunk 0 | GEMM(chunk 0 of each peer) | ...
//   comm stream:      records | wait own slots | all-gather chunk 0 | all-gather chunk 1 | ... | copies to a_gathered
// The own part (the copies into the slots and the own GEMM) needs no other rank, so once the
// staging has grown to the call's size it is enqueued before the argument agreement's host wait
// and runs under it: on two H200s at 8192^3 the agreement took ~0.3 ms before the first GEMM
// began. The own copies (copy_rows: a 16-byte copy kernel, 0.035 ms for 64 MiB against the copy
// engines' 0.08) go before the own GEMM, which would otherwise hold every SM until it ends; the
// copies into a_gathered come after the last all-gather, so that no all-gather waits behind them.
#include "dist_state.hpp"

#include <tessel/gemm/device/gemm.hpp>
#include <tessel/gemm/device/gemm_registry.hpp>

namespace tessel::dist {

using namespace detail;

Status detail::pick_kernel(GemmArguments const& full, std::string* name) {
  name->clear();
  if (gemm_is_noop(full) || !gemm_reads_ab(full)) return Status::success();
  Status why;
  GemmKernelInfo const* k = select_gemm_kernel(full, &why);
  if (k == nullptr) return why;
  if (Status s = gemm_kernel_runs_here(*k, full); !s) return s;
  *name = k->name;
  return Status::success();
}

Status all_gather_gemm(Context& ctx, AllGatherGemmArguments const& g, cudaStream_t stream) {
  Context::State& s = ctx.state();
  std::lock_guard<std::mutex> const lock(s.call_mutex);
  if (Status st = check_usable(s); !st) return st;
  int const P = s.nranks, r = s.rank;

  Status own = validate(g, P, r);
  GemmArguments const full = full_gemm(g, P);
  std::string kernel;
  if (own) own = pick_kernel(full, &kernel);

  std::int64_t const ms = g.m_shard, K = g.k, M = ms * P;
  bool const gather = g.a_gathered != nullptr;
  GemmArguments const base = pin_gemm(full, kernel.empty() ? nullptr : kernel.c_str());
  DType const ab = g.ab_type, dt = g.d_type;

  // Every GEMM: M = `rows` rows of A at `a` (row stride lda) into D's rows from `row`.
  auto const gemm_rows = [&](void const* a, std::int64_t lda, std::int64_t rows, std::int64_t row) -> Status {
    if (rows == 0 || g.n == 0) return Status::success();
    GemmArguments x = base;
    x.m = rows, x.a = a, x.lda = lda, x.d = at(g.d, row * g.ldd, dt);
    return gemm(x, stream);
  };

  // The pipeline's shape, from this rank's own arguments (after the agreement, everyone's).
  bool const pipelined = own.ok() && P > 1 && M > 0 && K > 0;
  ChunkPlan const plan = pipelined ? chunk_plan(ms, g.chunk_rows, kAllGatherChunks) : ChunkPlan{};
  std::int64_t const ch = plan.chunk_rows, C = plan.chunks;
  std::size_t const staging_bytes = std::size_t(C * P * ch * K) * size_of(ab);
  auto const slot = [&](std::int64_t c, int q) { return at(s.staging.ptr, (c * P + q) * ch * K, ab); };

  // This rank's chunks into their slots, once the previous call's GEMMs have read the staging;
  // call_start then marks the inputs ready and the slots filled.
  auto const own_chunks = [&]() -> Status {
    if (Status st = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, s.last_use, 0)); !st) return st;
    std::size_t const row_bytes = std::size_t(K) * size_of(ab);
    for (std::int64_t c = 0; c < C; ++c)
      if (Status st = cuda_status("copy_rows (a_shard chunk -> staging)",
                                  copy_rows(at(g.a_shard, c * ch * g.lda, ab), g.lda * std::int64_t(size_of(ab)),
                                            slot(c, r), std::int64_t(row_bytes), plan.rows_of(c, ms),
                                            std::int64_t(row_bytes), stream));
          !st)
        return st;
    return cuda_status("cudaEventRecord", cudaEventRecord(s.call_start, stream));
  };
  auto const own_gemm = [&] { return gemm_rows(g.a_shard, g.lda, ms, r * ms); };

  // The own part needs no other rank. When the staging already holds the call, it goes ahead of
  // the agreement and runs under its host wait (a rank whose enqueue fails refuses in it).
  bool const early = pipelined && s.staging.bytes >= staging_bytes;
  if (early) {
    own = own_chunks();
    if (own) own = own_gemm();
  }
  if (Status st = post_call_record(s, call_record(g, !own.ok())); !st) return st;
  if (Status st = await_agreement(s, own); !st) {
    if (early) (void)cudaEventRecord(s.last_use, stream);  // the own chunks may have been copied
    return st;
  }

  // Only agreed fields may end a call early: a rank that left while the others entered a
  // collective would hang them (N is this rank's own, so N = 0 still joins the transfers).
  if (M == 0 || K == 0) return gemm(full, stream);  // nothing, or D = 0

  if (P == 1) {
    if (Status st = gemm_rows(g.a_shard, g.lda, ms, 0); !st) return st;
    if (!gather) return Status::success();
    return cuda_status("cudaMemcpy2DAsync (a_gathered)",
                       cudaMemcpy2DAsync(g.a_gathered, g.ld_gathered * size_of(ab), g.a_shard, g.lda * size_of(ab),
                                         K * size_of(ab), ms, cudaMemcpyDeviceToDevice, stream));
  }

  if (Status st = ensure_staging(s, staging_bytes); !st) return st;
  if (Status st = ensure_events(s, std::size_t(C)); !st) return st;
  if (!early)
    if (Status st = own_chunks(); !st) return st;

  // The all-gathers start once every rank's own chunks are in their slots.
  if (Status st = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(s.comm_stream, s.call_start, 0)); !st) return st;
  auto const deadline = deadline_of(s);
  std::size_t const row_bytes = std::size_t(K) * size_of(ab);
  for (std::int64_t c = 0; c < C; ++c) {
    if (Status st = nccl_settle(s, "ncclAllGather (a chunk of A)",
                                ncclAllGather(slot(c, r), slot(c, 0), std::size_t(ch) * row_bytes, ncclInt8, s.comm,
                                              s.comm_stream),
                                deadline);
        !st)
      return st;
    if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(s.chunk_events[c], s.comm_stream)); !st) return st;
  }
  if (gather)
    for (std::int64_t c = 0; c < C; ++c)
      for (int q = 0; q < P; ++q)
        if (Status st = cuda_status("cudaMemcpy2DAsync (staging -> a_gathered)",
                                    cudaMemcpy2DAsync(at(g.a_gathered, (q * ms + c * ch) * g.ld_gathered, ab),
                                                      g.ld_gathered * size_of(ab), slot(c, q), row_bytes, row_bytes,
                                                      plan.rows_of(c, ms), cudaMemcpyDeviceToDevice, s.comm_stream));
            !st)
          return st;
  if (Status st = cuda_status("cudaEventRecord", cudaEventRecord(s.comm_done, s.comm_stream)); !st) return st;

  Status result = early ? Status::success() : own_gemm();
  // Each peer's rows of chunk c once chunk c has landed, the next rank's first.
  for (std::int64_t c = 0; c < C && result; ++c) {
    result = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, s.chunk_events[c], 0));
    for (int i = 1; i < P && result; ++i) {
      int const q = (r + i) % P;
      result = gemm_rows(slot(c, q), K, plan.rows_of(c, ms), q * ms + c * ch);
    }
  }
  // Whatever happened, `stream` ends after the communication and marks the staging's last reader.
  Status joined = cuda_status("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, s.comm_done, 0));
  if (joined) joined = cuda_status("cudaEventRecord", cudaEventRecord(s.last_use, stream));
  return result ? joined : result;
}

}  // namespace tessel::dist
