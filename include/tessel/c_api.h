/* tessel/c_api.h -- the C ABI over tessel's host API, for other languages and FFIs (tessel's
 * Python module uses it).
 *
 * Plain C (C99 or later, or C++), no exceptions cross it, nothing is allocated for the caller and
 * nothing synchronises: every call only validates and enqueues work on the stream it is given.
 * The caller owns every input and output buffer; the work runs on the current CUDA device, which
 * must be the device of every pointer and of the stream (as with cuBLAS).
 *
 *   tessel_gemm_problem p;
 *   tessel_gemm_problem_init(&p);                     // alpha 1, beta 0, scales 1, no tensors
 *   int64_t const a_shape[] = {m, k}, a_strides[] = {k, 1};      // row-major M x K
 *   tessel_tensor_set(&p.a, dA, TESSEL_DTYPE_BF16, 2, a_shape, a_strides);
 *   ... p.b (K x N), p.d (M x N) likewise ...
 *   char why[512];
 *   if (tessel_gemm(&p, stream, why, sizeof why) != TESSEL_STATUS_SUCCESS) fprintf(stderr, "%s\n", why);
 *
 * Attention forward (tessel_attention_forward) takes a tessel_attention_problem the same way: q,
 * k, v and o as 4-D [B, S, H, D] tensors (or packed 3-D ones with cu_seqlens), an optional fp32
 * lse, the mask and the scales; see its struct below. Attention backward
 * (tessel_attention_backward) takes a tessel_attention_backward_problem: the forward's problem
 * (its o and lse now read), d_o, and the gradients dq, dk, dv it writes.
 *
 * Grouped GEMM (tessel_grouped_gemm; a mixture-of-experts layer, torch._grouped_mm's 2-D x 3-D
 * form) takes a tessel_grouped_gemm_problem: a [total_m, K], b [G, K, N], d [total_m, N] and the
 * device int32 offsets that split a's and d's rows into G groups; see its struct below.
 *
 * Convolution (tessel_conv) takes a tessel_conv_problem: the pass (fprop, dgrad, wgrad), x
 * [N, H, W, C], w [K, R, S, C/groups] and y [N, P, Q, K] (one more spatial dimension in 3-D), the
 * padding, strides and dilation of each spatial dimension, groups, and the epilogue; see its
 * struct below.
 *
 * Tensors are described like DLPack's: a pointer to element (0, 0, ...), a dtype, a shape and
 * strides in elements (not bytes). A matrix operand is 2-D (rows, cols) or 3-D (batch, rows,
 * cols). Of its last two strides (s_rows, s_cols) one must be 1: s_cols == 1 is row-major with
 * leading dimension s_rows, s_rows == 1 is column-major with leading dimension s_cols (so a
 * transposed view needs no copy); a dimension of extent 1 may have any stride. The batch
 * dimension's stride may be 0 on inputs (one matrix for every batch), and a 2-D input or a 3-D
 * input with batch 1 is broadcast over the batch of D, as numpy's matmul broadcasts.
 *
 * Errors: a status code and, when `reason` is not NULL, a NUL-terminated sentence (truncated to
 * reason_size bytes) that starts with the offending tensor's name and states the rule broken,
 * e.g. "b: has 48 rows, but a has 64 columns (a is M x K, b must be K x N)". A tensor's name is
 * its `name` field, or "a", "b", "c", "d" when that is NULL.
 *
 * Workspace: some calls need scratch memory (operands staged into aligned copies, split-K
 * partial sums). tessel_gemm_workspace_size says how many bytes a problem takes (0 for most);
 * the caller passes that much as p.workspace / p.workspace_bytes (256-byte aligned, not touched
 * by other work until the stream has passed the call). With p.workspace NULL the library takes
 * the scratch from a stream-ordered pool of its own (cudaMallocFromPoolAsync / cudaFreeAsync on
 * the call's stream), which is legal inside CUDA-graph capture as well.
 */
#ifndef TESSEL_C_API_H
#define TESSEL_C_API_H

