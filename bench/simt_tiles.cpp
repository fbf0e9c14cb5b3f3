// bench/simt_tiles.cpp -- tuning: SIMT GEMM kernels, fp32, each checked on ragged shapes and
// timed against cuBLAS SGEMM in the same process (interleaved, rotated inputs, medians).
//
//   bench_simt_tiles [--m 4096 --n 4096 --k 4096] [--iters 20] [--layouts tn,nn,nt,tt]
//                    [--check 0|1|2] [--time 0|1] [--profile 1] [--only SUBSTRING]
//
// The variants are whatever the binary links (bench/simt_variants.hpp): bench_simt_tiles has the
// library's SIMT registry entries; bench_simt_variants (not built by default) the mainloop
// experiment of bench/simt_experiment/. D is row-major in the kernels; layouts are named
// as the CLI names them (BLAS, column-major D, which the kernel computes as D^T = B^T A^T):
//   tn: both operands K-contiguous   nn: kernel A K-, B N-contiguous
//   nt: kernel A M-, B N-contiguous  tt: kernel A M-, B K-contiguous
// --check 1 runs every variant and layout on ragged shapes (padded and unaligned leading
// dimensions, K not a multiple of the k-tile, batches, alpha/beta) against the fp64 reference
// before timing; --check 2 only the first two shapes (for compute-sanitizer). The exit status is
// 1 when any check fails. The last lines are a table of ratios to cuBLAS, variant x layout.
// --profile 1 launches each variant once per layout and nothing else (for ncu).
#include "simt_variants.hpp"

#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>  // (the typed cudaMalloc overload)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace tessel::bench;

