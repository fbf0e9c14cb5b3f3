// tessel/gemm/kernel/tensor_simt_gemm.hpp -- seed 004's gemm_device, written with tessel's tensors:
// the library's generic fp32 path (any strides, any shape).
//
//   mA (M,K), mB (N,K), mC/mD (M,N) with run-time strides  ->  local_tile by the CTA tiler
//   -> local_partition by thread layouts: tA/tB for the global -> shared copies (cp.async,
//   one element each, zero-filled outside the matrix), tC for the FFMAs (rows of sA, columns of
//   sB, a THR_M x THR_N block of accumulators) -> axpby epilogue, predicated on the edges.
//
// Correct for every problem the host API accepts (strides are run-time values, so each copy is
// a single element); the fast fp32 paths are simt_gemm.hpp and simt_gemm_cp_async.hpp. Tensor
// names: docs/glossary.md.
#pragma once

#include <tessel/arch/sm80_copy_cp_async.hpp>
#include <tessel/gemm/kernel/simt_gemm_params.hpp>
#include <tessel/tensor.hpp>

#include <cstdint>

namespace tessel::kernel {

// Strides of the four operands in seed 004's convention (B as N x K), 64-bit.
struct TensorGemmStrides {
  std::int64_t a_m, a_k, b_n, b_k, c_m, c_n, d_m, d_n;
};

// One CTA computes the BLK_M x BLK_N tile (blockIdx.x, blockIdx.y) of batch blockIdx.z (+ multiples of gridDim.z).
template <class CtaTiler, class ASmemLayout, class AThreadLayout, class BSmemLayout, class BThreadLayout,
          class CThreadLayout>
__global__ __launch_bounds__(decltype(size(CThreadLayout{}))::value) void tensor_simt_gemm_kernel(
    SimtGemmParams p, TensorGemmStrides st, CtaTiler cta_tiler, ASmemLayout sA_layout, AThreadLayout tA,
    BSmemLayout sB_layout, BThreadLayout tB, CThreadLayout tC) {
  static_assert(is_static_v<AThreadLayout> && is_static_v<BThreadLayout> && is_static_v<CThreadLayout>,
                "tensor_simt_gemm: the thread layouts must be static; use Int<N> extents");
  static_assert(is_static_v<ASmemLayout> && is_static_v<BSmemLayout>,
                "tensor_simt_gemm: the shared-memory layouts must be static; use Int<N> extents");
  static_assert(size(AThreadLayout{}) == size(CThreadLayout{}) && size(BThreadLayout{}) == size(CThreadLayout{}),
                "tensor_simt_gemm: tA, tB and tC must have one entry per thread of the CTA");

  __shared__ float smemA[decltype(cosize(sA_layout))::value];
  __shared__ float smemB[decltype(cosize(sB_layout))::value];
  Tensor sA = make_tensor(make_smem_ptr(smemA), sA_layout);  // (BLK_M,BLK_K)
  Tensor sB = make_tensor(make_smem_ptr(smemB), sB_layout);  // (BLK_N,BLK_K)
  int const tid = int(threadIdx.x);
  auto cta_coord = make_coord(std::int64_t(blockIdx.x), std::int64_t(blockIdx.y), _);  // (m,n,k)
  auto shape_mnk = make_shape(p.m, p.n, p.k);
  auto zfill = Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS_ZFILL<float>, float>{};
  // One atom execution per element: (1,THR_X,THR_K) views of the copy partitions.
  auto per_element = [](auto const& t) { return make_tensor(t.data(), prepend(t.layout(), Layout<_1, _0>{})); };

  for (std::int64_t batch = blockIdx.z; batch < p.batch; batch += gridDim.z) {
    float const* A = static_cast<float const*>(p.a) + batch * p.batch_stride_a;
    float const* B = static_cast<float const*>(p.b) + batch * p.batch_stride_b;
    float const* C = static_cast<float const*>(p.c) + batch * p.batch_stride_c;
    float* D = static_cast<float*>(p.d) + batch * p.batch_stride_d;
    Tensor mA = make_tensor(make_gmem_ptr(A), select<0, 2>(shape_mnk), make_stride(st.a_m, st.a_k));  // (M,K)
    Tensor mB = make_tensor(make_gmem_ptr(B), select<1, 2>(shape_mnk), make_stride(st.b_n, st.b_k));  // (N,K)
    Tensor mC = make_tensor(make_gmem_ptr(C), select<0, 1>(shape_mnk), make_stride(st.c_m, st.c_n));  // (M,N)
    Tensor mD = make_tensor(make_gmem_ptr(D), select<0, 1>(shape_mnk), make_stride(st.d_m, st.d_n));  // (M,N)
    Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BLK_M,BLK_K,k)
    Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BLK_N,BLK_K,k)
    Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BLK_M,BLK_N)
    Tensor gD = local_tile(mD, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BLK_M,BLK_N)

    // Copy partitions and the coordinates they hold (for the edge predicates).
    Tensor tAgA = local_partition(gA, tA, tid);  // (THR_M,THR_K,k)
    Tensor tAsA = local_partition(sA, tA, tid);  // (THR_M,THR_K)
    Tensor tBgB = local_partition(gB, tB, tid);  // (THR_N,THR_K,k)
    Tensor tBsB = local_partition(sB, tB, tid);  // (THR_N,THR_K)
    Tensor tAcA = local_partition(local_tile(make_identity_tensor(shape(mA)), cta_tiler, cta_coord, Step<_1, X, _1>{}), tA, tid);  // (THR_M,THR_K,k)
    Tensor tBcB = local_partition(local_tile(make_identity_tensor(shape(mB)), cta_tiler, cta_coord, Step<X, _1, _1>{}), tB, tid);  // (THR_N,THR_K,k)

    // Compute partitions: rows of tC over sA, its columns over sB, all of it over C and D.
    Tensor tCsA = local_partition(sA, tC, tid, Step<_1, X>{});   // (THR_M,BLK_K)
    Tensor tCsB = local_partition(sB, tC, tid, Step<X, _1>{});   // (THR_N,BLK_K)
    Tensor tCgC = local_partition(gC, tC, tid, Step<_1, _1>{});  // (THR_M,THR_N)
    Tensor tCgD = local_partition(gD, tC, tid, Step<_1, _1>{});  // (THR_M,THR_N)
    Tensor tCcD = local_partition(local_tile(make_identity_tensor(shape(mD)), cta_tiler, cta_coord, Step<_1, _1, X>{}), tC, tid, Step<_1, _1>{});  // (THR_M,THR_N)
    Tensor tCrC = make_tensor_like(tCgD);  // (THR_M,THR_N) accumulators
    clear(tCrC);

    std::int64_t const k_tiles = size<2>(tAgA);
    for (std::int64_t k_tile = 0; k_tile < k_tiles; ++k_tile) {
      Tensor tAcAk = tAcA(_, _, k_tile);
      Tensor tBcBk = tBcB(_, _, k_tile);
      copy_if(zfill, [&](int i) { return elem_less(tAcAk(i), shape(mA)); }, per_element(tAgA(_, _, k_tile)), per_element(tAsA));
      copy_if(zfill, [&](int i) { return elem_less(tBcBk(i), shape(mB)); }, per_element(tBgB(_, _, k_tile)), per_element(tBsB));
      cp_async_fence();        // the end of this k-tile's copies
      cp_async_wait<0>();      // this thread's copies have landed
      __syncthreads();         // everyone's have
      gemm(tCsA, tCsB, tCrC);  // (THR_M,THR_N) += (THR_M,BLK_K) * (THR_N,BLK_K)
      __syncthreads();         // done reading sA, sB
    }

    // Epilogue: tCrD = C (only when beta != 0: C is not read otherwise), alpha * tCrC + beta * tCrD, -> D.
    auto inside = [&](int i) { return elem_less(tCcD(i), shape(mD)); };
    Tensor tCrD = make_tensor_like(tCrC);  // (THR_M,THR_N)
    clear(tCrD);
    if (p.beta != 0.0f) copy_if(inside, tCgC, tCrD);
    axpby(p.alpha, tCrC, p.beta, tCrD);
    copy_if(inside, tCrD, tCgD);
  }
}

}  // namespace tessel::kernel