#include <cuda_runtime_api.h> /* cudaStream_t */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when this header gains or changes a struct, a function or an enumerator (2: the GEMM
 * workspace; 3: attention forward and TESSEL_DTYPE_I32; 4: convolution, tessel_conv_*; 5: attention
 * backward, tessel_attention_backward_*; 6: the GEMM's fused epilogue, tessel_gemm_problem's bias and
 * activation, TESSEL_ACTIVATION_GELU_ERF; 7: the tensor-parallel GEMMs over NCCL, tessel/c_api_dist.h,
 * in the library tessel_dist; 8: block-scaled fp8 GEMM, tessel_gemm_problem's scale_mode, a_scales and
 * b_scales, and the grouped GEMM, tessel_grouped_gemm_*); no entry point of an earlier version
 * changes meaning. */
#define TESSEL_C_API_VERSION 8

/* The most dimensions a tessel_tensor describes. */
#define TESSEL_MAX_DIMS 8

/* What a call returns. TESSEL_STATUS_INVALID_DTYPE is an invalid argument whose rule is about
 * dtypes (a language binding may raise a type error for it, and a value error for the others). */
typedef enum tessel_status {
  TESSEL_STATUS_SUCCESS = 0,
  TESSEL_STATUS_INVALID_ARGUMENT = 1, /* a shape, stride, pointer or scalar breaks a rule */
  TESSEL_STATUS_INVALID_DTYPE = 2,    /* a dtype, or a mix of dtypes, is not supported */
  TESSEL_STATUS_NOT_SUPPORTED = 3,    /* valid, but no compiled kernel runs it */
  TESSEL_STATUS_ARCH_MISMATCH = 4,    /* the kernel has no image for this GPU */
  TESSEL_STATUS_NO_DEVICE = 5,        /* no usable CUDA device */
  TESSEL_STATUS_CUDA_ERROR = 6,       /* a CUDA call failed; the reason holds CUDA's error text */
  TESSEL_STATUS_INTERNAL_ERROR = 7    /* a failure inside tessel (out of host memory, ...) */
} tessel_status;

/* Element types. TF32 is fp32 storage whose products may be computed at tf32 precision (an
 * input mode of A and B, never an output). E4M3 and E5M2 are the OCP fp8 formats. I32 is the
 * type of index arrays (attention's cu_seqlens), never of an operand's values. */
typedef enum tessel_dtype {
  TESSEL_DTYPE_F32 = 0,
  TESSEL_DTYPE_F16 = 1,
  TESSEL_DTYPE_BF16 = 2,
  TESSEL_DTYPE_TF32 = 3,
  TESSEL_DTYPE_E4M3 = 4,
  TESSEL_DTYPE_E5M2 = 5,
  TESSEL_DTYPE_I32 = 6
} tessel_dtype;

/* A strided tensor in device memory. ndim == 0 means "absent" (an optional operand not given). */
typedef struct tessel_tensor {
  void* data;                        /* element (0, 0, ...); may be NULL when the tensor has no elements */
  int32_t dtype;                     /* a tessel_dtype */
  int32_t ndim;                      /* 0 (absent) .. TESSEL_MAX_DIMS */
  int64_t shape[TESSEL_MAX_DIMS];    /* extents, outermost first */
  int64_t strides[TESSEL_MAX_DIMS];  /* in elements */
  char const* name;                  /* the name reasons use; NULL: the field's name */
} tessel_tensor;

/* D = alpha * (a_scale * A) @ (b_scale * B) + beta * C, per batch (tessel/gemm/device/gemm_arguments.hpp).
 * A is (batch,) M x K, B (batch,) K x N, C and D (batch,) M x N; C is optional (ndim 0; then beta
 * must be 0) and must have D's dtype. A and B share a dtype (f32, tf32, f16, bf16), or are both
 * fp8 (e4m3 or e5m2, not both e5m2); f16/bf16 inputs write their own dtype or f32, f32/tf32
 * inputs write f32, fp8 inputs write bf16, f16 or f32. a_scale and b_scale apply to fp8 only.
 * Fused epilogue (optional): D = act(alpha A B + beta C + bias). bias (ndim 0: none) has D's dtype
 * and broadcasts against D as numpy's would: 1-D [N] or 2-D [1, N] adds bias[j] to column j, 2-D
 * [M, 1] adds bias[i] to row i; its one extent past 1 is contiguous (stride 1), and one vector
 * serves every batch. activation (a tessel_activation) is applied last, in fp32:
 * TESSEL_ACTIVATION_GELU is the tanh form, TESSEL_ACTIVATION_GELU_ERF the exact one.
 * Block-scaled fp8 (scale_mode TESSEL_SCALE_MODE_BLOCK; A and B fp8; DeepSeek-V3's scaling, the
 * layouts of cuBLASLt's VEC128_32F and BLK128x128_32F modes): every 128-deep block kb of K has its
 * own fp32 scales, one per row of A and one per 128 x 128 block of B (a_scale and b_scale still
 * multiply the whole product):
 *   D(i,j) = alpha a_scale b_scale sum_kb a_scales(i,kb) b_scales(j/128,kb) sum_{k in kb} A(i,k) B(k,j) + beta C(i,j)
 * a_scales is [M, ceil(K/128)] stored M-major (column-major: its first dimension has stride 1,
 * the second any stride >= M); b_scales is [ceil(N/128), ceil(K/128)] stored K-major (row-major:
 * its last dimension has stride 1, the first any stride >= ceil(K/128)); both f32, in device
 * memory. With a batch (D 3-D) they are 3-D [batch, ...] with each batch's scales packed after
 * the previous batch's (batch stride = leading dimension x blocks). With TESSEL_SCALE_MODE_PER_TENSOR
 * (0, the default) both stay absent. Reasons name them "a_scales", "b_scales" (or their `name`). */
