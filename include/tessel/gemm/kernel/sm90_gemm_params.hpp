// tessel/gemm/kernel/sm90_gemm_params.hpp -- the arguments of the sm_90a warp-specialized GEMMs.
//
// The canonical problem, per batch b (as for the sm_80 kernels, kernel/sm80_gemm_params.hpp):
//   D[b] (M x N, row-major, ldd) = alpha * A[b] (M x K) * B[b] (N x K)^T + beta * C[b] (row-major, ldc)
// A and B are K-major and reached only through TMA descriptors made on the host
// (src/gemm/sm90_gemm.cpp): 3-D tensors (K, rows, batch) with 16-byte aligned strides and the
// 128-byte swizzle. A batch stride of 0 (one operand for every batch) is a 1-batch descriptor read
// at batch coordinate 0: a_batch_step / b_batch_step is 0.
// Rows that are not 16-byte aligned (an odd leading dimension) are read in place as a_residues
// (b_residues) aligned views, one per residue class of the rows (kernel/sm90_row_residues.hpp):
// descriptor r covers rows r, r + P, ... with columns shifted by a_skew[r]; a tile arrives as P
// boxes of TileM / P rows, so the tile's rows (B's: its columns) are permuted by residue_row.
// P = 1 is the plain case: one descriptor, skew 0.
//
// Epilogue: D = alpha * accumulators + beta * C from registers (any alignment, any output type),
// or -- tma_store, when D is 16-bit and C is not read -- through shared memory and TMA stores of
// 64-column boxes (tma_d: one view per residue class of A's rows, so that each box's rows are
// contiguous in shared memory), which overlap the next tile's mainloop; or -- staged_rows, when
// D is 16-bit, C is not read and TMA cannot store it -- through shared memory and row copies.
// Parallel split-K (splits > 1): work unit (m, n, s * batch + b) computes K slice s of batch b
// into d as fp32 (d, ldd, batch_stride_d then describe the partial-sum workspace, slice s of
// batch b at d + (s * batch + b) * batch_stride_d; alpha = 1, beta = 0), and a reduction
// kernel forms D afterwards.
// Plain C++ (the adapter compiles without nvcc).
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/gemm/kernel/sm90_row_residues.hpp>
#include <tessel/schedule/persistent.hpp>

#include <cstdint>

namespace tessel::kernel {

struct Sm90GemmParams {
  TmaDescriptor tma_a[kSm90MaxResidues];  // (skew + K, rows of class r, batch) of A, box (TileK, TileM / a_residues, 1)
  TmaDescriptor tma_b[kSm90MaxResidues];  // (skew + K, rows of class r, batch) of B, box (TileK, TileN / max(b_residues, ClusterM), 1)
  TmaDescriptor tma_d[kSm90MaxResidues];  // (skew + N, rows of A's class r, batch) of D, box (64, min(64, TileM / a_residues), 1); when tma_store
  int a_residues = 1, b_residues = 1;     // residue classes (powers of two, <= kSm90MaxResidues)
  int a_skew[kSm90MaxResidues] = {}, b_skew[kSm90MaxResidues] = {}, d_skew[kSm90MaxResidues] = {};
  int a_batch_step = 1, b_batch_step = 1;
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
  bool tma_store = false;  // D (16-bit) leaves through shared memory and tma_d (beta == 0)
  bool staged_rows = false;  // D (16-bit, no pair stores) leaves through shared memory, row by row (beta == 0)
  // Clusters of ClusterM CTAs walk this schedule of cluster tiles (ClusterM tile rows x 1 tile
  // column x 1 batch-and-slice); CTA r of a cluster takes tile row ClusterM * m + r.
  PersistentTileScheduler scheduler;
};
static_assert(sizeof(Sm90GemmParams) <= 4096, "Sm90GemmParams: kernel parameters are limited to 4 KiB; fewer descriptors");

}  // namespace tessel::kernel
