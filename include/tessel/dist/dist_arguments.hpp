// tessel/dist/dist_arguments.hpp -- the problems of the tensor-parallel GEMMs (tessel/dist/dist.hpp),
// their argument rules, how rows are split over ranks and chunks, and the record the ranks compare
// before any data moves. Plain C++: no CUDA or NCCL headers, so every rule is tested on machines
// without a GPU.
//
// P ranks, this one `rank`. Matrices are row-major (a row is contiguous) unless an order is given.
//
// all-gather + GEMM (sequence parallelism into a column-parallel layer):
//   rank r holds A_r, rows [r * m_shard, (r + 1) * m_shard) of A (M x K, M = P * m_shard: equal
//   shards, as torch's all_gather_into_tensor and fused_all_gather_matmul take them), and B_r,
//   its own K x N_r column shard of a weight. Every rank computes all M rows of D_r = A B_r.
//   Optionally it also receives A itself (a_gathered), which a backward pass needs.
//
// GEMM + reduce-scatter (a row-parallel layer into sequence parallelism):
//   rank r holds A_r (M x K_r, its K shard of A) and B_r (K_r x N, the matching rows of B). The
//   sum over ranks of A_r B_r (M x N) is split into P row blocks of rs_block_rows(M, P, b) rows
//   (ceil(M / P) each, the last ones shorter or empty when P does not divide M); rank r receives
//   block r. K_r may differ between ranks; M, N and the dtypes may not.
//
// Chunks: each rank's rows (m_shard; a row block) are moved and multiplied in chunks of
// `chunk_rows` rows (0: the library's choice, chunk_plan below); the last chunk may be shorter.
#pragma once

#include <tessel/core/dtype.hpp>
#include <tessel/core/status.hpp>
#include <tessel/gemm/device/gemm_arguments.hpp>
#include <tessel/gemm/device/gemm_validate.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace tessel::dist {

struct AllGatherGemmArguments {
  std::int64_t m_shard = 0, n = 0, k = 0;  // this rank's A rows, its B's columns, the shared K
  DType ab_type = DType::bf16;             // A and B: bf16 or f16
  DType d_type = DType::bf16;              // D: ab_type or f32
  void const* a_shard = nullptr; std::int64_t lda = 0;  // m_shard x K, row-major (rows are sent as blocks)
  void const* b = nullptr; std::int64_t ldb = 0;        // K x N
  MatrixOrder b_order = MatrixOrder::col_major;         // col-major: a torch Linear weight [N, K] read as W^T
  void* d = nullptr; std::int64_t ldd = 0;              // (P * m_shard) x N, row-major
  void* a_gathered = nullptr; std::int64_t ld_gathered = 0;  // optional: (P * m_shard) x K, row-major
  float alpha = 1.0f;
  std::int64_t chunk_rows = 0;  // 0: chunk_plan's choice
  char const* kernel = nullptr; // a GEMM registry name, or nullptr: the heuristic's pick for the whole problem
};

struct GemmReduceScatterArguments {
  std::int64_t m = 0, n = 0, k_shard = 0;  // the whole M, N, and this rank's K shard
  DType ab_type = DType::bf16;
  DType d_type = DType::bf16;              // also the dtype of the partial sums that travel
  void const* a = nullptr; std::int64_t lda = 0; MatrixOrder a_order = MatrixOrder::row_major;  // M x K_r
  void const* b = nullptr; std::int64_t ldb = 0; MatrixOrder b_order = MatrixOrder::col_major;  // K_r x N
  void* d = nullptr; std::int64_t ldd = 0;  // rs_block_rows(M, P, rank) x N, row-major
  float alpha = 1.0f;                       // 1 / P gives the average ("avg" in torch's reduce_op)
  std::int64_t chunk_rows = 0;
  char const* kernel = nullptr;
};

// ---- rows over ranks and chunks -------------------------------------------------------------------

// Rows of reduce-scatter block b: ceil(M / P) for the first blocks, fewer (maybe 0) at the end.
// e.g. M = 10, P = 4: blocks of 3, 3, 3, 1 rows; M = 5, P = 4: 2, 2, 1, 0.
constexpr std::int64_t rs_block_stride(std::int64_t m, int nranks) { return nranks > 0 ? (m + nranks - 1) / nranks : 0; }
constexpr std::int64_t rs_block_start(std::int64_t m, int nranks, int b) { return rs_block_stride(m, nranks) * b; }
constexpr std::int64_t rs_block_rows(std::int64_t m, int nranks, int b) {
  std::int64_t const left = m - rs_block_start(m, nranks, b), stride = rs_block_stride(m, nranks);
  return left <= 0 ? 0 : left < stride ? left : stride;
}