typedef struct tessel_gemm_problem {
  tessel_tensor a, b, c, d;
  float alpha, beta;
  float a_scale, b_scale;
  char const* kernel; /* a registry name (`tessel list`), or NULL / "auto" for the heuristic */
  void* workspace;         /* the caller's scratch (see "Workspace" above), or NULL: the library's pool */
  size_t workspace_bytes;  /* its size, at least tessel_gemm_workspace_size's answer */
  tessel_tensor bias;      /* optional: the fused epilogue's bias (above) */
  int32_t activation;      /* a tessel_activation; 0 (none) by default */
  int32_t scale_mode;      /* a tessel_scale_mode; 0 (per tensor) by default */
  tessel_tensor a_scales;  /* block scaling only: f32 [(batch,) M, ceil(K/128)], M-major */
  tessel_tensor b_scales;  /* block scaling only: f32 [(batch,) ceil(N/128), ceil(K/128)], K-major */
} tessel_gemm_problem;

/* How the fp8 operands of a GEMM are scaled (tessel_gemm_problem::scale_mode). */
typedef enum tessel_scale_mode {
  TESSEL_SCALE_MODE_PER_TENSOR = 0, /* a_scale and b_scale only */
  TESSEL_SCALE_MODE_BLOCK = 1       /* also a_scales (1 x 128 blocks) and b_scales (128 x 128 blocks) */
} tessel_scale_mode;

/* Grouped GEMM, contiguous form (tessel/gemm/device/grouped_gemm_arguments.hpp; torch._grouped_mm's
 * 2-D x 3-D case, a mixture-of-experts layer with tokens sorted by expert):
 *   for g in [0, G):  D[s_g:e_g, :] = alpha * A[s_g:e_g, :] @ B[g] + beta * C[s_g:e_g, :]
 * with e_g = offsets[g], s_0 = 0 and s_g = offsets[g - 1]. a is [total_m, K] row-major (its last
 * stride 1), b is [G, K, N] -- each group's B[g] is K x N, stored either way: row-major (N
 * contiguous, a [G, K, N] array) or column-major (K contiguous: the transposed view of a [G, N, K]
 * array of Linear weights, read in place) -- and c (optional; then beta must be 0) and d are
 * [total_m, N] row-major. offsets is a 1-D I32 tensor of G cumulative row ends in DEVICE memory,
 * stride 1, read by the kernel: the host never waits for the group sizes (CUDA-graph capturable).
 * Offsets are not checked: an end is clamped into [0, total_m], a group whose end is below its
 * start is empty, and rows [offsets[G-1], total_m) of d are left as they were.
 * a and b share one dtype, f16 or bf16; d has it or f32; c has d's dtype; fp32 accumulation.
 * 1 <= G <= 1024. The kernel (sm_90 only) reads a and b by TMA: their pointers 16-byte aligned and
 * their row and group strides multiples of 16 bytes (else TESSEL_STATUS_NOT_SUPPORTED, naming the
 * fix). Reasons name the tensors ("a", "b", "c", "d", "offsets", or their `name`) and their strides
 * as "<name>.row_stride", "<name>.group_stride". No workspace. */
