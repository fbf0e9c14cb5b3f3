/* tessel/c_api_dist.h -- the C ABI of tessel::dist, the tensor-parallel GEMMs over NCCL
 * (tessel/dist/dist.hpp has the semantics; docs/dist.md the design). In the library tessel_dist,
 * built where NCCL >= 2.28 is found; the conventions are tessel/c_api.h's (tensors, statuses,
 * reasons; nothing allocated for the caller but the context, no host synchronisation beyond the
 * argument agreement).
 *
 *   unsigned char id[TESSEL_DIST_UNIQUE_ID_BYTES];
 *   if (rank == 0) tessel_dist_unique_id(id, why, sizeof why);     // then send id to every rank
 *   tessel_dist_context* ctx = NULL;
 *   tessel_dist_context_create(&ctx, id, nranks, rank, 0, why, sizeof why);   // collective
 *   tessel_dist_problem p;
 *   tessel_dist_problem_init(&p);
 *   tessel_tensor_set(&p.a, dA_shard, TESSEL_DTYPE_BF16, 2, (int64_t[]){m_shard, k}, NULL);
 *   ... p.b (K x N_r), p.d (M x N_r) ...
 *   tessel_dist_all_gather_gemm(ctx, &p, stream, why, sizeof why);  // collective
 *   tessel_dist_context_destroy(ctx);
 *
 * Tensors are 2-D. all-gather + GEMM: a = this rank's A shard [M/P, K] (row-major: its last
 * stride 1), b = its B shard [K, N_r] (row- or column-major), d = [M, N_r] (row-major), optional
 * a_gathered = [M, K] (row-major) receives A. GEMM + reduce-scatter: a = [M, K_r] and b = [K_r, N]
 * (either order), d = this rank's row block [rows, N] (row-major), rows = ceil(M / P) for the
 * first blocks, fewer or 0 for the last (tessel/dist/dist_arguments.hpp). A and B: bf16 or fp16;
 * D: their dtype or fp32.
 */
#ifndef TESSEL_C_API_DIST_H
#define TESSEL_C_API_DIST_H

#include <tessel/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes of an ncclUniqueId. */
#define TESSEL_DIST_UNIQUE_ID_BYTES 128

typedef struct tessel_dist_context tessel_dist_context;

typedef struct tessel_dist_problem {
  tessel_tensor a, b, d;
  tessel_tensor a_gathered; /* all-gather + GEMM only, optional (ndim 0: not wanted) */
  float alpha;              /* 1 by default; 1 / P averages a reduce-scatter */
  int64_t chunk_rows;       /* rows per transfer; 0: the library's choice */
  char const* kernel;       /* a GEMM registry name, or NULL: the heuristic's pick for the whole problem */
} tessel_dist_problem;

/* Zeroes *p, then alpha = 1 (every tensor absent, chunk_rows 0, kernel NULL). */
void tessel_dist_problem_init(tessel_dist_problem* p);

/* Every argument rule of the call for rank `rank` of `nranks`, without CUDA or NCCL. */
tessel_status tessel_dist_all_gather_gemm_check(tessel_dist_problem const* p, int nranks, int rank, char* reason,
                                                size_t reason_size);
tessel_status tessel_dist_gemm_reduce_scatter_check(tessel_dist_problem const* p, int nranks, int rank, char* reason,
                                                    size_t reason_size);

/* The rows of this rank's reduce-scatter block: ceil(M / P) for the first blocks, fewer or 0 after. */
int64_t tessel_dist_block_rows(int64_t m, int nranks, int rank);

/* ncclGetUniqueId into id (TESSEL_DIST_UNIQUE_ID_BYTES bytes), on one rank, to be sent to the others. */
tessel_status tessel_dist_unique_id(unsigned char* id, char* reason, size_t reason_size);

/* A context with its own communicator: rank `rank` of `nranks` sharing `id`, on the current device.
 * Collective. timeout_ms bounds every wait for the other ranks (0: 600000, ten minutes); a wait
 * past it aborts the communicator and the call returns TESSEL_STATUS_CUDA_ERROR. */
tessel_status tessel_dist_context_create(tessel_dist_context** ctx, unsigned char const* id, int nranks, int rank,
                                         int64_t timeout_ms, char* reason, size_t reason_size);

/* A context over the caller's communicator (an ncclComm_t; split, so the caller keeps it). Collective. */
tessel_status tessel_dist_context_create_from_comm(tessel_dist_context** ctx, void* nccl_comm, int64_t timeout_ms,
                                                   char* reason, size_t reason_size);

/* Waits for the context's work, frees it. NULL is a no-op. */
void tessel_dist_context_destroy(tessel_dist_context* ctx);

/* The context's ranks, device and the NCCL version loaded at run time (e.g. 22809). Any out may be NULL. */
tessel_status tessel_dist_context_info(tessel_dist_context const* ctx, int* nranks, int* rank, int* device,
                                       int* nccl_version);

/* The collective calls, on `stream` (asynchronous but for the argument agreement). */
tessel_status tessel_dist_all_gather_gemm(tessel_dist_context* ctx, tessel_dist_problem const* p, cudaStream_t stream,
                                          char* reason, size_t reason_size);
tessel_status tessel_dist_gemm_reduce_scatter(tessel_dist_context* ctx, tessel_dist_problem const* p,
                                              cudaStream_t stream, char* reason, size_t reason_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_C_API_DIST_H */