// How `rows` rows (a shard, a block) are cut: `chunks` chunks of `chunk_rows`, the last one
// `rows - (chunks - 1) * chunk_rows` rows. rows = 0 gives no chunk.
struct ChunkPlan {
  std::int64_t chunk_rows = 0;
  std::int64_t chunks = 0;

  constexpr std::int64_t rows_of(std::int64_t c, std::int64_t rows) const {
    std::int64_t const left = rows - c * chunk_rows;
    return left <= 0 ? 0 : left < chunk_rows ? left : chunk_rows;
  }
};

// The library's chunks: all-gather cuts each shard in 2 (the first remote GEMM then starts after
// half the transfer, and the GEMMs stay large enough to fill the GPU); reduce-scatter cuts each
// block in 4 (the partial sum of chunk c must arrive before the own block's chunk c, which runs
// (chunks - 1) chunk-GEMMs after it left: docs/dist.md derives both). Chunks are rounded up to
// kChunkRowQuantum rows so that they are whole CTA tiles of the GEMM.
inline constexpr std::int64_t kAllGatherChunks = 2;
inline constexpr std::int64_t kReduceScatterChunks = 4;
inline constexpr std::int64_t kChunkRowQuantum = 128;

constexpr ChunkPlan chunk_plan(std::int64_t rows, std::int64_t requested, std::int64_t default_chunks) {
  if (rows <= 0) return {requested > 0 ? requested : 1, 0};
  std::int64_t ch = requested;
  if (ch <= 0) {
    ch = (rows + default_chunks - 1) / default_chunks;
    ch = (ch + kChunkRowQuantum - 1) / kChunkRowQuantum * kChunkRowQuantum;
  }
  if (ch > rows) ch = rows;
  return {ch, (rows + ch - 1) / ch};
}

// ---- the non-overlapped problem and the pinned kernel ----------------------------------------------

// The whole problem the all-gather + GEMM computes, as one tessel::gemm over the gathered A
// (packed, lda = K). Its kernel, chosen once, runs every chunk (pin_gemm).
inline GemmArguments full_gemm(AllGatherGemmArguments const& g, int nranks) {
  GemmArguments f = make_packed_gemm(g.m_shard * nranks, g.n, g.k, 1, g.ab_type, g.d_type, MatrixOrder::row_major,
                                     g.b_order, MatrixOrder::row_major);
  f.a = g.a_shard, f.b = g.b, f.ldb = g.ldb, f.d = g.d, f.ldd = g.ldd, f.ldc = g.ldd;
  f.alpha = g.alpha;
  f.kernel = g.kernel;
  return f;
}

// The reduce-scatter's per-rank product before the sum: M x N x K_r, D packed row-major.
inline GemmArguments full_gemm(GemmReduceScatterArguments const& g) {
  GemmArguments f = make_packed_gemm(g.m, g.n, g.k_shard, 1, g.ab_type, g.d_type, g.a_order, g.b_order,
                                     MatrixOrder::row_major);
  f.a = g.a, f.lda = g.lda, f.b = g.b, f.ldb = g.ldb, f.d = g.d;
  f.alpha = g.alpha;
  f.kernel = g.kernel;
  return f;
}

// The arguments every chunk's GEMM runs with: the kernel `name` by registry name, and the K order
// fixed -- one K slice per tile, no Stream-K, no split tail (these the host would otherwise choose
// from the chunk's M, changing the order of the K sum). A row block computed this way has the same
// bits as the same rows of `g` computed whole with the same pinned arguments, whatever the rows.
inline GemmArguments pin_gemm(GemmArguments g, char const* name) {
  g.kernel = name;
  g.options.splits = 1;
  g.options.stream_k = false;
  g.options.split_tail = false;
  return g;
}

// ---- argument rules -------------------------------------------------------------------------------