typedef struct tessel_grouped_gemm_problem {
  tessel_tensor a, b, c, d;
  tessel_tensor offsets;
  float alpha, beta;
} tessel_grouped_gemm_problem;

/* Which corner of each sequence's score matrix the mask is aligned at
 * (tessel/attention/attention_arguments.hpp): query i sits at key position i + S_k - S_q
 * (bottom-right, FlashAttention's: the last query sees the last key) or i (top-left, torch's
 * is_causal). */
typedef enum tessel_mask_align {
  TESSEL_MASK_ALIGN_BOTTOM_RIGHT = 0,
  TESSEL_MASK_ALIGN_TOP_LEFT = 1
} tessel_mask_align;

/* Attention forward (tessel/attention/attention_arguments.hpp has the definition):
 *   O[b,i,h,:] = softmax_j(mask(softcap(scale * <Q[b,i,h,:], K[b,j,g,:]>))) V[b,j,g,:],   g = h / (H / H_kv)
 *   LSE[b,h,i] = log sum_j exp(the same scores)
 * Dense batch: q [B, S_q, H, D], k [B, S_k, H_kv, D], v [B, S_k, H_kv, D_v], o [B, S_q, H, D_v],
 * lse [B, H, S_q]. Variable-length batch (cu_seqlens_q and cu_seqlens_k both given, int32 [B + 1]
 * offsets, non-decreasing from 0, in device memory): q [total_q, H, D], k [total_k, H_kv, D],
 * v [total_k, H_kv, D_v], o [total_q, H, D_v], lse [H, total_q]; sequence b is rows
 * [cu[b], cu[b+1]).
 * q, k, v and o share one dtype, f16 or bf16; lse is f32 and optional (ndim 0: not written). The
 * last dimension of every tensor has stride 1; the other strides are free (a transposed view of a
 * [B, H, S, D] array needs no copy) but for alignment: every row of q, k, v and o starts 16-byte
 * aligned (pointer and strides multiples of 16 bytes). The stride of an extent-1 dimension does
 * not count. (D, D_v) is one of (64, 64), (96, 96), (128, 128), (192, 192), (256, 256),
 * (192, 128); H is a multiple of H_kv. Reasons name the tensors as tessel_tensor's do; the host
 * API's validator's reasons name strides as "q.batch_stride", "q.row_stride" (the sequence
 * dimension), "q.head_stride", "o.row_stride", "lse.head_stride", ... (with each tensor's name). */
typedef struct tessel_attention_problem {
  tessel_tensor q, k, v, o;
  tessel_tensor lse;                          /* optional */
  tessel_tensor cu_seqlens_q, cu_seqlens_k;   /* optional, both or neither; i32, 1-D, stride 1 */
  int64_t max_seqlen_q, max_seqlen_k;         /* with cu_seqlens: the longest sequence (every one must
                                               * be at most this; the kernel does not check), or 0 for
                                               * the packed total; without: must be 0 */
  float softmax_scale;                        /* 0: 1 / sqrt(D) */
  float softcap;                              /* 0: none; > 0: scores become softcap * tanh(s / softcap) */
  int32_t causal;                             /* nonzero: window_right = 0 (window_left stays) */
  int32_t align;                              /* a tessel_mask_align */
  int64_t window_left, window_right;          /* key j is kept when p(i) - left <= j <= p(i) + right;
                                               * negative: unbounded on that side */
  char const* kernel; /* a registry name (`tessel list`), or NULL / "auto" for the library's choice */
} tessel_attention_problem;

/* Attention backward (tessel/attention/attention_backward_arguments.hpp has the definition): dQ,
 * dK and dV of tessel_attention_forward's problem, given dO = dL/dO.
 * `forward` is the forward's call as it ran: q, k, v, its output o and its lse (required here: the
 * fp32 log-sum-exp the forward wrote) are read; the mask, scales and cu_seqlens are the forward's;
 * forward.kernel is not read. d_o is shaped like o, dq like q, dk like k and dv like v (dense:
 * [B, S, H, D]; with cu_seqlens packed [total, H, D]), all of q's dtype, each with its own strides
 * under the forward's rules (last dimension stride 1, rows 16-byte aligned). With H > H_kv, dk and
 * dv are summed over the query heads of each key/value head. Keys no query row sees get dk = dv = 0;
 * rows that see no key get dq = 0. deterministic (nonzero): dq, dk, dv are bitwise identical run to
 * run (the default adds dQ with fp32 atomics in an order that varies). Reasons name the tensors as
 * the forward's do, and d_o, dq, dk, dv ("d_o.row_stride: ...", "dq: ..."), or the argument
 * ("workspace_bytes: ..."). */
