// Every copy atom on the GPU against a scalar reference: ldmatrix (x1/x2/x4, plain and .trans)
// and stmatrix checked element by element against the PTX ISA's description, cp.async (.ca,
// .cg, zero-fill with predicates) and the vectorized copies moving seed 001's tiles. Outputs are
// poisoned before every run.
#include "gpu/gpu_test.hpp"

#include <tessel/tensor.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace tessel;

namespace {

// ---- ldmatrix / stmatrix ---------------------------------------------------------------------
// 4 matrices of 8x8 b16 in shared memory; element e (matrix e/64, row e%64/8, column e%8)
// holds the bits e.

// Each thread gives the address its atom's source layout names and writes back what it received.
template <class Op>
__global__ void ldsm_kernel(std::uint16_t* out) {
  using Atom = Copy_Atom<Op, half_t>;
  __shared__ alignas(128) half_t smem[256];
  int const t = threadIdx.x;
  for (int e = t; e < 256; e += 32) smem[e] = half_t::bitcast(std::uint16_t(e));
  __syncthreads();
  int const row = int(typename Atom::ValLayoutSrc{}(t, 0));
  Tensor src = make_tensor(make_smem_ptr(smem + row), Layout<Shape<Int<Atom::NumValSrc>>>{});
  Tensor dst = make_tensor<half_t>(Shape<Int<Atom::NumValDst>>{});
  Atom{}.call(src, dst);
  for (int v = 0; v < Atom::NumValDst; ++v) out[t * Atom::NumValDst + v] = dst(v).raw();
}

__global__ void stsm_kernel(std::uint16_t* out) {
  using Atom = Copy_Atom<SM90_U32x4_STSM_N, half_t>;
  __shared__ alignas(128) half_t smem[256];
  int const t = threadIdx.x;
  for (int e = t; e < 256; e += 32) smem[e] = half_t::bitcast(0xffff);
  __syncthreads();
  // Register j, half h of thread t holds row t/4, column 2*(t%4)+h of matrix j.
  Tensor src = make_tensor<half_t>(Shape<Int<Atom::NumValSrc>>{});
  for (int v = 0; v < Atom::NumValSrc; ++v) {
    int const j = v / 2, h = v % 2;
    src(v) = half_t::bitcast(std::uint16_t(j * 64 + (t / 4) * 8 + 2 * (t % 4) + h));
  }
  int const row = int(typename Atom::ValLayoutDst{}(t, 0));
  Tensor dst = make_tensor(make_smem_ptr(smem + row), Layout<Shape<Int<Atom::NumValDst>>>{});
  Atom{}.call(src, dst);
  __syncthreads();
  for (int e = t; e < 256; e += 32) out[e] = smem[e].raw();
}

int n_reg_element(int t, int v) { return (v / 2) * 64 + (t / 4) * 8 + 2 * (t % 4) + v % 2; }
int t_reg_element(int t, int v) { return (v / 2) * 64 + (2 * (t % 4) + v % 2) * 8 + t / 4; }

template <class Op>
void run_ldsm(char const* name, bool trans) {
  SCOPED_TRACE(name);
  constexpr int n = Copy_Atom<Op, half_t>::NumValDst;
  std::uint16_t* d_out;
  TESSEL_CUDA_OK(cudaMalloc(&d_out, 32 * n * sizeof(std::uint16_t)));
  TESSEL_CUDA_OK(cudaMemset(d_out, 0xff, 32 * n * sizeof(std::uint16_t)));
  ldsm_kernel<Op><<<1, 32>>>(d_out);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> out(32 * n);
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  cudaFree(d_out);
  typename Copy_Atom<Op, half_t>::ValLayoutDst dst_layout;
  for (int t = 0; t < 32; ++t) {
    for (int v = 0; v < n; ++v) {
      int const want = trans ? t_reg_element(t, v) : n_reg_element(t, v);
      ASSERT_EQ(out[t * n + v], want) << "thread " << t << " value " << v;
      ASSERT_EQ(out[t * n + v], int(dst_layout(t, v))) << "the atom's ValLayoutDst disagrees, thread " << t;
    }
  }
}

}  // namespace

TEST(CopyAtomsGpu, LdmatrixDeliversThePtxFragments) {
  TESSEL_REQUIRE_GPU();
  run_ldsm<SM75_U32x1_LDSM_N>("SM75_U32x1_LDSM_N", false);
  run_ldsm<SM75_U32x2_LDSM_N>("SM75_U32x2_LDSM_N", false);
  run_ldsm<SM75_U32x4_LDSM_N>("SM75_U32x4_LDSM_N", false);
  run_ldsm<SM75_U16x2_LDSM_T>("SM75_U16x2_LDSM_T", true);
  run_ldsm<SM75_U16x4_LDSM_T>("SM75_U16x4_LDSM_T", true);
  run_ldsm<SM75_U16x8_LDSM_T>("SM75_U16x8_LDSM_T", true);
}