namespace {

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

struct Layout {
  char const* name;
  bool a_k, b_k;  // the kernel's operands: A (M x K) K-contiguous, B (K x N) K-contiguous
};
constexpr Layout kLayouts[] = {{"tn", true, true}, {"nn", true, false}, {"nt", false, false}, {"tt", false, true}};

// One problem in the kernel's terms (D row-major), with its buffers and the fp64 reference.
struct Problem {
  std::int64_t m, n, k, batch;
  std::int64_t pad;  // added to every minimal leading dimension
  float alpha, beta;
};

tessel::GemmArguments arguments(Problem const& q, Layout l) {
  using tessel::MatrixOrder;
  tessel::GemmArguments g = tessel::make_packed_gemm(q.m, q.n, q.k, q.batch, tessel::DType::f32, tessel::DType::f32,
                                                     l.a_k ? MatrixOrder::row_major : MatrixOrder::col_major,
                                                     l.b_k ? MatrixOrder::col_major : MatrixOrder::row_major,
                                                     MatrixOrder::row_major);
  g.lda += q.pad, g.ldb += q.pad, g.ldc += q.pad, g.ldd += q.pad;
  g.batch_stride_a = g.lda * (l.a_k ? q.m : q.k);
  g.batch_stride_b = g.ldb * (l.b_k ? q.n : q.k);
  g.batch_stride_c = g.batch_stride_d = g.ldd * q.m;
  g.alpha = q.alpha, g.beta = q.beta;
  return g;
}

// Every variant and layout on ragged shapes; returns the number of failures.
int check_all(std::vector<SimtVariant> const& vs, std::vector<Layout> const& layouts, int shapes) {
  Problem const problems[] = {
      {130, 129, 37, 1, 0, 1.0f, 0.0f},      // edges everywhere, K not a multiple of 8, unaligned rows
      {257, 260, 64, 2, 4, 0.5f, 0.25f},     // batches, padded aligned rows, C read
      {1, 1, 1, 1, 0, 1.0f, 0.0f},           // one element
      {17, 33, 65, 1, 0, 1.0f, 0.0f},        // smaller than a tile
      {300, 200, 100, 1, 1, 1.0f, 0.0f},     // odd leading dimensions: no 128-bit loads
      {512, 384, 1004, 1, 0, 1.0f, 0.0f},    // interior tiles with 128-bit rows, partial last k-tile
      {256, 256, 12, 1, 0, 1.0f, 0.0f},      // fewer k-tiles than pipeline stages
      {256, 256, 4096, 1, 0, 1.0f, 1.0f},    // interior, many k-tiles, beta 1
      {1023, 1001, 999, 1, 4, -1.0f, 0.5f},  // larger ragged
  };
  int failures = 0;
  int const count = std::min<int>(shapes, int(std::size(problems)));
  for (int pi = 0; pi < count; ++pi) {
    Problem const& q = problems[pi];
    for (Layout l : layouts) {
      tessel::GemmArguments g = arguments(q, l);
      std::size_t const na = std::size_t(g.batch_stride_a * q.batch), nb = std::size_t(g.batch_stride_b * q.batch);
      std::size_t const nd = std::size_t(g.batch_stride_d * q.batch);
      float *a, *b, *c, *d;
      double *ref, *scale;
      ok(cudaMalloc(&a, 4 * na), "cudaMalloc"), ok(cudaMalloc(&b, 4 * nb), "cudaMalloc");
      ok(cudaMalloc(&c, 4 * nd), "cudaMalloc"), ok(cudaMalloc(&d, 4 * nd), "cudaMalloc");
      std::size_t const nr = std::size_t(q.m * q.n * q.batch);
      ok(cudaMalloc(&ref, 8 * nr), "cudaMalloc"), ok(cudaMalloc(&scale, 8 * nr), "cudaMalloc");
      tessel::reference::fill_uniform_device(a, tessel::DType::f32, std::int64_t(na), 7 + pi);
      tessel::reference::fill_uniform_device(b, tessel::DType::f32, std::int64_t(nb), 17 + pi);
      tessel::reference::fill_uniform_device(c, tessel::DType::f32, std::int64_t(nd), 27 + pi);
      g.a = a, g.b = b, g.c = q.beta != 0.0f ? c : nullptr, g.d = d;
      tessel::reference::gemm_device(g, ref, scale);
      double const tol = tessel::reference::gemm_tolerance(tessel::DType::f32, tessel::DType::f32, q.k);
      for (SimtVariant const& v : vs) {
        tessel::reference::fill_constant_device(d, tessel::DType::f32, std::int64_t(nd), NAN);
        ok(v.launch(g, nullptr), v.name.c_str());
        tessel::reference::GemmCheck chk;
        tessel::reference::check_device(g, ref, scale, tol, &chk);
        if (!chk.passed()) {
          ++failures;
          std::printf("CHECK FAILED %s, %s, %lldx%lldx%lld batch %lld pad %lld: %s\n", v.name.c_str(), l.name,
                      (long long)q.m, (long long)q.n, (long long)q.k, (long long)q.batch, (long long)q.pad,
                      chk.describe().c_str());
        }
      }
      cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(d), cudaFree(ref), cudaFree(scale);
    }
  }
  ok(cudaDeviceSynchronize(), "check");
  std::printf("checks: %d variants x %zu layouts x %d shapes, %d failed\n", int(vs.size()), layouts.size(), count, failures);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  long long m = 4096, n = 4096, k = 4096;
  int iters = 20, check = 0, timing = 1, profile = 0;
  std::string layout_list = "tn,nn,nt,tt", only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const a = argv[i], v = argv[i + 1];
    if (a == "--m") m = std::atoll(v.c_str());
    else if (a == "--n") n = std::atoll(v.c_str());
    else if (a == "--k") k = std::atoll(v.c_str());
    else if (a == "--iters") iters = std::atoi(v.c_str());
    else if (a == "--layouts") layout_list = v;
    else if (a == "--check") check = std::atoi(v.c_str());
    else if (a == "--time") timing = std::atoi(v.c_str());
    else if (a == "--only") only = v;
    else if (a == "--profile") profile = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "bench_simt_tiles: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (std::string why = tessel::no_device_reason(); !why.empty()) {
    std::fprintf(stderr, "bench_simt_tiles: %s\n", why.c_str());
    return 2;
  }
  std::vector<Layout> layouts;
  for (Layout l : kLayouts)
    if (layout_list.find(l.name) != std::string::npos) layouts.push_back(l);
  std::vector<SimtVariant> vs;
  for (SimtVariant const& v : simt_variants())
    if (only.empty() || v.name.find(only) != std::string::npos) vs.push_back(v);

  int failures = 0;
  if (check > 0) failures = check_all(vs, layouts, check == 1 ? 1 << 20 : 2);
  if (!timing) return failures ? 1 : 0;