typedef struct tessel_attention_backward_problem {
  tessel_attention_problem forward; /* q, k, v, o, lse read; o and lse may not be absent */
  tessel_tensor d_o;                /* read */
  tessel_tensor dq, dk, dv;         /* written */
  int32_t deterministic;
  char const* kernel;      /* a backward registry name (`tessel list`), or NULL / "auto" */
  void* workspace;         /* the caller's scratch (see "Workspace" above), or NULL: allocated stream-ordered */
  size_t workspace_bytes;  /* its size, at least tessel_attention_backward_workspace_size's answer */
} tessel_attention_backward_problem;

/* The pass a convolution computes (tessel/conv/operator.hpp). */
typedef enum tessel_conv_op {
  TESSEL_CONV_FPROP = 0, /* y = conv(x, w) */
  TESSEL_CONV_DGRAD = 1, /* dx from dy (in y) and w: the data gradient */
  TESSEL_CONV_WGRAD = 2  /* dw from x and dy (in y): the weight gradient */
} tessel_conv_op;

/* The activation of a fused epilogue (tessel/epilogue/activation.hpp). GELU is the tanh form (the
 * convolution's, tessel/conv/conv_activation.hpp); GELU_ERF, the exact form, is the GEMM's only. */
typedef enum tessel_activation {
  TESSEL_ACTIVATION_NONE = 0,
  TESSEL_ACTIVATION_RELU = 1,
  TESSEL_ACTIVATION_GELU = 2,
  TESSEL_ACTIVATION_SILU = 3,
  TESSEL_ACTIVATION_GELU_ERF = 4
} tessel_activation;

/* Convolution (tessel/conv/conv_arguments.hpp has the definitions: cross-correlation, as cuDNN and
 * PyTorch compute it), 2-D or 3-D by the rank of x:
 *   2-D  x [N, H, W, C]      w [K, R, S, C/groups]      y [N, P, Q, K]
 *   3-D  x [N, D, H, W, C]   w [K, T, R, S, C/groups]   y [N, Z, P, Q, K]
 * with P = floor((H + 2 pad_h - (dilation_h (R - 1) + 1)) / stride_h) + 1 (Z from D, T; Q from W, S).
 * Channel group g connects input channels [g C/groups, (g+1) C/groups) to output channels
 * [g K/groups, (g+1) K/groups); groups == C == K is depthwise.
 * The pass writes one of the three tensors and reads the other two:
 *   fprop  writes y  from x and w
 *   dgrad  writes x  (dx) from y (dy) and w
 *   wgrad  writes w  (dw) from x and y (dy)
 * through the epilogue out = act(alpha * acc + beta * residual + bias). residual is optional (ndim
 * 0; then beta must be 0) and has the written tensor's shape, strides and dtype; bias is optional,
 * fp32 1-D with one value per output channel of the written tensor (K for fprop, C for dgrad; wgrad
 * takes none). x, w, y and residual share one dtype, f16 or bf16; accumulation is fp32.
 * Layout: channels last. Every tensor's last dimension (the channels) has stride 1; x's and y's
 * other strides are free (torch's channels_last tensors, seen as [N, H, W, C] by a permutation,
 * are read in place); of w only the stride between filters is free, the taps of one filter are
 * dense ([R, S, C/groups] packed). The stride of an extent-1 dimension does not count. Any channel
 * count works, and any pointer aligned to its element (16-byte aligned rows run faster).
 * A 2-D problem leaves pad_d 0 and stride_d, dilation_d 1. Reasons start with the tensor's name
 * (its `name`, else "x", "w", "y", "residual", "bias"), or with the argument the host API's
 * validator names ("pad_h: ...", "groups: ...", "c: 66 is not divisible by groups 4 ...",
 * "<x's name>.stride_h: ..."). */
