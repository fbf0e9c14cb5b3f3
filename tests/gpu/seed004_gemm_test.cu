// Seed 004's gemm_device written with tessel: local_tile by the CTA tiler, local_partition by
// thread layouts for the copies and the compute, register accumulators, a k-tile mainloop with
// cp.async fences, and axpby as the epilogue. Checked against a float64 host reference on random
// data: the seed's unpredicated kernel on a tile-multiple problem, and the same kernel with
// predicates (identity tensors, zero-filling cp.async, a predicated axpby) on a ragged
// 1000x777x333 problem whose buffers are padded with NaN that must never be read or written.
#include "gpu/gpu_test.hpp"

#include <tessel/tensor.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace tessel;

namespace {

template <bool Predicated, class ProblemShape, class CtaTiler, class TA, class AStride, class ASmemLayout,
          class AThreadLayout, class TB, class BStride, class BSmemLayout, class BThreadLayout, class TC,
          class CStride, class CThreadLayout, class Alpha, class Beta>
__global__ __launch_bounds__(decltype(size(CThreadLayout{}))::value) void gemm_device(
    ProblemShape shape_MNK, CtaTiler cta_tiler, TA const* A, AStride dA, ASmemLayout sA_layout, AThreadLayout tA,
    TB const* B, BStride dB, BSmemLayout sB_layout, BThreadLayout tB, TC* C, CStride dC, CThreadLayout tC,
    Alpha alpha, Beta beta) {
  static_assert(is_static_v<AThreadLayout> && is_static_v<BThreadLayout> && is_static_v<CThreadLayout>,
                "gemm_device: the thread layouts must be static");
  static_assert(is_static_v<ASmemLayout> && is_static_v<BSmemLayout>, "gemm_device: the smem layouts must be static");

  // Full tensors and this CTA's tiles.
  Tensor mA = make_tensor(make_gmem_ptr(A), select<0, 2>(shape_MNK), dA);  // (M,K)
  Tensor mB = make_tensor(make_gmem_ptr(B), select<1, 2>(shape_MNK), dB);  // (N,K)
  Tensor mC = make_tensor(make_gmem_ptr(C), select<0, 1>(shape_MNK), dC);  // (M,N)
  auto cta_coord = make_coord(int(blockIdx.x), int(blockIdx.y), _);        // (m,n,k)
  Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});     // (BLK_M,BLK_K,k)
  Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});     // (BLK_N,BLK_K,k)
  Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});     // (BLK_M,BLK_N)

  __shared__ TA smemA[decltype(cosize(sA_layout))::value];
  __shared__ TB smemB[decltype(cosize(sB_layout))::value];
  Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);  // (BLK_M,BLK_K)
  Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);  // (BLK_N,BLK_K)

  int const tid = threadIdx.x;
  // Copy partitions: element i of each (THR_M x THR_K) block of the tile goes to thread i.
  Tensor tAgA = local_partition(gA, tA, tid);  // (THR_M,THR_K,k)
  Tensor tAsA = local_partition(sA, tA, tid);  // (THR_M,THR_K)
  Tensor tBgB = local_partition(gB, tB, tid);  // (THR_N,THR_K,k)
  Tensor tBsB = local_partition(sB, tB, tid);  // (THR_N,THR_K)
  // Compute partitions: the rows of tC for A, its columns for B, all of it for C.
  Tensor tCsA = local_partition(sA, tC, tid, Step<_1, X>{});   // (THR_M,BLK_K)
  Tensor tCsB = local_partition(sB, tC, tid, Step<X, _1>{});   // (THR_N,BLK_K)
  Tensor tCgC = local_partition(gC, tC, tid, Step<_1, _1>{});  // (THR_M,THR_N)
  Tensor tCrC = make_tensor_like(tCgC);                        // (THR_M,THR_N)
  clear(tCrC);

  // Coordinates of the same partitions, for the predicates of a ragged problem.
  Tensor tAcA = local_partition(local_tile(make_identity_tensor(shape(mA)), cta_tiler, cta_coord, Step<_1, X, _1>{}), tA, tid);
  Tensor tBcB = local_partition(local_tile(make_identity_tensor(shape(mB)), cta_tiler, cta_coord, Step<X, _1, _1>{}), tB, tid);
  Tensor tCcC = local_partition(local_tile(make_identity_tensor(shape(mC)), cta_tiler, cta_coord, Step<_1, _1, X>{}), tC, tid, Step<_1, _1>{});
  // One zero-filling cp.async per element: the copy atom of the predicated loads.
  auto zfill = Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS_ZFILL<TA>, TA>{};

  int const k_tile_max = int(size<2>(tAgA));
  for (int k_tile = 0; k_tile < k_tile_max; ++k_tile) {
    if constexpr (Predicated) {
      // (1,THR_M,THR_K): one atom execution (one element) per (m,k); the predicate is indexed
      // by the (m,k) modes, and a false one zero-fills the smem element.
      auto per_element = [](auto const& t) { return make_tensor(t.data(), prepend(t.layout(), Layout<_1, _0>{})); };
      Tensor tAcAk = tAcA(_, _, k_tile);
      Tensor tBcBk = tBcB(_, _, k_tile);
      copy_if(zfill, [&](int i) { return elem_less(tAcAk(i), shape(mA)); }, per_element(tAgA(_, _, k_tile)),
              per_element(tAsA));
      copy_if(zfill, [&](int i) { return elem_less(tBcBk(i), shape(mB)); }, per_element(tBgB(_, _, k_tile)),
              per_element(tBsB));
    } else {
      copy(tAgA(_, _, k_tile), tAsA);  // (THR_M,THR_K) -> (THR_M,THR_K)
      copy(tBgB(_, _, k_tile), tBsB);  // (THR_N,THR_K) -> (THR_N,THR_K)
    }
    cp_async_fence();    // the end of this k-tile's cp.async instructions
    cp_async_wait<0>();  // wait for them
    __syncthreads();     // every thread's copies are in smem
    gemm(tCsA, tCsB, tCrC);  // (THR_M,THR_N) += (THR_M,BLK_K) * (THR_N,BLK_K)
    __syncthreads();         // done reading smem
  }

  if constexpr (Predicated) {
    axpby(alpha, tCrC, beta, tCgC, [&](int i) { return elem_less(tCcC(i), shape(mC)); });
  } else {
    axpby(alpha, tCrC, beta, tCgC);
  }
}