TEST(CopyAtomsGpu, StmatrixStoresThePtxFragments) {
  TESSEL_REQUIRE_GPU();
  cudaDeviceProp prop{};
  TESSEL_CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) GTEST_SKIP() << "stmatrix needs sm_90; this GPU is sm_" << prop.major << prop.minor;
  std::uint16_t* d_out;
  TESSEL_CUDA_OK(cudaMalloc(&d_out, 256 * sizeof(std::uint16_t)));
  TESSEL_CUDA_OK(cudaMemset(d_out, 0xff, 256 * sizeof(std::uint16_t)));
  stsm_kernel<<<1, 32>>>(d_out);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> out(256);
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  cudaFree(d_out);
  for (int e = 0; e < 256; ++e) ASSERT_EQ(out[e], e) << "shared-memory element " << e;
}

// ---- tiles through shared memory: seed 001's 64x128 Q tile, ragged, with predicates ------------
namespace {

// The tile (tile_row, 0) of a rows x 128 row-major half_t matrix with leading dimension ld goes
// gmem -> smem with `Load` (a TiledCopy of 8x16 threads x 8 values), then smem -> out (64x128
// row-major) with seed 001's AutoVectorizing TiledCopy. Rows past `rows` are predicated: a
// zero-fill atom writes zeros there, any other atom leaves the smem sentinel (-7).
template <class LoadOp, bool Predicated>
__global__ void tile_kernel(half_t const* q, int rows, int ld, int tile_row, half_t* out) {
  __shared__ alignas(128) half_t smem[64 * 128];
  int const tid = threadIdx.x;
  for (int i = tid; i < 64 * 128; i += 128) smem[i] = half_t(-7.0f);
  __syncthreads();

  Tensor mQ = make_tensor(make_gmem_ptr(q), make_shape(rows, 128), make_stride(ld, _1{}));       // (ROWS,128)
  Tensor gQ = local_tile(mQ, Shape<_64, _128>{}, make_coord(tile_row, 0));                        // (64,128)
  Tensor sQ = make_tensor(make_smem_ptr(smem), make_layout(Shape<_64, _128>{}, GenRowMajor{}));   // (64,128)
  Tensor gO = make_tensor(make_gmem_ptr(out), make_layout(Shape<_64, _128>{}, GenRowMajor{}));    // (64,128)

  auto thr_layout = make_layout(Shape<_8, _16>{}, GenRowMajor{});
  auto val_layout = make_layout(Shape<_1, _8>{}, GenRowMajor{});
  auto load = make_tiled_copy(Copy_Atom<LoadOp, half_t>{}, thr_layout, val_layout);
  auto store = make_tiled_copy(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<128>, half_t>{}, thr_layout, val_layout);
  auto thr_load = load.get_slice(tid);
  Tensor tQgQ = thr_load.partition_S(gQ);  // (CPY,CPY_M,CPY_N)
  Tensor tQsQ = thr_load.partition_D(sQ);
  if constexpr (Predicated) {
    Tensor cQ = make_identity_tensor(shape(mQ));                               // (ROWS,128) -> (m,n)
    Tensor tQcQ = thr_load.partition_S(local_tile(cQ, Shape<_64, _128>{}, make_coord(tile_row, 0)));
    Tensor tQpQ = make_tensor<bool>(make_shape(size<1>(tQcQ), size<2>(tQcQ)));  // (CPY_M,CPY_N)
    for (int m = 0; m < size<0>(tQpQ); ++m) {
      for (int n = 0; n < size<1>(tQpQ); ++n) tQpQ(m, n) = elem_less(tQcQ(0, m, n), shape(mQ));
    }
    copy_if(load, tQpQ, tQgQ, tQsQ);
  } else {
    copy(load, tQgQ, tQsQ);
  }
  cp_async_fence();
  cp_async_wait<0>();
  __syncthreads();
  auto thr_store = store.get_slice(tid);
  copy(store, thr_store.partition_S(sQ), thr_store.partition_D(gO));
}

template <class LoadOp, bool Predicated>
void run_tile(char const* name, int rows, int tile_row, bool zero_fill) {
  SCOPED_TRACE(name);
  int const ld = 136;  // a padded leading dimension (multiple of 8 half_t = 16 bytes)
  // Allocate whole tiles so the predicated-off addresses stay inside the allocation; they hold a
  // poison (1000) that must never arrive.
  int const alloc_rows = (tile_row + 1) * 64;
  std::vector<half_t> q(std::size_t(alloc_rows) * ld, half_t(1000.0f));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  for (int r = 0; r < rows && r < alloc_rows; ++r)
    for (int c = 0; c < 128; ++c) q[std::size_t(r) * ld + c] = half_t(dist(rng));
  half_t *d_q, *d_out;
  TESSEL_CUDA_OK(cudaMalloc(&d_q, q.size() * sizeof(half_t)));
  TESSEL_CUDA_OK(cudaMalloc(&d_out, 64 * 128 * sizeof(half_t)));
  TESSEL_CUDA_OK(cudaMemcpy(d_q, q.data(), q.size() * sizeof(half_t), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemset(d_out, 0xff, 64 * 128 * sizeof(half_t)));  // poison: NaN
  tile_kernel<LoadOp, Predicated><<<1, 128>>>(d_q, rows, ld, tile_row, d_out);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<half_t> out(64 * 128);
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(half_t), cudaMemcpyDeviceToHost));
  cudaFree(d_q), cudaFree(d_out);
  for (int r = 0; r < 64; ++r) {
    int const gr = tile_row * 64 + r;
    for (int c = 0; c < 128; ++c) {
      std::uint16_t got = out[r * 128 + c].raw();
      std::uint16_t want = gr < rows ? q[std::size_t(gr) * ld + c].raw()
                                     : (zero_fill ? half_t(0.0f).raw() : half_t(-7.0f).raw());
      ASSERT_EQ(got, want) << "element (" << r << "," << c << ") of tile row " << tile_row;
    }
  }
}