namespace detail {
inline Status dist_invalid(std::string why) { return Status::error(StatusCode::invalid_argument, std::move(why)); }
inline std::string dist_num(std::int64_t v) { return std::to_string(v); }

inline Status dist_check_ranks(int nranks, int rank) {
  if (nranks < 1) return dist_invalid("nranks: " + dist_num(nranks) + " is below 1");
  if (rank < 0 || rank >= nranks)
    return dist_invalid("rank: " + dist_num(rank) + " is outside 0.." + dist_num(nranks - 1));
  return Status::success();
}

inline Status dist_check_dtypes(DType ab, DType d) {
  if (ab != DType::bf16 && ab != DType::f16)
    return Status::error(StatusCode::invalid_argument, std::string("a: dtype ") + to_string(ab) +
                                                           " is not supported by the tensor-parallel GEMMs; A and B "
                                                           "take bf16 or fp16");
  if (d != ab && d != DType::f32)
    return Status::error(StatusCode::invalid_argument, std::string("d: dtype ") + to_string(d) + " with " +
                                                           to_string(ab) + " inputs; D takes the inputs' dtype or fp32");
  return Status::success();
}
}  // namespace detail

// Every rule of all_gather_gemm on this rank's arguments. No CUDA or NCCL calls.
inline Status validate(AllGatherGemmArguments const& g, int nranks, int rank) {
  using detail::dist_invalid;
  using detail::dist_num;
  if (Status s = detail::dist_check_ranks(nranks, rank); !s) return s;
  struct Size { char const* name; std::int64_t v; };
  for (Size s : {Size{"m_shard", g.m_shard}, Size{"n", g.n}, Size{"k", g.k}, Size{"chunk_rows", g.chunk_rows}})
    if (s.v < 0) return dist_invalid(std::string(s.name) + ": " + dist_num(s.v) + " is negative");
  if (Status s = detail::dist_check_dtypes(g.ab_type, g.d_type); !s) return s;
  if (g.m_shard > 0 && g.k > 0 && g.lda < g.k)
    return dist_invalid("lda: " + dist_num(g.lda) + " is below K = " + dist_num(g.k) +
                        "; a_shard is row-major (its rows are sent as blocks), so lda >= K");
  if (g.m_shard > 0 && g.n > 0 && g.ldd < g.n)
    return dist_invalid("ldd: " + dist_num(g.ldd) + " is below N = " + dist_num(g.n) +
                        "; d is row-major (each rank's rows are one block of it), so ldd >= N");
  if (g.a_gathered != nullptr && g.k > 0 && g.ld_gathered < g.k)
    return dist_invalid("ld_gathered: " + dist_num(g.ld_gathered) + " is below K = " + dist_num(g.k) +
                        "; a_gathered is row-major, so ld_gathered >= K");
  std::int64_t m = 0;
  if (__builtin_mul_overflow(g.m_shard, std::int64_t(nranks), &m))
    return dist_invalid("m_shard: " + dist_num(g.m_shard) + " x " + dist_num(nranks) + " ranks overflows 64 bits");
  if (m > 0 && g.n > 0 && g.d == nullptr) return dist_invalid("d: null, but D has " + dist_num(m) + " x " + dist_num(g.n) + " elements");
  if (g.m_shard > 0 && g.k > 0 && g.a_shard == nullptr) return dist_invalid("a_shard: null, but it has " + dist_num(g.m_shard) + " x " + dist_num(g.k) + " elements");
  GemmArguments f = full_gemm(g, nranks);
  if (g.b == nullptr && (m == 0 || g.n == 0 || g.k == 0)) f.b = nullptr;
  if (Status s = gemm_validate(f); !s) return s;  // the GEMM API's own rules on the product
  return Status::success();
}