struct Result {
  double max_err = 0;
  long long bad = 0, guard_touched = 0;
};

// C = alpha * A * B^T + beta * C with A (M,K):(1,lda), B (N,K):(1,ldb), C (M,N):(1,ldc), all
// with `pad` extra NaN-filled columns past the data (never read: out-of-range loads zero-fill).
template <bool Predicated>
Result run_gemm(int M, int N, int K, float alpha, float beta) {
  int const lda = M + 3, ldb = N + 5, ldc = M + 1;
  int const pad = 16;  // extra K columns (and C columns) of NaN
  float const nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a(std::size_t(lda) * (K + pad), nan), b(std::size_t(ldb) * (K + pad), nan),
      c(std::size_t(ldc) * (N + pad), nan);
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m) a[m + std::size_t(lda) * k] = dist(rng);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) b[n + std::size_t(ldb) * k] = dist(rng);
  // With beta == 0 the kernel must not read C: it holds NaN then.
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) c[m + std::size_t(ldc) * n] = beta == 0.0f ? nan : dist(rng);

  float *dA, *dB, *dC;
  EXPECT_EQ(cudaMalloc(&dA, a.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dB, b.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dC, c.size() * sizeof(float)), cudaSuccess);
  cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dC, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice);

  auto prob = make_shape(M, N, K);
  auto dA_ = make_stride(Int<1>{}, lda);
  auto dB_ = make_stride(Int<1>{}, ldb);
  auto dC_ = make_stride(Int<1>{}, ldc);
  auto bM = Int<128>{};
  auto bN = Int<128>{};
  auto bK = Int<8>{};
  auto cta_tiler = make_shape(bM, bN, bK);
  auto sA = make_layout(make_shape(bM, bK));  // (m,k) -> smem index, M-major
  auto sB = make_layout(make_shape(bN, bK));
  auto tA = make_layout(make_shape(Int<32>{}, Int<8>{}));
  auto tB = make_layout(make_shape(Int<32>{}, Int<8>{}));
  auto tC = make_layout(make_shape(Int<16>{}, Int<16>{}));
  dim3 grid((M + 127) / 128, (N + 127) / 128);
  gemm_device<Predicated><<<grid, 256>>>(prob, cta_tiler, dA, dA_, sA, tA, dB, dB_, sB, tB, dC, dC_, tC, alpha, beta);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> out(c.size());
  cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dA), cudaFree(dB), cudaFree(dC);

  Result r;
  for (int n = 0; n < N + pad; ++n) {
    for (int m = 0; m < ldc; ++m) {
      std::size_t const i = m + std::size_t(ldc) * n;
      if (m >= M || n >= N) {  // outside C: must still be the NaN guard
        if (!std::isnan(out[i])) ++r.guard_touched;
        continue;
      }
      double ref = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        double p = double(a[m + std::size_t(lda) * k]) * double(b[n + std::size_t(ldb) * k]);
        ref += p;
        mag += std::abs(p);
      }
      ref = alpha * ref + (beta == 0.0f ? 0.0 : beta * double(c[i]));
      double err = std::abs(double(out[i]) - ref);
      if (!(err <= 1e-5 * (std::abs(alpha) * mag + std::abs(beta)) + 1e-6)) ++r.bad;
      if (!(err <= r.max_err)) r.max_err = err;
    }
  }
  return r;
}

}  // namespace

TEST(Seed004Gemm, TileMultipleProblemAsInTheSeed) {
  TESSEL_REQUIRE_GPU();
  Result r = run_gemm<false>(256, 384, 64, 1.5f, -0.5f);
  EXPECT_EQ(r.bad, 0) << "max |error| " << r.max_err;
  EXPECT_EQ(r.guard_touched, 0);
}

TEST(Seed004Gemm, RaggedProblemWithPredicates) {
  TESSEL_REQUIRE_GPU();
  Result r = run_gemm<true>(1000, 777, 333, 1.25f, 0.75f);
  EXPECT_EQ(r.bad, 0) << "max |error| " << r.max_err;
  EXPECT_EQ(r.guard_touched, 0) << "elements outside C were written";
  Result r0 = run_gemm<true>(17, 33, 65, -1.0f, 0.0f);  // beta = 0: C (all NaN) is not read
  EXPECT_EQ(r0.bad, 0) << "max |error| " << r0.max_err;
  EXPECT_EQ(r0.guard_touched, 0);
}
