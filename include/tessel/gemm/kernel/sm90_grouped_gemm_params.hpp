// tessel/gemm/kernel/sm90_grouped_gemm_params.hpp -- the arguments of the sm_90a grouped GEMM
// (kernel/sm90_grouped_gemm.hpp).
//
// G problems that share N and K, their rows stacked in one A and one D (MoE: tokens sorted by
// expert). Group g owns rows [start_g, end_g) (schedule/grouped.hpp, grouped_rows, from the
// device array `offsets` of cumulative row ends) and computes
//   D[start_g:end_g, :] (row-major, ldd) = alpha * A[start_g:end_g, :] (K-major, total_m x K) * B[g]^T
//                                          + beta * C[start_g:end_g, :] (row-major, ldc; read when beta != 0)
// with B[g] the N x K matrix of group g: K-major (a Linear layer's weight, [G, N, K]) or, with
// b_mn_major, stored K x N with N contiguous ([G, K, N]). A and B are reached through TMA maps
// made on the host (src/gemm/grouped_gemm.cpp): A (K, total_m, 1) with a (TileK, TileM, 1) box --
// rows a tile reads past its group's end are other groups' rows or TMA's zero fill, and their
// products are never stored; B (K, N, G) with a (TileK, TileN, 1) box, or (N, K, G) with
// (64, TileK, 1) boxes. D leaves from registers with row and column tests, or -- tma_store: a
// 16-bit D with 16-byte aligned rows and C unread -- a tile wholly inside its group's rows leaves
// through shared memory and TMA stores (tma_d, (N, total_m, 1), box (64, 64, 1)), which clip
// columns past N; a group's last tile row never does (a store box would reach the next group).
// Plain C++ (the host adapter compiles without nvcc).
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>

#include <cstdint>

namespace tessel::kernel {

// Groups one launch takes: the kernel keeps each group's rows and tile counts in shared memory.
inline constexpr int kSm90GroupedMaxGroups = 1024;

struct Sm90GroupedGemmParams {
  TmaDescriptor tma_a;  // (K, total_m, 1) of A, box (TileK, TileM, 1)
  TmaDescriptor tma_b;  // (K, N, G) of B, box (TileK, TileN, 1); b_mn_major: (N, K, G), box (64, TileK, 1)
  TmaDescriptor tma_d;  // (N, total_m, 1) of D, box (64, 64, 1); used when tma_store
  int const* offsets = nullptr;  // [groups] cumulative row ends, device memory
  int groups = 0;
  int total_m = 0;  // rows of A, C and D
  int n = 0, k = 0;
  int k_tiles = 0;   // ceil(K / TileK); 0 (K = 0 or alpha = 0): D = beta * C, alpha then 1
  int n_tiles = 0;   // ceil(N / TileN)
  bool b_mn_major = false;
  void const* c = nullptr; std::int64_t ldc = 0;  // read only when beta != 0
  void* d = nullptr; std::int64_t ldd = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool out_f32 = false;  // C and D are fp32
  bool out_f16 = false;  // ... else fp16 (true) or bf16 (false)
  bool d_pairs = false;  // two adjacent elements of D (and of C) may be accessed as one (alignment)
  bool tma_store = false;
};

}  // namespace tessel::kernel