  auto info = tessel::query_device(0);
  std::size_t const na = m * k, nb = k * n, nd = m * n;
  if (profile) {  // one launch of each, on uninitialised (but finite after the fill) inputs
    float *a, *b, *d;
    ok(cudaMalloc(&a, 4 * na), "cudaMalloc"), ok(cudaMalloc(&b, 4 * nb), "cudaMalloc"), ok(cudaMalloc(&d, 4 * nd), "cudaMalloc");
    tessel::reference::fill_uniform_device(a, tessel::DType::f32, na, 31);
    tessel::reference::fill_uniform_device(b, tessel::DType::f32, nb, 41);
    for (Layout l : layouts) {
      tessel::GemmArguments g = arguments(Problem{m, n, k, 1, 0, 1.0f, 0.0f}, l);
      g.a = a, g.b = b, g.d = d;
      for (SimtVariant const& v : vs) {
        ok(v.launch(g, nullptr), v.name.c_str());
        std::printf("profiled %s | %s\n", l.name, v.name.c_str());
      }
    }
    ok(cudaDeviceSynchronize(), "profile");
    return 0;
  }
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
  std::map<std::string, std::map<std::string, double>> ratios;  // variant -> layout -> ratio

  std::printf("GPU %s; %lldx%lldx%lld fp32, %d input sets, %d iters\n", info->name.c_str(), m, n, k, sets, iters);
  for (Layout l : layouts) {
    tessel::GemmArguments g = arguments(Problem{m, n, k, 1, 0, 1.0f, 0.0f}, l);
    auto operands = [&](int s) {
      tessel::GemmArguments h = g;
      h.a = A[s], h.b = B[s], h.d = D[s];
      return h;
    };
    // cuBLAS sees column-major: D^T (N x M) = B^T A^T.
    auto cublas = [&](int s) {
      float const one = 1, zero = 0;
      cublasGemmEx(h, l.b_k ? CUBLAS_OP_T : CUBLAS_OP_N, l.a_k ? CUBLAS_OP_N : CUBLAS_OP_T, int(n), int(m), int(k), &one,
                   B[s], CUDA_R_32F, int(l.b_k ? k : n), A[s], CUDA_R_32F, int(l.a_k ? k : m), &zero, D[s], CUDA_R_32F,
                   int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    g.a = A[0], g.b = B[0], g.d = D[0];
    tessel::reference::gemm_device(g, ref, scale);
    double const tol = tessel::reference::gemm_tolerance(tessel::DType::f32, tessel::DType::f32, k);
    std::printf("\nlayout %s (kernel A %s-, B %s-contiguous)\n%-36s %5s %5s %8s %8s %8s %7s  %s\n", l.name, l.a_k ? "K" : "M",
                l.b_k ? "K" : "N", "variant", "regs", "local", "ms", "TFLOP/s", "cuBLAS", "ratio", "check");
    for (SimtVariant const& v : vs) {
      cudaFuncAttributes attr{};
      v.attributes(g, &attr);
      tessel::reference::fill_constant_device(D[0], tessel::DType::f32, nd, NAN);
      ok(v.launch(operands(0), nullptr), v.name.c_str());
      tessel::reference::GemmCheck chk;
      tessel::reference::check_device(g, ref, scale, tol, &chk);
      failures += chk.passed() ? 0 : 1;
      for (int w = 0; w < 3; ++w) v.launch(operands(w % sets), nullptr), cublas(w % sets);
      std::vector<float> t, c;
      for (int i = 0; i < iters; ++i) {
        int const s = i % sets;
        cudaEventRecord(ev[0]);
        v.launch(operands(s), nullptr);
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
      ok(cudaGetLastError(), v.name.c_str());
      double const tm = median(t), cm = median(c);
      ratios[v.name][l.name] = chk.passed() ? cm / tm : -1.0;
      std::printf("%-36s %5d %5d %8.3f %8.2f %8.2f %7.3f  %s\n", v.name.c_str(), attr.numRegs, int(attr.localSizeBytes), tm,
                  flops / tm / 1e9, flops / cm / 1e9, cm / tm, chk.passed() ? "ok" : chk.describe().c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\nratio to cuBLAS, %lldx%lldx%lld (-1: wrong result)\n%-36s", m, n, k, "variant");
  for (Layout l : layouts) std::printf(" %6s", l.name);
  std::printf("\n");
  for (SimtVariant const& v : vs) {
    std::printf("%-36s", v.name.c_str());
    for (Layout l : layouts) std::printf(" %6.3f", ratios[v.name][l.name]);
    std::printf("\n");
  }
  return failures ? 1 : 0;
}
