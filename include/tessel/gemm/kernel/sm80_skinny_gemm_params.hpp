// tessel/gemm/kernel/sm80_skinny_gemm_params.hpp -- the arguments of the sm_80 skinny GEMM kernels
// and the map from a CTA's index to its work.
//
// The problem, per batch b (kernel/sm80_skinny_gemm.hpp):
//   D[b](m, n) = alpha * sum_k A[b](m, k) * B[b](n, k) + beta * C[b](m, n)
// with A the *small* operand (M <= a few 16-row tiles) and B the long one, both K-major with
// 16-byte aligned rows (the host adapter stages anything else), and C, D at any strides:
// element (m, n) of D at d + b*batch_stride_d + m*d_stride_m + n*d_stride_n. So one kernel serves
// a skinny row-major D (d_stride_n = 1) and a skinny column-major one (d_stride_m = 1): the host
// puts whichever of the canonical M, N is small on this kernel's M side.
//
// CTAs: one per (m tile, K slice, n strip, batch), the m tile fastest, then the slice:
//   cta = m_tile + tiles_m * (slice + splits * (n_tile + tiles_n * batch))
// so the CTAs that read the same strip of B (several m tiles) and the slices of one output tile
// run together. The slices of an output tile (its "group") meet in the epilogue: each writes its
// fp32 partial tile to workspace[group][slice], the last to arrive sums them in slice order.
// Plain C++: the adapter and the host tests use it without nvcc.
#pragma once

#include <tessel/config.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>

#include <cstdint>

namespace tessel::kernel {

struct Sm80SkinnyParams {
  std::int64_t m = 0, n = 0, k = 0;  // m: the small side
  int batch = 1;
  void const* a = nullptr; std::int64_t lda = 0, batch_stride_a = 0;  // (M,K), K-major
  void const* b = nullptr; std::int64_t ldb = 0, batch_stride_b = 0;  // (N,K), K-major
  void const* c = nullptr; std::int64_t c_stride_m = 0, c_stride_n = 0, batch_stride_c = 0;  // read when beta != 0
  void* d = nullptr; std::int64_t d_stride_m = 0, d_stride_n = 0, batch_stride_d = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool out_f32 = true;  // C and D are fp32; else the 16-bit input type
  int tiles_m = 1, tiles_n = 1;
  // splits > 1: per group BLK_M x BLK_N floats per slice of workspace and one counter, zeroed
  // before the launch (the last slice puts it back to zero).
  int splits = 1;
  float* workspace = nullptr;
  int* counters = nullptr;
  // The fused epilogue (act(alpha * acc + beta * C + bias)) on the kernel's (m, n): the host turns
  // a bias's orientation when it puts the canonical N on this kernel's M.
  epilogue::EpilogueFusion fusion;
};

// What one CTA computes (file comment).
struct Sm80SkinnyWork {
  int m_tile = 0, slice = 0;
  std::int64_t n_tile = 0, batch = 0;
  std::int64_t group = 0;  // the output tile: m_tile + tiles_m * (n_tile + tiles_n * batch)
};

TESSEL_HOST_DEVICE constexpr Sm80SkinnyWork sm80_skinny_work(std::int64_t cta, int tiles_m, int splits, int tiles_n) {
  Sm80SkinnyWork w;
  w.m_tile = int(cta % tiles_m);
  std::int64_t rest = cta / tiles_m;
  w.slice = int(rest % splits);
  rest /= splits;
  w.n_tile = rest % tiles_n;
  w.batch = rest / tiles_n;
  w.group = w.m_tile + std::int64_t(tiles_m) * (w.n_tile + std::int64_t(tiles_n) * w.batch);
  return w;
}

}  // namespace tessel::kernel
