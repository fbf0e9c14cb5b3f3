// bench/simt_tiles.cu -- tuning: the library's SIMT GEMM kernel under several CTA/warp tilings,
// fp32, timed against cuBLAS SGEMM in the same process (interleaved, rotated inputs, medians).
//
//   bench_simt_tiles [--m 4096 --n 4096 --k 4096] [--iters 20]
//
// Each variant is tessel/gemm/kernel/simt_gemm.hpp with another SimtTile; the registry keeps
// the winner (src/gemm/simt_launch.cuh). D is row-major; operand orders: both K-contiguous
// (BLAS tn), A K- and B N-contiguous (row-major nn), both M/N-contiguous.
#include <tessel/gemm/kernel/simt_gemm.hpp>
#include <tessel/gemm/kernel/simt_gemm_cp_async.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tessel::kernel;

namespace {

struct Variant {
  char const* name;
  void (*launch)(SimtGemmParams, cudaStream_t);
  int regs, local;
};

template <class Tile>
dim3 grid_of(SimtGemmParams& p) {
  p.tiles_m = int((p.m + Tile::BM - 1) / Tile::BM);
  p.tiles_n = int((p.n + Tile::BN - 1) / Tile::BN);
  p.raster_order = tessel::choose_raster_order(p.tiles_m, p.tiles_n);
  return dim3(unsigned(p.tiles_m * p.tiles_n), 1);
}

// The register-staged kernel (Stages == 0) or the cp.async one, for one pair of operand orders.
template <class Tile, int Stages, bool AK, bool BK>
void launch(SimtGemmParams p, cudaStream_t s) {
  dim3 const grid = grid_of<Tile>(p);
  if constexpr (Stages == 0) simt_gemm_kernel<Tile, float, float, AK, BK><<<grid, Tile::kThreads, 0, s>>>(p);
  else simt_gemm_cp_async_kernel<Tile, Stages, AK, BK><<<grid, Tile::kThreads, 0, s>>>(p);
}

template <class Tile, int Stages, bool AK, bool BK>
Variant variant(char const* name) {
  cudaFuncAttributes a{};
  if constexpr (Stages == 0) cudaFuncGetAttributes(&a, simt_gemm_kernel<Tile, float, float, AK, BK>);
  else cudaFuncGetAttributes(&a, simt_gemm_cp_async_kernel<Tile, Stages, AK, BK>);
  return {name, launch<Tile, Stages, AK, BK>, a.numRegs, int(a.localSizeBytes)};
}

using T128 = SimtTile<128, 128, 8, 4, 2, 4, 2>;
using T128w24 = SimtTile<128, 128, 8, 2, 4, 8, 2>;
using T256x128 = SimtTile<256, 128, 8, 4, 2, 8, 1>;
using T64 = SimtTile<64, 64, 8, 2, 1, 4, 4>;

template <bool AK, bool BK>
std::vector<Variant> variants() {
  return {
      variant<T128, 0, AK, BK>("regs 128x128x8 w4x2 (library)"),
      variant<T128w24, 0, AK, BK>("regs 128x128x8 w2x4"),
      variant<T128, 3, AK, BK>("cp.async3 128x128x8 w4x2 (library)"),
      variant<T128, 4, AK, BK>("cp.async4 128x128x8 w4x2"),
      variant<T128w24, 3, AK, BK>("cp.async3 128x128x8 w2x4"),
      variant<T256x128, 3, AK, BK>("cp.async3 256x128x8 16x8/thr"),
      variant<T64, 0, AK, BK>("regs 64x64x8"),
  };
}

void ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_simt_tiles: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (double(v[v.size() / 2 - 1]) + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  long long m = 4096, n = 4096, k = 4096;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const a = argv[i];
    long long const v = std::atoll(argv[i + 1]);
    if (a == "--m") m = v;
    else if (a == "--n") n = v;
    else if (a == "--k") k = v;
    else if (a == "--iters") iters = int(v);
  }
  if (std::string why = tessel::no_device_reason(); !why.empty()) {
    std::fprintf(stderr, "bench_simt_tiles: %s\n", why.c_str());
    return 2;
  }
  auto info = tessel::query_device(0);
  std::size_t const na = m * k, nb = k * n, nd = m * n;
  std::size_t const set_bytes = 4 * (na + nb + nd);
  int const sets = int(std::clamp<std::size_t>((2 * info->l2_bytes + set_bytes - 1) / set_bytes, 2, 8));
  std::vector<float*> A(sets), B(sets), D(sets);
  for (int s = 0; s < sets; ++s) {
    ok(cudaMalloc(&A[s], 4 * na), "cudaMalloc"), ok(cudaMalloc(&B[s], 4 * nb), "cudaMalloc"), ok(cudaMalloc(&D[s], 4 * nd), "cudaMalloc");
    tessel::reference::fill_uniform_device(A[s], tessel::DType::f32, na, 31 + s);
    tessel::reference::fill_uniform_device(B[s], tessel::DType::f32, nb, 41 + s);
  }
  double *ref = nullptr, *scale = nullptr;
  ok(cudaMalloc(&ref, 8 * nd), "cudaMalloc"), ok(cudaMalloc(&scale, 8 * nd), "cudaMalloc");
  cublasHandle_t h = nullptr;
  cublasCreate(&h);
  std::vector<cudaEvent_t> ev(4);
  for (auto& e : ev) cudaEventCreate(&e);
  double const flops = 2.0 * double(m) * double(n) * double(k);

