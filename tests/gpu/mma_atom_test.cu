// Every MMA atom on the GPU: one warp loads A and B from shared memory with ldmatrix
// (make_tiled_copy_A/B of the atom's TiledMMA) and runs mma.sync through gemm(); the result must
// equal a float64 host reference on random data (the output is poisoned before the run).
#include "gpu/gpu_test.hpp"

#include <tessel/tensor.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// The ldmatrix that moves `bytes` bytes per warp (128 bytes per 8x8 b16 matrix).
template <int Bytes>
using ldsm_for = std::conditional_t<Bytes == 128, SM75_U32x1_LDSM_N,
                                    std::conditional_t<Bytes == 256, SM75_U32x2_LDSM_N, SM75_U32x4_LDSM_N>>;

// D (MxN, column-major) = A (MxK, row-major) * B (NxK, row-major)^T + C.
template <class Op>
__global__ void one_instruction(typename MMA_Traits<Op>::ValTypeA const* A, typename MMA_Traits<Op>::ValTypeB const* B,
                                typename MMA_Traits<Op>::ValTypeC const* C, typename MMA_Traits<Op>::ValTypeD* D) {
  using Atom = MMA_Atom<Op>;
  using TA = typename Atom::ValTypeA;
  using TB = typename Atom::ValTypeB;
  using Shp = typename Atom::Shape_MNK;
  constexpr int M = decltype(size<0>(Shp{}))::value, N = decltype(size<1>(Shp{}))::value,
                K = decltype(size<2>(Shp{}))::value;
  __shared__ alignas(128) TA smem_a[M * K];
  __shared__ alignas(128) TB smem_b[N * K];
  int const lane = threadIdx.x;
  for (int i = lane; i < M * K; i += 32) smem_a[i] = A[i];
  for (int i = lane; i < N * K; i += 32) smem_b[i] = B[i];
  __syncthreads();

  Tensor sA = make_tensor(make_smem_ptr(smem_a), make_layout(Shape<Int<M>, Int<K>>{}, GenRowMajor{}));  // (M,K)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), make_layout(Shape<Int<N>, Int<K>>{}, GenRowMajor{}));  // (N,K)
  Tensor gC = make_tensor(make_gmem_ptr(C), make_layout(Shape<Int<M>, Int<N>>{}));                      // (M,N)
  Tensor gD = make_tensor(make_gmem_ptr(D), make_layout(Shape<Int<M>, Int<N>>{}));                      // (M,N)

  auto mma = make_tiled_mma(Atom{});
  auto thr_mma = mma.get_slice(lane);
  Tensor tCrA = thr_mma.partition_fragment_A(sA);  // (MMA,MMA_M,MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB);  // (MMA,MMA_N,MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);           // (MMA,MMA_M,MMA_N)
  Tensor tCgD = thr_mma.partition_C(gD);           // (MMA,MMA_M,MMA_N)
  Tensor tCrC = thr_mma.partition_fragment_C(gC);  // (MMA,MMA_M,MMA_N)

  auto s2r_a = make_tiled_copy_A(Copy_Atom<ldsm_for<M * K * int(sizeof(TA))>, TA>{}, mma);
  auto s2r_b = make_tiled_copy_B(Copy_Atom<ldsm_for<N * K * int(sizeof(TB))>, TB>{}, mma);
  auto thr_a = s2r_a.get_slice(lane);
  auto thr_b = s2r_b.get_slice(lane);
  copy(s2r_a, thr_a.partition_S(sA), thr_a.retile_D(tCrA));  // ldmatrix
  copy(s2r_b, thr_b.partition_S(sB), thr_b.retile_D(tCrB));
  copy(tCgC, tCrC);
  gemm(mma, tCrA, tCrB, tCrC);  // mma.sync
  copy(tCrC, tCgD);
}