typedef struct tessel_conv_problem {
  int32_t op;                      /* a tessel_conv_op */
  tessel_tensor x, w, y;
  tessel_tensor residual;          /* optional */
  tessel_tensor bias;              /* optional; fp32 [K] (fprop) or [C] (dgrad) */
  int64_t pad_d, pad_h, pad_w;     /* zero padding on both sides of each spatial dimension */
  int64_t stride_d, stride_h, stride_w;
  int64_t dilation_d, dilation_h, dilation_w;
  int64_t groups;
  float alpha, beta;
  int32_t activation;              /* a tessel_activation */
  char const* kernel;      /* a registry name (`tessel list`), or NULL / "auto" for the library's choice */
  void* workspace;         /* the caller's scratch (see "Workspace" above), or NULL: the library's pool */
  size_t workspace_bytes;  /* its size, at least tessel_conv_workspace_size's answer */
} tessel_conv_problem;

/* TESSEL_C_API_VERSION of the library linked. */
int tessel_c_api_version(void);

/* A short name for a status ("invalid argument", ...). */
char const* tessel_status_string(tessel_status status);

/* Zeroes *p, then sets alpha = 1, beta = 0, a_scale = b_scale = 1, per-tensor scaling (every tensor
 * absent). */
void tessel_gemm_problem_init(tessel_gemm_problem* p);

/* Fills *t (name NULL). shape and strides hold ndim values; strides may be NULL for a packed
 * row-major tensor (the last dimension contiguous). ndim outside 0..TESSEL_MAX_DIMS gives ndim -1,
 * which every call refuses. */
void tessel_tensor_set(tessel_tensor* t, void* data, tessel_dtype dtype, int32_t ndim, int64_t const* shape,
                       int64_t const* strides);

/* Checks every argument rule of tessel_gemm without calling CUDA (so it answers on machines
 * without a GPU). */
tessel_status tessel_gemm_check(tessel_gemm_problem const* p, char* reason, size_t reason_size);

/* tessel_gemm_check, then whether a compiled kernel takes the problem on the current device;
 * *kernel_name (if not NULL) receives that kernel's registry name (a static string), or NULL.
 * Launches nothing. */
tessel_status tessel_gemm_can_implement(tessel_gemm_problem const* p, char const** kernel_name, char* reason,
                                        size_t reason_size);

/* The scratch bytes tessel_gemm(p) would take with the kernel it picks on the current device
 * (0 for most problems: aligned operands, no split K), in *bytes. Launches and enqueues nothing. */
tessel_status tessel_gemm_workspace_size(tessel_gemm_problem const* p, size_t* bytes, char* reason, size_t reason_size);

/* Runs the GEMM on `stream` (asynchronous; errors left pending by earlier work on the device are
 * reported as TESSEL_STATUS_CUDA_ERROR, never dropped). Problems with no elements to write
 * return at once. */
tessel_status tessel_gemm(tessel_gemm_problem const* p, cudaStream_t stream, char* reason, size_t reason_size);

/* Zeroes *p, then sets alpha = 1, beta = 0 (every tensor absent). */
void tessel_grouped_gemm_problem_init(tessel_grouped_gemm_problem* p);

/* Checks every argument rule of tessel_grouped_gemm without calling CUDA (the offsets' values are
 * never read on the host). */
tessel_status tessel_grouped_gemm_check(tessel_grouped_gemm_problem const* p, char* reason, size_t reason_size);

/* tessel_grouped_gemm_check, then whether the grouped kernel runs the problem on the current
 * device (an sm_90 GPU and the kernel's image). Launches nothing. */
tessel_status tessel_grouped_gemm_can_implement(tessel_grouped_gemm_problem const* p, char* reason, size_t reason_size);

/* Runs the grouped GEMM on `stream`, all groups in one launch (asynchronous; errors left pending by
 * earlier work come back as TESSEL_STATUS_CUDA_ERROR). total_m = 0 or N = 0 returns at once; K = 0
 * or alpha = 0 writes D = beta * C without reading a or b. */
tessel_status tessel_grouped_gemm(tessel_grouped_gemm_problem const* p, cudaStream_t stream, char* reason,
                                  size_t reason_size);

/* Zeroes *p, then sets window_left = window_right = -1 (no window), bottom-right alignment,
 * softmax_scale 0 (1 / sqrt(D)), every tensor absent. */
void tessel_attention_problem_init(tessel_attention_problem* p);

/* Checks every argument rule of tessel_attention_forward without calling CUDA. Reasons start with
 * the tensor's name ("q: ...", "cu_seqlens_k: ...") or, for the rules of the host API's
 * validator, with the argument it names ("head_dim: ...", "window_left: ..."). */