  std::printf("GPU %s; %lldx%lldx%lld fp32, D row-major, %d input sets, %d iters\n", info->name.c_str(), m, n, k, sets, iters);
  struct Orders { char const* name; bool a_k, b_k; };
  for (Orders o : {Orders{"A,B K-contig (tn)", true, true}, Orders{"A K-, B N-contig (row-major nn)", true, false},
                   Orders{"A M-, B N-contig", false, false}}) {
    // The problem with these orders: A (M x K), B (K x N), D row-major.
    auto params = [&](int s) {
      SimtGemmParams p;
      p.m = m, p.n = n, p.k = k;
      p.a = A[s], p.lda = o.a_k ? k : m, p.a_k_major = o.a_k, p.a_vec = true;
      p.b = B[s], p.ldb = o.b_k ? k : n, p.b_k_major = o.b_k, p.b_vec = true;
      p.d = D[s], p.ldd = n, p.d_vec = true;
      return p;
    };
    // cuBLAS sees column-major: D^T (N x M) = B^T A^T.
    auto cublas = [&](int s) {
      float const one = 1, zero = 0;
      cublasGemmEx(h, o.b_k ? CUBLAS_OP_T : CUBLAS_OP_N, o.a_k ? CUBLAS_OP_N : CUBLAS_OP_T, int(n), int(m), int(k), &one,
                   B[s], CUDA_R_32F, int(o.b_k ? k : n), A[s], CUDA_R_32F, int(o.a_k ? k : m), &zero, D[s], CUDA_R_32F,
                   int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    tessel::GemmArguments g = tessel::make_packed_gemm(m, n, k, 1, tessel::DType::f32, tessel::DType::f32,
                                                       o.a_k ? tessel::MatrixOrder::row_major : tessel::MatrixOrder::col_major,
                                                       o.b_k ? tessel::MatrixOrder::col_major : tessel::MatrixOrder::row_major,
                                                       tessel::MatrixOrder::row_major);
    g.a = A[0], g.b = B[0], g.d = D[0];
    tessel::reference::gemm_device(g, ref, scale);
    double const tol = tessel::reference::gemm_tolerance(tessel::DType::f32, tessel::DType::f32, k);
    std::printf("\n%s\n%-34s %5s %5s %8s %8s %8s %7s  %s\n", o.name, "variant", "regs", "local", "ms", "TFLOP/s", "cuBLAS", "ratio", "check");
    std::vector<Variant> const vs = o.a_k ? (o.b_k ? variants<true, true>() : variants<true, false>()) : variants<false, false>();
    for (Variant const& v : vs) {
      tessel::reference::fill_constant_device(D[0], tessel::DType::f32, nd, NAN);
      v.launch(params(0), nullptr);
      ok(cudaGetLastError(), v.name);
      tessel::reference::GemmCheck chk;
      tessel::reference::check_device(g, ref, scale, tol, &chk);
      for (int w = 0; w < 3; ++w) v.launch(params(w % sets), nullptr), cublas(w % sets);
      std::vector<float> t, c;
      for (int i = 0; i < iters; ++i) {
        int const s = i % sets;
        cudaEventRecord(ev[0]);
        v.launch(params(s), nullptr);
        cudaEventRecord(ev[1]);
        cudaEventRecord(ev[2]);
        cublas(s);
        cudaEventRecord(ev[3]);
        cudaEventSynchronize(ev[3]);
        float a = 0, b = 0;
        cudaEventElapsedTime(&a, ev[0], ev[1]);
        cudaEventElapsedTime(&b, ev[2], ev[3]);
        t.push_back(a), c.push_back(b);
      }
      ok(cudaGetLastError(), v.name);
      double const tm = median(t), cm = median(c);
      std::printf("%-34s %5d %5d %8.3f %8.2f %8.2f %7.3f  %s\n", v.name, v.regs, v.local, tm, flops / tm / 1e9, flops / cm / 1e9, cm / tm,
                  chk.passed() ? "ok" : chk.describe().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