template <class T>
T random_value(std::mt19937& rng) {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    return static_cast<T>(std::uniform_int_distribution<int>(-128, 127)(rng));
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return std::uniform_int_distribution<int>(-100000, 100000)(rng);
  } else {
    return T(std::uniform_real_distribution<float>(-2.f, 2.f)(rng));
  }
}
template <class T>
double as_double(T x) {
  if constexpr (std::is_integral_v<T>) {
    return double(x);
  } else {
    return double(float(x));
  }
}

template <class Op>
void run_one_instruction(char const* name) {
  SCOPED_TRACE(name);
  using Tr = MMA_Traits<Op>;
  using TA = typename Tr::ValTypeA;
  using TB = typename Tr::ValTypeB;
  using TC = typename Tr::ValTypeC;
  using Shp = typename Tr::Shape_MNK;
  constexpr int M = decltype(size<0>(Shp{}))::value, N = decltype(size<1>(Shp{}))::value,
                K = decltype(size<2>(Shp{}))::value;
  std::mt19937 rng(1234 + M * N * K);
  std::vector<TA> a(M * K);
  std::vector<TB> b(N * K);
  std::vector<TC> c(M * N);
  for (auto& x : a) x = random_value<TA>(rng);
  for (auto& x : b) x = random_value<TB>(rng);
  for (auto& x : c) x = random_value<TC>(rng);

  TA* dA;
  TB* dB;
  TC *dC, *dD;
  TESSEL_CUDA_OK(cudaMalloc(&dA, sizeof(TA) * a.size()));
  TESSEL_CUDA_OK(cudaMalloc(&dB, sizeof(TB) * b.size()));
  TESSEL_CUDA_OK(cudaMalloc(&dC, sizeof(TC) * c.size()));
  TESSEL_CUDA_OK(cudaMalloc(&dD, sizeof(TC) * c.size()));
  TESSEL_CUDA_OK(cudaMemcpy(dA, a.data(), sizeof(TA) * a.size(), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dB, b.data(), sizeof(TB) * b.size(), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dC, c.data(), sizeof(TC) * c.size(), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemset(dD, 0xff, sizeof(TC) * c.size()));  // poison (NaN for float)
  one_instruction<Op><<<1, 32>>>(dA, dB, dC, dD);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<TC> d(M * N);
  TESSEL_CUDA_OK(cudaMemcpy(d.data(), dD, sizeof(TC) * d.size(), cudaMemcpyDeviceToHost));
  cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dD);

  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double ref = as_double(c[m + M * n]), mag = std::abs(ref);
      for (int k = 0; k < K; ++k) {
        double p = as_double(a[m * K + k]) * as_double(b[n * K + k]);
        ref += p;
        mag += std::abs(p);
      }
      double got = as_double(d[m + M * n]);
      double tol = std::is_integral_v<TC> ? 0.0 : 1e-5 * mag + 1e-6;
      ASSERT_TRUE(std::abs(got - ref) <= tol) << "D(" << m << "," << n << ") = " << got << ", reference " << ref;
    }
  }
}

}  // namespace

TEST(MmaAtomsGpu, OneInstructionTileMatchesReference) {
  TESSEL_REQUIRE_GPU();
  run_one_instruction<SM80_16x8x8_F32F16F16F32_TN>("SM80_16x8x8_F32F16F16F32_TN");
  run_one_instruction<SM80_16x8x8_F32BF16BF16F32_TN>("SM80_16x8x8_F32BF16BF16F32_TN");
  run_one_instruction<SM80_16x8x16_F32F16F16F32_TN>("SM80_16x8x16_F32F16F16F32_TN");
  run_one_instruction<SM80_16x8x16_F32BF16BF16F32_TN>("SM80_16x8x16_F32BF16BF16F32_TN");
  run_one_instruction<SM80_16x8x8_F32TF32TF32F32_TN>("SM80_16x8x8_F32TF32TF32F32_TN");
  run_one_instruction<SM80_16x8x32_S32S8S8S32_TN>("SM80_16x8x32_S32S8S8S32_TN");
}
