// tessel/gemm/kernel/sm90_gemm_params.hpp -- the arguments of the sm_90a warp-specialized GEMMs.
//
// The canonical problem, per batch b (as for the sm_80 kernels, kernel/sm80_gemm_params.hpp):
//   D[b] (M x N, row-major, ldd) = alpha * A[b] (M x K) * B[b] (N x K)^T + beta * C[b] (row-major, ldc)
// A and B are reached only through TMA descriptors made on the host (src/gemm/sm90_gemm.cpp),
// 3-D tensors with 16-byte aligned strides in the 128-byte swizzle: a K-major operand is (K,
// rows, batch) with a box of (TileK, rows of the tile); an MN-major one (a_mn_major /
// b_mn_major: 16-bit kernels only, read with the wgmma transpose bit) is (rows, K, batch) with
// boxes of (64, TileK), one per 64 rows of the tile. A batch stride of 0 (one operand for every
// batch) is a 1-batch descriptor read at batch coordinate 0: a_batch_step / b_batch_step is 0.
//
// Epilogue: D = alpha * accumulators + beta * C from registers (any alignment, any output type),
// or -- tma_store, when D is 16-bit with 16-byte aligned rows -- through shared memory and TMA
// stores of 64 x 64 boxes (tma_d), which overlap the next tile's mainloop. C is then either not
// read, or (c_by_tma: C 16-bit with 16-byte aligned rows, in the kernels built with LoadsC, the
// _tmac entries) loaded by TMA (tma_c, the same boxes) into the staging buffer during the tile's
// mainloop, and each thread turns its C values there into D values in place.
// Parallel split-K (splits > 1): work unit (m, n, s * batch + b) computes K slice s of batch b
// into d as fp32 (d, ldd, batch_stride_d then describe the partial-sum workspace, slice s of
// batch b at d + (s * batch + b) * batch_stride_d; alpha = 1, beta = 0), and a reduction
// kernel forms D afterwards.
// Stream-K (stream_k, cooperative kernels only, splits == 1): the clusters walk `sk`'s work units
// instead of `scheduler`'s tiles (schedule/stream_k.hpp, kTail: the full rounds of cluster tiles
// whole, then the last partial round's tiles shared out evenly by k-tiles). A unit that starts
// inside a tile stores its consumers' fp32 accumulators in slot (cluster, CTA rank) of
// sk_partials and raises that slot's flags to sk_epoch; the unit that holds a tile's k-tile 0
// waits for its peers' flags, adds their partials in peer order and runs the epilogue. sk_epoch
// is unique to the launch (src/gemm/sm90_gemm.cpp), so flags need no clearing.
// Fused epilogue (fusion active): D = act(alpha * acc + beta * C + bias), applied to a consumer's
// accumulators in registers before any of the store paths above (C added there first, from global
// memory or, c_by_tma, from the staging buffer); off for split-K partials, whose reduction applies
// it.
// Plain C++ (the adapter compiles without nvcc).
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/schedule/persistent.hpp>
#include <tessel/schedule/stream_k.hpp>

#include <cstdint>

