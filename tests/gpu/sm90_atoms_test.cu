// The sm90 atoms on the GPU (sm_90a only): one warpgroup computes a 64 x 64 x 64 bf16 product with
// four wgmma.m64n64k16, A and B in shared memory laid out by the GMMA atoms tiled with
// tile_to_shape, read through descriptors from make_gmma_desc, in every swizzle (interleave, 32,
// 64, 128 bytes) with A K-major and B MN-major and the other way round -- the MN-major path is
// how column-major operands can be read in place. The operands reach shared memory either by
// threads writing through the layouts or by TMA loads from make_tma_copy, which must agree; the
// accumulators leave through the atom's LayoutC_TV. D must match a float64 host reference on
// random data (the output is poisoned first). The kernel also compares make_gmma_desc with the
// GEMM kernel's hand-written wgmma_desc_k_major_sw128 on real shared-memory addresses, and the
// wgmmas are issued by gemm on the TiledMMA's descriptor fragments (partition_fragment_A/B) that
// must hold the same descriptors. A second
// kernel runs the multicast load and store atoms in a 2-CTA cluster; a third takes A from registers
// (the RS atoms, attention's P V) through the atom's LayoutA_TV; a fourth reads B at every row
// offset of a taller swizzled buffer (the halo-window convolution's taps).
//   build-gpu: cmake --build build --target gpu_sm90_atoms_test; run: build/tests/gpu_sm90_atoms_test
#include "gpu/gpu_test.hpp"

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/arch/sm90_mbarrier.hpp>
#include <tessel/arch/sm90_mma_wgmma.hpp>
#include <tessel/algorithm/gemm.hpp>
#include <tessel/atom/gmma_descriptor.hpp>
#include <tessel/atom/mma_traits_sm90.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/runtime/tma_descriptor.hpp>
#include <tessel/tensor.hpp>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using GMMA::LayoutType;
using GMMA::Major;