// 16x32 float tile through cp.async.cg (16 bytes = 4 floats per thread and copy).
__global__ void cg_kernel(float const* in, float* out) {
  __shared__ alignas(128) float smem[16 * 32];
  int const tid = threadIdx.x;
  Tensor gI = make_tensor(make_gmem_ptr(in), make_layout(Shape<_16, _32>{}, GenRowMajor{}));
  Tensor sI = make_tensor(make_smem_ptr(smem), make_layout(Shape<_16, _32>{}, GenRowMajor{}));
  Tensor gO = make_tensor(make_gmem_ptr(out), make_layout(Shape<_16, _32>{}, GenRowMajor{}));
  auto load = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{},
                              make_layout(Shape<_16, _8>{}, GenRowMajor{}), make_layout(Shape<_1, _4>{}));
  auto store = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                               make_layout(Shape<_16, _8>{}, GenRowMajor{}), make_layout(Shape<_1, _4>{}));
  auto tl = load.get_slice(tid);
  copy(load, tl.partition_S(gI), tl.partition_D(sI));
  cp_async_fence();
  cp_async_wait<0>();
  __syncthreads();
  auto ts = store.get_slice(tid);
  copy(store, ts.partition_S(sI), ts.partition_D(gO));
}

}  // namespace

TEST(CopyAtomsGpu, CpAsyncAndVectorCopiesMoveTheSeedTile) {
  TESSEL_REQUIRE_GPU();
  run_tile<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, false>("cp.async.ca, whole tile", 256, 2, false);
  run_tile<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, false>("cp.async.cg, whole tile", 256, 1, false);
  run_tile<UniversalCopy<uint128_t>, false>("UniversalCopy<uint128_t>, whole tile", 128, 1, false);
  run_tile<AutoVectorizingCopyWithAssumedAlignment<128>, false>("AutoVectorizing<128>, whole tile", 64, 0, false);
}

TEST(CopyAtomsGpu, PredicatedCopiesZeroFillOrSkip) {
  TESSEL_REQUIRE_GPU();
  // 100 rows: tile row 1 holds rows 64..127, of which 100..127 are outside the matrix.
  run_tile<SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>, true>("cp.async.ca zfill", 100, 1, true);
  run_tile<SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>, true>("cp.async.cg zfill", 100, 1, true);
  run_tile<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, true>("cp.async.ca, predicated (skips)", 100, 1, false);
  run_tile<UniversalCopy<uint128_t>, true>("UniversalCopy, predicated (skips)", 77, 1, false);
}

TEST(CopyAtomsGpu, CpAsyncCacheGlobalFloats) {
  TESSEL_REQUIRE_GPU();
  std::vector<float> in(16 * 32);
  for (int i = 0; i < 16 * 32; ++i) in[i] = float(i) * 0.25f - 17.f;
  float *d_in, *d_out;
  TESSEL_CUDA_OK(cudaMalloc(&d_in, in.size() * sizeof(float)));
  TESSEL_CUDA_OK(cudaMalloc(&d_out, in.size() * sizeof(float)));
  TESSEL_CUDA_OK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  TESSEL_CUDA_OK(cudaMemset(d_out, 0xff, in.size() * sizeof(float)));
  cg_kernel<<<1, 128>>>(d_in, d_out);
  TESSEL_CUDA_OK(cudaGetLastError());
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> out(in.size());
  TESSEL_CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(d_in), cudaFree(d_out);
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i]) << "element " << i;
}