tessel_status tessel_attention_check(tessel_attention_problem const* p, char* reason, size_t reason_size);

/* tessel_attention_check, then whether a compiled kernel takes the problem on the current device.
 * Launches nothing. */
tessel_status tessel_attention_can_implement(tessel_attention_problem const* p, char* reason, size_t reason_size);

/* Runs attention forward on `stream` (asynchronous, no workspace; errors left pending by earlier
 * work come back as TESSEL_STATUS_CUDA_ERROR). Problems with nothing to write (B, H or S_q 0)
 * return at once. */
tessel_status tessel_attention_forward(tessel_attention_problem const* p, cudaStream_t stream, char* reason,
                                       size_t reason_size);

/* tessel_attention_problem_init on p->forward, then every other tensor absent, not deterministic,
 * no kernel name, no workspace. */
void tessel_attention_backward_problem_init(tessel_attention_backward_problem* p);

/* Checks every argument rule of tessel_attention_backward without calling CUDA: the C ABI's own
 * (ranks, dtypes, shapes that agree with the forward's tensors, unit last strides, distinct
 * elements of the gradients) then the host API's attention_backward_validate. */
tessel_status tessel_attention_backward_check(tessel_attention_backward_problem const* p, char* reason,
                                              size_t reason_size);

/* tessel_attention_backward_check, then whether a compiled backward kernel takes the problem on
 * the current device. Launches nothing. */
tessel_status tessel_attention_backward_can_implement(tessel_attention_backward_problem const* p, char* reason,
                                                      size_t reason_size);

/* The scratch bytes tessel_attention_backward(p) takes, in *bytes (fp32 row statistics and the
 * fp32 dQ accumulator, which the deterministic mode takes only at head dims (64, 64) and
 * (128, 128) with fixed lengths -- the sm_90a kernel's ordered additions, with a turn counter per
 * query block; 0 when nothing is read). Launches nothing. */
tessel_status tessel_attention_backward_workspace_size(tessel_attention_backward_problem const* p, size_t* bytes,
                                                       char* reason, size_t reason_size);

/* Runs attention backward on `stream` (asynchronous; with p->workspace NULL the scratch is
 * allocated and freed stream-ordered; errors left pending by earlier work come back as
 * TESSEL_STATUS_CUDA_ERROR). B = 0 or H = 0 returns at once; S_q = 0 writes dk = dv = 0, S_k = 0
 * writes dq = 0. */
tessel_status tessel_attention_backward(tessel_attention_backward_problem const* p, cudaStream_t stream, char* reason,
                                        size_t reason_size);

/* Zeroes *p, then sets op fprop, strides and dilations 1, groups 1, alpha 1, beta 0, no activation,
 * every tensor absent. */
void tessel_conv_problem_init(tessel_conv_problem* p);

/* Checks every argument rule of tessel_conv without calling CUDA: the C ABI's own (ranks, dtypes,
 * shapes that agree, channels and filter taps contiguous) then the host API's conv_validate. */
tessel_status tessel_conv_check(tessel_conv_problem const* p, char* reason, size_t reason_size);

/* tessel_conv_check, then whether a compiled kernel takes the problem on the current device;
 * *kernel_name (if not NULL) receives the kernel's registry name (a static string: "gemm:<GEMM
 * kernel>" for a 1x1 convolution the GEMM API runs, "epilogue-only" or "none" for calls that need
 * no convolution kernel), or NULL. Launches nothing. */
tessel_status tessel_conv_can_implement(tessel_conv_problem const* p, char const** kernel_name, char* reason,
                                        size_t reason_size);

/* The scratch bytes tessel_conv(p) takes on the current device (the partial sums of a split wgrad
 * reduction, or a 1x1 GEMM's staging; 0 for most problems), in *bytes. Launches nothing. */
tessel_status tessel_conv_workspace_size(tessel_conv_problem const* p, size_t* bytes, char* reason, size_t reason_size);

/* Runs the convolution on `stream` (asynchronous; errors left pending by earlier work come back as
 * TESSEL_STATUS_CUDA_ERROR). Problems whose output has no elements return at once. */
tessel_status tessel_conv(tessel_conv_problem const* p, cudaStream_t stream, char* reason, size_t reason_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSEL_C_API_H */