namespace {

using T = bfloat16_t;
constexpr int kM = 64, kN = 64, kK = 64;

template <Major M>
constexpr int trans_bit = M == Major::MN ? 1 : 0;

// The (64, 64) operand stage: atoms along the row mode first for K-major, along K first for
// MN-major, so every swizzle-row-wide column of atoms is one dense TMA box.
template <Major M, LayoutType Type>
struct Stage {
  using Atom = GMMA::smem_atom<T, M, Type>;
  static constexpr int width = GMMA::layout_type_bytes(Type) / int(sizeof(T));  // elements along a swizzle row
  static constexpr int boxes = 64 / width;                                       // TMA boxes per stage
  TESSEL_HOST_DEVICE static constexpr auto layout() {                           // (MN,K)
    if constexpr (M == Major::K) return tile_to_shape(Atom{}, Shape<_64, _64>{});
    else return tile_to_shape(Atom{}, Shape<_64, _64>{}, Step<_2, _1>{});
  }
  static auto box() {  // one TMA box: (64, width) K-major, (width, 64) MN-major
    if constexpr (M == Major::K) return tile_to_shape(Atom{}, Shape<_64, Int<width>>{});
    else return tile_to_shape(Atom{}, Shape<Int<width>, _64>{});
  }
};

template <Major M, LayoutType Type>
using BoxAtom = Copy_Atom<Copy_Traits<SM90_TMA_LOAD, Int<64 * Stage<M, Type>::width * 16>>, T>;

// A (M,K) and B (N,K) row-major in global memory for the threads' copy; for TMA, each in its
// major-ness (K-major: row-major; MN-major: column-major), described by tma_a / tma_b.
// The warpgroup's 64 x 64 accumulators to row-major D through the atom's LayoutC_TV.
template <class Op>
__device__ void store_accumulators(float const (&d)[kN / 2], float* D, int tid) {
  typename MMA_Atom<Op>::LayoutC_TV c;  // (thread, value) -> m + 64 * n
  for (int i = 0; i < kN / 2; ++i) {
    int const mn = c(tid, i);
    D[(mn % kM) * kN + mn / kM] = d[i];
  }
}

template <Major MA, Major MB, LayoutType Type>
__global__ void __launch_bounds__(128)
    wgmma_64x64x64(T const* A, T const* B, float* D, int use_tma, int* desc_mismatches,
                   const __grid_constant__ BoxAtom<MA, Type> tma_a, const __grid_constant__ BoxAtom<MB, Type> tma_b) {
  using Op = SM90_64x64x16_F32BF16BF16_SS<trans_bit<MA>, trans_bit<MB>>;
  using SA = Stage<MA, Type>;
  using SB = Stage<MB, Type>;
  __shared__ alignas(1024) T smem_a[kM * kK];
  __shared__ alignas(1024) T smem_b[kN * kK];
  __shared__ alignas(8) std::uint64_t bar;
  int const tid = threadIdx.x;
  Tensor sA = make_tensor(make_smem_ptr(smem_a), SA::layout());  // (BLK_M,BLK_K)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), SB::layout());  // (BLK_N,BLK_K)

  if (use_tma) {
    if (tid == 0) {
      mbarrier_init(&bar, 1);
      mbarrier_init_fence();
    }
    __syncthreads();
    if (tid == 0) {
      mbarrier_arrive_expect_tx(&bar, std::uint32_t(2 * kM * kK * sizeof(T)));
      // Box j covers swizzle-row column j: coordinates (j * width, 0) in both majors.
      for (int j = 0; j < SA::boxes; ++j) tma_a.with(bar).copy(smem_a + j * 64 * SA::width, j * SA::width, 0);
      for (int j = 0; j < SB::boxes; ++j) tma_b.with(bar).copy(smem_b + j * 64 * SB::width, j * SB::width, 0);
    }
    mbarrier_wait(&bar, 0);
  } else {
    for (int e = tid; e < kM * kK; e += 128) {
      sA(e % kM, e / kM) = A[(e % kM) * kK + e / kM];
      sB(e % kN, e / kN) = B[(e % kN) * kK + e / kN];
    }
    fence_proxy_async_shared();  // the generic-proxy writes, visible to wgmma's async proxy
    __syncthreads();
  }

  auto mma = make_tiled_mma(MMA_Atom<Op>{});
  auto thr = mma.get_slice(tid);
  Tensor tCsA = thr.partition_A(sA);            // (MMA,MMA_M,MMA_K)
  Tensor tCsB = thr.partition_B(sB);            // (MMA,MMA_N,MMA_K)
  Tensor tCrA = thr.partition_fragment_A(sA);   // (_1,MMA_M,MMA_K) descriptors
  Tensor tCrB = thr.partition_fragment_B(sB);   // (_1,MMA_N,MMA_K)
  for (int kk = 0; kk < kK / 16; ++kk) {
    std::uint64_t const desc_a = GMMA::make_gmma_desc<MA>(tCsA(_, 0, kk));
    std::uint64_t const desc_b = GMMA::make_gmma_desc<MB>(tCsB(_, 0, kk));
    if (tCrA(0, 0, kk) != desc_a || tCrB(0, 0, kk) != desc_b) atomicAdd(desc_mismatches, 1);
    if constexpr (MA == Major::K && Type == LayoutType::B128) {
      if (desc_a != wgmma_desc_k_major_sw128(smem_a) + 2 * kk) atomicAdd(desc_mismatches, 1);
    }
  }
  float d[kN / 2];
  Tensor tCrC = make_tensor(&d[0], Layout<Shape<Int<kN / 2>, _1, _1>>{});  // (MMA,MMA_M,MMA_N)
  wgmma_fence_operand(d);
  wgmma_fence();
  mma.accumulate_ = GMMA::ScaleOut::Zero;  // d is not initialised: the first k-slice overwrites it
  for (int kk = 0; kk < kK / 16; ++kk) {
    gemm(mma, tCrA(_, _, kk), tCrB(_, _, kk), tCrC);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  wgmma_fence_operand(d);

  store_accumulators<Op>(d, D, tid);
}

// A from registers ("RS"): each thread loads its A values through the RS atom's LayoutA_TV from
// row-major global A, B sits in shared memory (128-byte swizzle, threads' stores) in its
// major-ness; four wgmma m64n64k16 with A in registers.
template <Major MB>
__global__ void __launch_bounds__(128) wgmma_rs_64x64x64(T const* A, T const* B, float* D) {
  using Op = SM90_64x64x16_F32BF16BF16_RS<trans_bit<MB>>;
  using SB = Stage<MB, LayoutType::B128>;
  __shared__ alignas(1024) T smem_b[kN * kK];
  int const tid = threadIdx.x;
  Tensor sB = make_tensor(make_smem_ptr(smem_b), SB::layout());  // (BLK_N,BLK_K)
  for (int e = tid; e < kN * kK; e += 128) sB(e % kN, e / kN) = B[(e % kN) * kK + e / kN];
  fence_proxy_async_shared();
  __syncthreads();

  auto mma = make_tiled_mma(MMA_Atom<Op>{});
  Tensor tCrB = mma.get_slice(tid).partition_fragment_B(sB);  // (_1,MMA_N,MMA_K) descriptors
  typename MMA_Atom<Op>::LayoutA_TV a_tv;                      // (thread, value) -> m + 64 * k
  std::uint32_t a[kK / 16][4];
  for (int kk = 0; kk < kK / 16; ++kk) {
    for (int r = 0; r < 4; ++r) {
      std::uint32_t two = 0;
      for (int h = 0; h < 2; ++h) {
        int const mk = a_tv(tid, 2 * r + h);
        two |= std::uint32_t(A[(mk % 64) * kK + 16 * kk + mk / 64].raw()) << (16 * h);
      }
      a[kk][r] = two;
    }
  }
  float d[kN / 2];
  Tensor tCrC = make_tensor(&d[0], Layout<Shape<Int<kN / 2>>>{});  // (MMA) one instruction's accumulators
  wgmma_fence_operand(d);
  wgmma_fence();
  mma.accumulate_ = GMMA::ScaleOut::Zero;
  for (int kk = 0; kk < kK / 16; ++kk) {
    Tensor tCrA = make_tensor(reinterpret_cast<T*>(&a[kk][0]), Layout<_8>{});  // (MMA) this thread's 8 values of A
    gemm(mma, tCrA, tCrB(_, 0, kk), tCrC);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  wgmma_fence_operand(d);

  store_accumulators<Op>(d, D, tid);
}

// B at any row of a taller operand (the halo window a direct convolution would form its taps from:
// tap (r, s) of a tile is the window's rows shifted by r * pitch + s). The window, kWindowRows x 64
// K-major in the 128-byte swizzle from a 1024-byte aligned base, is written by the threads through
// the layout; B is its rows [shift, shift + 64), read through wgmma_desc_k_major_sw128 of the
// window's base moved shift * 128 bytes on. base_offset_mode 0 leaves the descriptor's base offset
// 0, 1 sets it to bits 7-9 of the start address (the PTX ISA's rule for a pattern that does not
// start 1024-byte aligned). A is 64 x 64 K-major; D through the atom's LayoutC_TV. On the H200
// mode 0 reads every shift right (the unit swizzles by the absolute address: the window was
// written from a 1024-byte aligned base), mode 1 only the multiples of 8: the base offset is for a
// pattern that itself starts off the 1024-byte boundary, not for a start inside an aligned one.
constexpr int kWindowRows = 96;

__global__ void __launch_bounds__(128) wgmma_b_at_row(T const* A, T const* W, float* D, int shift, int base_offset_mode) {
  using Op = SM90_64x64x16_F32BF16BF16_SS<0, 0>;
  using Atom = GMMA::smem_atom<T, Major::K, LayoutType::B128>;
  __shared__ alignas(1024) T smem_a[kM * kK];
  __shared__ alignas(1024) T smem_w[kWindowRows * kK];
  int const tid = threadIdx.x;
  Tensor sA = make_tensor(make_smem_ptr(smem_a), tile_to_shape(Atom{}, Shape<_64, _64>{}));                     // (BLK_M,BLK_K)
  Tensor sW = make_tensor(make_smem_ptr(smem_w), tile_to_shape(Atom{}, Shape<Int<kWindowRows>, _64>{}));  // (ROWS,BLK_K)
  for (int e = tid; e < kM * kK; e += 128) sA(e / kK, e % kK) = A[e];
  for (int e = tid; e < kWindowRows * kK; e += 128) sW(e / kK, e % kK) = W[e];
  fence_proxy_async_shared();
  __syncthreads();

  std::uint64_t const desc_a = wgmma_desc_k_major_sw128(smem_a);
  std::uint64_t desc_b = wgmma_desc_advance(wgmma_desc_k_major_sw128(smem_w), std::uint32_t(shift) * 8);  // 128 bytes a row
  if (base_offset_mode == 1) {
    std::uint32_t const start = std::uint32_t(desc_b & 0x3FFF) << 4;
    desc_b |= std::uint64_t((start >> 7) & 7u) << 49;
  }
  float d[kN / 2];
  wgmma_fence_operand(d);
  wgmma_fence();
  for (int kk = 0; kk < kK / 16; ++kk)  // a 16-deep slice is 32 bytes along the swizzled row
    Op::fma(wgmma_desc_advance(desc_a, 2 * kk), wgmma_desc_advance(desc_b, 2 * kk), d, kk > 0);
  wgmma_commit_group();
  wgmma_wait_group<0>();
  wgmma_fence_operand(d);
  store_accumulators<Op>(d, D, tid);
}

// A 2-CTA cluster: CTA r loads rows [32r, 32r+32) of a 64 x 64 K-major 128-byte-swizzled tile and
// multicasts them to both CTAs; then each CTA TMA-stores the whole tile from its own shared
// memory to its own output. Both outputs must equal the input, bit for bit.
using HalfLoad = Copy_Atom<Copy_Traits<SM90_TMA_LOAD_MULTICAST, Int<32 * 64 * 16>>, T>;
using TileStore = Copy_Atom<Copy_Traits<SM90_TMA_STORE, Int<64 * 64 * 16>>, T>;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
    multicast_then_store(const __grid_constant__ HalfLoad load, const __grid_constant__ TileStore store0,
                         const __grid_constant__ TileStore store1) {
  __shared__ alignas(1024) T smem[64 * 64];
  __shared__ alignas(8) std::uint64_t bar;
  int const tid = threadIdx.x;
  std::uint32_t const rank = cluster_cta_rank();
  if (tid == 0) {
    mbarrier_init(&bar, 1);
    mbarrier_init_fence();
  }
  cluster_sync();  // both CTAs' barriers are initialised before a multicast reaches them
  if (tid == 0) {
    mbarrier_arrive_expect_tx(&bar, 64 * 64 * sizeof(T));  // both halves land here
    load.with(bar, std::uint16_t(0b11)).copy(smem + rank * 32 * 64, 0, int(32 * rank));  // (k, m)
  }
  mbarrier_wait(&bar, 0);
  if (tid == 0) {
    (rank == 0 ? store0 : store1).copy(smem, 0, 0);
    tma_store_commit();
    tma_store_wait<0>();
  }
  cluster_sync();
}

bool device_is_sm90() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major == 9 && minor == 0;
}

// D = A B^T in fp64 for row-major A (M,K) and B (N,K), with the sum of |products| per element;
// check() fails on the first five elements of `out` off by more than 1e-5 of that sum (+1e-6).
struct Reference {
  std::vector<double> d, mag;
  Reference(std::vector<T> const& a, std::vector<T> const& b) : d(kM * kN, 0.0), mag(kM * kN, 0.0) {
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n)
        for (int k = 0; k < kK; ++k) {
          double const p = double(float(a[m * kK + k])) * double(float(b[n * kK + k]));
          d[m * kN + n] += p;
          mag[m * kN + n] += std::fabs(p);
        }
  }
  void check(std::vector<float> const& out) const {
    int bad = 0;
    for (int e = 0; e < kM * kN && bad < 5; ++e) {
      if (!(std::fabs(double(out[e]) - d[e]) <= 1e-5 * mag[e] + 1e-6)) {
        ADD_FAILURE() << "D(" << e / kN << "," << e % kN << ") = " << out[e] << ", reference " << d[e];
        ++bad;
      }
    }
  }
};

template <Major MA, Major MB, LayoutType Type>
void run_case() {
  SCOPED_TRACE(std::string("A ") + (MA == Major::K ? "K" : "MN") + "-major, B " + (MB == Major::K ? "K" : "MN") +
               "-major, swizzle " + std::to_string(GMMA::layout_type_bytes(Type)) + " bytes");
  std::mt19937 rng(1234 + int(Type) * 7 + int(MA) * 3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<T> a(kM * kK), b(kN * kK);  // row-major (M,K) and (N,K)
  for (auto& x : a) x = T(dist(rng));
  for (auto& x : b) x = T(dist(rng));
  // The same data in each operand's major-ness, for TMA.
  std::vector<T> a_tma(a.size()), b_tma(b.size());
  for (int r = 0; r < 64; ++r)
    for (int k = 0; k < kK; ++k) {
      a_tma[MA == Major::K ? r * kK + k : k * kM + r] = a[r * kK + k];
      b_tma[MB == Major::K ? r * kK + k : k * kN + r] = b[r * kK + k];
    }
  Reference const ref(a, b);

  T *dA = nullptr, *dB = nullptr, *dA_tma = nullptr, *dB_tma = nullptr;
  float* dD = nullptr;
  int* dMismatch = nullptr;
  TESSEL_CUDA_OK(cudaMalloc(&dA, a.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dB, b.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dA_tma, a.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dB_tma, b.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dD, kM * kN * sizeof(float)));
  TESSEL_CUDA_OK(cudaMalloc(&dMismatch, sizeof(int)));
  TESSEL_CUDA_OK(cudaMemcpy(dA, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dB, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dA_tma, a_tma.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dB_tma, b_tma.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));

  // Global tensors in their major-ness: (M,K):(64,1) K-major, (M,K):(1,64) MN-major.
  auto global = [](T const* p, Major m) {
    return make_tensor(make_gmem_ptr(p), make_shape(64, 64), m == Major::K ? make_stride(64, 1) : make_stride(1, 64));
  };
  auto tma_a = make_tma_copy(SM90_TMA_LOAD{}, global(dA_tma, MA), Stage<MA, Type>::box());
  auto tma_b = make_tma_copy(SM90_TMA_LOAD{}, global(dB_tma, MB), Stage<MB, Type>::box());
  ASSERT_TRUE(tma_a.status.ok()) << tma_a.status.reason;
  ASSERT_TRUE(tma_b.status.ok()) << tma_b.status.reason;
  EXPECT_EQ(tma_a.args.mode_of_dim[0], MA == Major::K ? 1 : 0);  // the contiguous mode is dimension 0
  EXPECT_EQ(tma_a.args.box_bytes * (Stage<MA, Type>::boxes), unsigned(kM * kK * sizeof(T)));

  for (int use_tma = 0; use_tma < 2; ++use_tma) {
    SCOPED_TRACE(use_tma ? "TMA loads" : "threads' stores");
    std::vector<float> out(kM * kN);
    TESSEL_CUDA_OK(cudaMemset(dD, 0xFF, kM * kN * sizeof(float)));  // NaN
    TESSEL_CUDA_OK(cudaMemset(dMismatch, 0, sizeof(int)));
    wgmma_64x64x64<MA, MB, Type><<<1, 128>>>(dA, dB, dD, use_tma, dMismatch, tma_a.atom, tma_b.atom);
    TESSEL_CUDA_OK(cudaGetLastError());
    TESSEL_CUDA_OK(cudaDeviceSynchronize());
    TESSEL_CUDA_OK(cudaMemcpy(out.data(), dD, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int mismatches = -1;
    TESSEL_CUDA_OK(cudaMemcpy(&mismatches, dMismatch, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT_EQ(mismatches, 0) << "a descriptor fragment differs from make_gmma_desc, or make_gmma_desc from wgmma_desc_k_major_sw128";
    ref.check(out);
  }
  cudaFree(dA), cudaFree(dB), cudaFree(dA_tma), cudaFree(dB_tma), cudaFree(dD), cudaFree(dMismatch);
}

template <Major MB>
void run_rs_case() {
  SCOPED_TRACE(std::string("A from registers, B ") + (MB == Major::K ? "K" : "MN") + "-major");
  std::mt19937 rng(4321 + int(MB));
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<T> a(kM * kK), b(kN * kK);  // row-major (M,K) and (N,K)
  for (auto& x : a) x = T(dist(rng));
  for (auto& x : b) x = T(dist(rng));
  Reference const ref(a, b);
  T *dA = nullptr, *dB = nullptr;
  float* dD = nullptr;
  TESSEL_CUDA_OK(cudaMalloc(&dA, a.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dB, b.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dD, kM * kN * sizeof(float)));
  TESSEL_CUDA_OK(cudaMemcpy(dA, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dB, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemset(dD, 0xFF, kM * kN * sizeof(float)));  // NaN
  wgmma_rs_64x64x64<MB><<<1, 128>>>(dA, dB, dD);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> out(kM * kN);
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), dD, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ref.check(out);
  cudaFree(dA), cudaFree(dB), cudaFree(dD);
}

// Which descriptor reads rows [shift, shift + 64) of the window: for every shift 0..32, each base
// offset mode's D against the fp64 product; *right: the shifts it got right.
void b_at_row_case(int base_offset_mode, std::vector<int>* right) {
  std::mt19937 rng(777);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<T> a(kM * kK), w(kWindowRows * kK);  // row-major (M,K) and (rows,K)
  for (auto& x : a) x = T(dist(rng));
  for (auto& x : w) x = T(dist(rng));
  T *dA = nullptr, *dW = nullptr;
  float* dD = nullptr;
  TESSEL_CUDA_OK(cudaMalloc(&dA, a.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dW, w.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dD, kM * kN * sizeof(float)));
  TESSEL_CUDA_OK(cudaMemcpy(dA, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemcpy(dW, w.data(), w.size() * sizeof(T), cudaMemcpyHostToDevice));
  right->clear();
  for (int shift = 0; shift + kN <= kWindowRows; ++shift) {
    std::vector<T> b(w.begin() + shift * kK, w.begin() + (shift + kN) * kK);
    Reference const ref(a, b);
    TESSEL_CUDA_OK(cudaMemset(dD, 0xFF, kM * kN * sizeof(float)));  // NaN
    wgmma_b_at_row<<<1, 128>>>(dA, dW, dD, shift, base_offset_mode);
    TESSEL_CUDA_OK(cudaGetLastError());
    TESSEL_CUDA_OK(cudaDeviceSynchronize());
    std::vector<float> out(kM * kN);
    TESSEL_CUDA_OK(cudaMemcpy(out.data(), dD, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int e = 0; e < kM * kN && ok; ++e) ok = std::fabs(double(out[e]) - ref.d[e]) <= 1e-5 * ref.mag[e] + 1e-6;
    if (ok) right->push_back(shift);
  }
  cudaFree(dA), cudaFree(dW), cudaFree(dD);
}

}  // namespace

class Sm90Atoms : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSEL_REQUIRE_GPU();
    if (!device_is_sm90()) GTEST_SKIP() << "wgmma needs an sm_90 GPU (H100/H200); this test has an sm_90a image only";
  }
};

TEST_F(Sm90Atoms, KMajorAMnMajorB) {
  run_case<Major::K, Major::MN, LayoutType::INTERLEAVE>();
  run_case<Major::K, Major::MN, LayoutType::B32>();
  run_case<Major::K, Major::MN, LayoutType::B64>();
  run_case<Major::K, Major::MN, LayoutType::B128>();
}

TEST_F(Sm90Atoms, RegisterAOperand) {
  run_rs_case<Major::MN>();
  run_rs_case<Major::K>();
}

TEST_F(Sm90Atoms, MnMajorAKMajorB) {
  run_case<Major::MN, Major::K, LayoutType::INTERLEAVE>();
  run_case<Major::MN, Major::K, LayoutType::B32>();
  run_case<Major::MN, Major::K, LayoutType::B64>();
  run_case<Major::MN, Major::K, LayoutType::B128>();
}

TEST_F(Sm90Atoms, MulticastLoadAndStore) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<T> src(64 * 64);
  for (auto& x : src) x = T(dist(rng));
  T *dSrc = nullptr, *dOut = nullptr;
  TESSEL_CUDA_OK(cudaMalloc(&dSrc, src.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMalloc(&dOut, 2 * src.size() * sizeof(T)));
  TESSEL_CUDA_OK(cudaMemcpy(dSrc, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemset(dOut, 0xFF, 2 * src.size() * sizeof(T)));
  auto tile = [](T const* p) { return make_tensor(make_gmem_ptr(p), make_shape(64, 64), make_stride(64, _1{})); };  // (M,K)
  auto half = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_32, _64>{});  // one CTA's rows
  auto full = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{});
  auto load = make_tma_copy(SM90_TMA_LOAD_MULTICAST{}, tile(dSrc), half);
  auto store0 = make_tma_copy(SM90_TMA_STORE{}, tile(dOut), full);
  auto store1 = make_tma_copy(SM90_TMA_STORE{}, tile(dOut + 64 * 64), full);
  ASSERT_TRUE(load.status.ok()) << load.status.reason;
  ASSERT_TRUE(store0.status.ok()) << store0.status.reason;
  ASSERT_TRUE(store1.status.ok()) << store1.status.reason;
  multicast_then_store<<<2, 128>>>(load.atom, store0.atom, store1.atom);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<T> out(2 * src.size());
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), dOut, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int c = 0; c < 2; ++c)
    for (int e = 0; e < 64 * 64 && bad < 5; ++e)
      if (std::memcmp(&out[c * 64 * 64 + e], &src[e], sizeof(T)) != 0) {
        ADD_FAILURE() << "CTA " << c << ": element (" << e / 64 << "," << e % 64 << ") = " << float(out[c * 64 * 64 + e])
                      << ", input " << float(src[e]);
        ++bad;
      }
  cudaFree(dSrc), cudaFree(dOut);
}

TEST_F(Sm90Atoms, BOperandAtAnyRow) {
  std::vector<int> every;
  for (int shift = 0; shift + kN <= kWindowRows; ++shift) every.push_back(shift);
  std::vector<int> zero, set;
  b_at_row_case(0, &zero);
  b_at_row_case(1, &set);
  auto text = [](std::vector<int> const& v) {
    std::string out;
    for (int x : v) out += std::to_string(x) + " ";
    return out;
  };
  std::printf("base offset 0 reads the rows right at shifts: %s\nbase offset (start >> 7) & 7 at: %s\n", text(zero).c_str(),
              text(set).c_str());
  EXPECT_EQ(text(zero), text(every)) << "a descriptor moved by whole rows, base offset 0";
}