namespace tessel::kernel {

// Which operand of an implicit-GEMM convolution is the activations' im2col view
// (kernel/sm90_gemm_producer_im2col.hpp): none (a GEMM); a, A's rows are the output pixels (the
// forward convolution and the data gradient); b_pixels, B's rows are the output pixels (the same
// passes with the filters as A, D written transposed: narrow outputs); b_taps, B's rows are (tap,
// channel) pairs and its K the output pixels (the weight gradient).
enum class Sm90Im2colOperand : int { none, a, b_pixels, b_taps };

// Output pixel m as mixed-radix digits: its column q, row p, depth z and image n (q fastest).
struct Sm90PixelDigits {
  int q, p, z, n;
};

// An implicit-GEMM convolution's geometry (p.im2col). Im2col A: row m of A and D is output pixel
// m = (n, z, p, q), q fastest; k-tile kt is filter tap kt / c_blocks (s fastest, then r, t) and
// channels 64 (kt % c_blocks) on; tma_a is the activations' im2col tensor map, tma_b the filters'
// (channels, filters, taps) map. b_pixels: the same with A and B exchanged (column n of B and of
// the kernel's D is pixel n). b_taps: column j of B and D is tap j / channels, channel
// j % channels; k-tile kt is output pixels 64 kt on; tma_a is dy's (filters, pixels) map, tma_b
// the activations' im2col map.
struct Sm90Im2col {
  int rank = 0;             // the im2col map's: 4 (2-D) or 5 (3-D)
  int q = 1, p = 1, z = 1;  // the output's width, height, depth
  int stride_w = 1, stride_h = 1, stride_d = 1;
  int pad_w = 0, pad_h = 0, pad_d = 0;
  int dilation_w = 1, dilation_h = 1, dilation_d = 1;
  int s = 1, r = 1, taps = 1;  // filter width, height, and taps t * r * s
  int c_blocks = 1;            // im2col A: 64-channel blocks per tap
  int channels = 64;           // im2col B: the activations' channels (a multiple of 64)
  bool flip = false;           // B reads tap taps - 1 - tap (the data gradient's flipped filters)
  Sm90PixelDigits k_tile_step{};  // im2col B: one k-tile of pixels (TileK) as digits (sm90_pixel_digits)
};

struct Sm90GemmParams {
  TmaDescriptor tma_a;  // (K, M, batch) of A, box (TileK, TileM / ClusterN, 1); a_mn_major: (M, K, batch), box (64, TileK, 1)
  TmaDescriptor tma_b;  // (K, N, batch) of B, box (TileK, TileN / ClusterM, 1); b_mn_major: (N, K, batch), box (64, TileK, 1)
  TmaDescriptor tma_d;  // (N, M, batch) of D, box (64, 64, 1); used when tma_store
  TmaDescriptor tma_c;  // (N, M, batch) of C, box (64, 64, 1); used when c_by_tma
  int a_batch_step = 1, b_batch_step = 1;
  bool a_mn_major = false, b_mn_major = false;  // the operand is MN-major in global and shared memory
  std::int64_t m = 0, n = 0, k = 0;
  int k_tiles = 0;  // ceil(K / TileK)
  int batch = 1;    // batch count
  int splits = 1;   // K slices (parallel split-K when > 1)
  void const* c = nullptr; std::int64_t ldc = 0, batch_stride_c = 0;  // read only when beta != 0
  void* d = nullptr; std::int64_t ldd = 0, batch_stride_d = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool out_f32 = true;   // C and D are fp32
  bool out_f16 = false;  // ... else fp16 (true) or bf16 (false)
  bool c_pairs = false;  // two adjacent elements of C may be read as one access (alignment)
  bool d_pairs = false;  // ... and written
  bool tma_store = false;  // D (16-bit) leaves through shared memory and tma_d (beta == 0, or c_by_tma)
  bool c_by_tma = false;   // C (16-bit, beta != 0) arrives in the staging buffer through tma_c (tma_store too)
  bool staged_rows = false;  // D (16-bit, no pair stores) leaves through shared memory, row by row (beta == 0)
  // The kernel runs the swapped problem: element (row, col) of D and C is at col * ld + row (a
  // skinny kernel on a canonical D at most 64 rows tall): from registers, or (tma_store) staged
  // transposed and stored by tma_d, which then describes the caller's D. Not set with split-K:
  // the partials keep the kernel's orientation and the reduction writes D transposed.
  bool d_transposed = false;
  int fp8_pair = 0;  // fp8 kernels: the canonical (A, B) pair, 0 e4m3 x e4m3, 1 e4m3 x e5m2, 2 e5m2 x e4m3
  // Clusters walk this schedule of cluster tiles (ClusterM tile rows x ClusterN tile columns x 1
  // batch-and-slice, one of the two 1); CTA r of a cluster takes tile row ClusterM * m + r, or
  // tile column ClusterN * n + r.
  PersistentTileScheduler scheduler;
  // The units are the persistent walk's, worked out in 32 bits (scheduler.fits32(), no Stream-K):
  // kernel/sm90_gemm_cta.hpp's compact path. Else its general one.
  bool compact_units = false;
  bool stream_k = false;
  StreamKScheduler sk;                      // over cluster tiles, grid = scheduler's grid
  // Tail schedules (kTail, kSplitTail) run whole rounds first: every cluster's first sk_rounds
  // units are the persistent walk's (scheduler's) tiles, which sm90_unit works out with the
  // persistent scheduler's 32-bit arithmetic instead of the Stream-K scheduler's 64-bit one.
  long long sk_rounds = 0;
  float* sk_partials = nullptr;             // [grid][ClusterSize][Consumers][Accumulators / 4][128] float4
  unsigned long long* sk_flags = nullptr;   // [grid][ClusterSize][Consumers]
  unsigned long long sk_epoch = 0;
  // Edge boxes (kernel/sm90_gemm_producer.hpp): where A's rows end inside a CTA's share of an A
  // tile (M not a multiple of the share's rows), the producer copies that share as one box of
  // a_edge_rows rows -- M's remainder rounded up to whole 8-row swizzle atoms -- through
  // tma_a_edge, a K-major map of A with that box; likewise B. An MN-major share copies its first
  // a_edge_rows / 64 boxes through tma_a itself (sm90_mn_edge_rows). 0: no share ends inside (or
  // no map could be made); the share is then copied whole, TMA zero-filling its rows past the
  // edge. At the end of the block, away from the fields every unit reads.
  int a_edge_rows = 0, b_edge_rows = 0;
  TmaDescriptor tma_a_edge;  // (K, M, batch) of A, box (TileK, a_edge_rows, 1)
  TmaDescriptor tma_b_edge;  // (K, N, batch) of B, box (TileK, b_edge_rows, 1)
  // The 16-wide skinny kernels' producer keeps at most this many k-tiles announced and not yet
  // arrived, 0 < in_flight < Stages (sm90_skinny_in_flight); 0: as many as the ring holds.
  int in_flight = 0;
  // The 16-wide skinny kernels' L2 eviction priorities for A's loads (the long operand, read once)
  // and B's (the narrow one every CTA reads); the other kernels' loads carry no hint.
  L2Priority l2_priority_a = L2Priority::none, l2_priority_b = L2Priority::none;
  // The fused epilogue, in the kernel's orientation (file comment); inactive: the plain GEMM.
  epilogue::EpilogueFusion fusion;
  // Block scaling (the block-scaled fp8 kernels, Sm90GemmConfig::BlockScaled; GemmArguments'
  // layouts, in the kernel's orientation, which for these kernels is always the caller's A and B:
  // a column-major D is written transposed, d_transposed): k-tile kt's products of row i and
  // column j are scaled by a_scales[kt * lda_scales + i] * b_scales[(j / 128) * ldb_scales + kt]
  // before joining the sum. Batch b's scales start a_batch_scales and b_batch_scales floats on.
  float const* a_scales = nullptr;
  float const* b_scales = nullptr;
  std::int64_t lda_scales = 0, ldb_scales = 0;
  std::int64_t a_batch_scales = 0, b_batch_scales = 0;
  int n_scale_blocks = 0;  // ceil(N / 128): b_scales' blocks along N
  Sm90Im2col im2col;  // the implicit-GEMM convolutions only (Sm90GemmConfig::Im2col)
};

}  // namespace tessel::kernel