// Every rule of gemm_reduce_scatter on this rank's arguments. No CUDA or NCCL calls.
inline Status validate(GemmReduceScatterArguments const& g, int nranks, int rank) {
  using detail::dist_invalid;
  using detail::dist_num;
  if (Status s = detail::dist_check_ranks(nranks, rank); !s) return s;
  struct Size { char const* name; std::int64_t v; };
  for (Size s : {Size{"m", g.m}, Size{"n", g.n}, Size{"k_shard", g.k_shard}, Size{"chunk_rows", g.chunk_rows}})
    if (s.v < 0) return dist_invalid(std::string(s.name) + ": " + dist_num(s.v) + " is negative");
  if (Status s = detail::dist_check_dtypes(g.ab_type, g.d_type); !s) return s;
  std::int64_t const rows = rs_block_rows(g.m, nranks, rank);
  if (rows > 0 && g.n > 0) {
    if (g.d == nullptr) return dist_invalid("d: null, but this rank's block has " + dist_num(rows) + " x " + dist_num(g.n) + " elements");
    if (g.ldd < g.n)
      return dist_invalid("ldd: " + dist_num(g.ldd) + " is below N = " + dist_num(g.n) +
                          "; d (this rank's row block) is row-major, so ldd >= N");
  }
  GemmArguments f = full_gemm(g);
  f.d = reinterpret_cast<void*>(std::uintptr_t(256));  // the partial sums go to the library's staging
  f.ldd = f.ldc = g.n > 1 ? g.n : 1;
  if (Status s = gemm_validate(f); !s) return s;  // the GEMM API's own rules on the product
  return Status::success();
}

// ---- the record the ranks compare before any data moves --------------------------------------------

// What every rank must agree on for one call, and whether its own arguments passed. Fields that
// may differ between ranks (all-gather: N; reduce-scatter: K_r) are -1.
struct CallRecord {
  enum Field : int { op, refused, ab_type, d_type, rows, n, k, chunk_rows, count };
  std::array<std::int64_t, count> v{};
};

// CallRecord::op: the call a rank is in, or (kDestroyOperation) the record every rank all-gathers
// when destroying its context, so that a rank still in a call sees the difference instead of waiting.
inline constexpr std::int64_t kAllGatherGemmOperation = 1, kGemmReduceScatterOperation = 2, kDestroyOperation = 3;

inline constexpr char const* kCallRecordNames[CallRecord::count] = {"operation", "refused", "a's dtype", "d's dtype",
                                                                     "rows", "n", "k", "chunk_rows"};

inline CallRecord call_record(AllGatherGemmArguments const& g, bool refused) {
  return {{kAllGatherGemmOperation, refused ? 1 : 0, std::int64_t(g.ab_type), std::int64_t(g.d_type), g.m_shard, -1, g.k,
           g.chunk_rows}};
}
inline CallRecord call_record(GemmReduceScatterArguments const& g, bool refused) {
  return {{kGemmReduceScatterOperation, refused ? 1 : 0, std::int64_t(g.ab_type), std::int64_t(g.d_type), g.m, g.n, -1,
           g.chunk_rows}};
}

// Whether the P records (one per rank, in rank order) allow the call: none refused, every field
// equal. The reason names the first rank that differs from rank 0 and the field; a rank whose own
// arguments were refused keeps its own reason (the caller returns that instead).
inline Status agree(std::span<CallRecord const> records, int rank) {
  using detail::dist_num;
  for (std::size_t r = 0; r < records.size(); ++r)
    if (records[r].v[CallRecord::refused] != 0 && int(r) != rank)
      return Status::error(StatusCode::invalid_argument,
                           "rank " + dist_num(std::int64_t(r)) +
                               " refused its arguments (its error names the rule); no rank moved any data");
  bool const gathers = records.empty() || records[0].v[CallRecord::op] == kAllGatherGemmOperation;
  char const* const rows_name = gathers ? "m_shard" : "m";
  for (std::size_t r = 1; r < records.size(); ++r)
    for (int f = 0; f < CallRecord::count; ++f) {
      if (f == CallRecord::refused || records[r].v[f] == records[0].v[f]) continue;
      std::string const name = f == CallRecord::rows ? rows_name : kCallRecordNames[f];
      auto const text = [&](std::int64_t v) {
        if (f == CallRecord::ab_type || f == CallRecord::d_type) return std::string(to_string(DType(v)));
        if (f == CallRecord::op)
          return std::string(v == kAllGatherGemmOperation       ? "all_gather_gemm"
                             : v == kGemmReduceScatterOperation ? "gemm_reduce_scatter"
                                                                : "Context::destroy");
        return dist_num(v);
      };
      return Status::error(StatusCode::invalid_argument,
                           name + ": rank " + dist_num(std::int64_t(r)) + " passed " + text(records[r].v[f]) +
                               ", rank 0 " + text(records[0].v[f]) +
                               "; every rank of the call must pass the same (no rank moved any data)");
    }
  return Status::success();
}

}  // namespace tessel::dist
