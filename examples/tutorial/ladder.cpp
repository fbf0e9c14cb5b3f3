// examples/tutorial/ladder.cpp -- run the SIMT ladder: verify every rung, time it against cuBLAS.
//
//   tutorial_ladder                       4096^3, every rung, a markdown table on stdout
//   tutorial_ladder --m 8192 --n 8192 --k 8192 --rung 8 --iters 20
//
// Per rung: C poisoned with NaN and beta = 0 (so C must not be read), one run judged against the
// fp64 GPU reference (tessel/reference/gemm_device.hpp); then timed runs interleaved with cuBLAS
// SGEMM (CUBLAS_COMPUTE_32F, no tensor cores) on the same inputs, each launch between its own
// CUDA events, rotating through input sets that exceed 2x the L2; medians reported.
#include "tutorial.hpp"

#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(std::string const& why, int code = 1) {
  std::fprintf(stderr, "tutorial_ladder: %s\n", why.c_str());
  std::exit(code);
}
void ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}
void ok(tessel::Status const& s, char const* what) {
  if (!s) die(std::string(what) + ": " + s.reason);
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (double(v[v.size() / 2 - 1]) + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int m = 4096, n = 4096, k = 4096, only = 0, iters = 0;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) die(a + " needs a value", 2);
      char* end = nullptr;
      long const v = std::strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > (1 << 30)) die(a + ": '" + argv[i] + "' is not a size", 2);
      return int(v);
    };
    if (a == "--m") m = next();
    else if (a == "--n") n = next();
    else if (a == "--k") k = next();
    else if (a == "--rung") only = next();
    else if (a == "--iters") iters = next();
    else die("unknown option '" + a + "' (options: --m --n --k --rung --iters)", 2);
  }
  if (std::string why = tessel::no_device_reason(); !why.empty()) die(why, 2);
  auto info = tessel::query_device(0);
  if (!info) die("cannot query device 0");

  // Input sets: A, B, C row-major, rotated so that together they exceed 2x the L2.
  std::size_t const sa = std::size_t(m) * k, sb = std::size_t(k) * n, sc = std::size_t(m) * n;
  std::size_t const set_bytes = 4 * (sa + sb + sc);
  int const sets = int(std::clamp<std::size_t>((2 * info->l2_bytes + set_bytes - 1) / set_bytes, 2, 16));
  std::vector<float*> A(sets), B(sets), C(sets);
  for (int s = 0; s < sets; ++s) {
    ok(cudaMalloc(&A[s], 4 * sa), "cudaMalloc");
    ok(cudaMalloc(&B[s], 4 * sb), "cudaMalloc");
    ok(cudaMalloc(&C[s], 4 * sc), "cudaMalloc");
    ok(tessel::reference::fill_uniform_device(A[s], tessel::DType::f32, sa, 11 + 3 * s), "fill A");
    ok(tessel::reference::fill_uniform_device(B[s], tessel::DType::f32, sb, 12 + 3 * s), "fill B");
  }
  double *ref = nullptr, *scale = nullptr;
  ok(cudaMalloc(&ref, 8 * sc), "cudaMalloc");
  ok(cudaMalloc(&scale, 8 * sc), "cudaMalloc");
  tessel::GemmArguments g = tessel::make_packed_gemm(m, n, k, 1, tessel::DType::f32, tessel::DType::f32,
                                                     tessel::MatrixOrder::row_major, tessel::MatrixOrder::row_major,
                                                     tessel::MatrixOrder::row_major);
  g.a = A[0], g.b = B[0], g.d = C[0];
  ok(tessel::reference::gemm_device(g, ref, scale), "reference");
  double const tol = tessel::reference::gemm_tolerance(tessel::DType::f32, tessel::DType::f32, k);

  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) die("cublasCreate failed");
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  float const one = 1.0f, zero = 0.0f;
  auto cublas = [&](int s) {  // row-major C = A B is column-major C^T = B^T A^T
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B[s], CUDA_R_32F, n, A[s], CUDA_R_32F, k, &zero, C[s],
                 CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  auto problem = [&](int s) { return tutorial::Gemm{m, n, k, 1.0f, 0.0f, A[s], k, B[s], n, C[s], n}; };

  std::vector<cudaEvent_t> ev(4);
  for (auto& e : ev) ok(cudaEventCreate(&e), "cudaEventCreate");
  double const flops = 2.0 * m * n * k;
  std::printf("GPU: %s, %d SMs, SM clock %d MHz max; problem %dx%dx%d fp32 row-major, %d input sets\n\n",
              info->name.c_str(), info->sm_count, info->clock_mhz, m, n, k, sets);
  std::printf("| rung | what changed | TFLOP/s | %% of cuBLAS | verified (max rel err) |\n|---|---|---|---|---|\n");
  double cublas_best = 0.0;
  bool all_ok = true;
  for (tutorial::Rung const& r : tutorial::rungs()) {
    if (only && r.number != only) continue;
    // verify: C poisoned, beta = 0
    ok(tessel::reference::fill_constant_device(C[0], tessel::DType::f32, sc, NAN), "poison C");
    r.launch(problem(0), nullptr);
    ok(cudaGetLastError(), r.file);
    tessel::reference::GemmCheck chk;
    ok(tessel::reference::check_device(g, ref, scale, tol, &chk), "check");
    all_ok = all_ok && chk.passed();
    // time: estimate one launch, then interleave with cuBLAS
    ok(cudaEventRecord(ev[0]), "record");
    r.launch(problem(1 % sets), nullptr);
    ok(cudaEventRecord(ev[1]), "record");
    ok(cudaEventSynchronize(ev[1]), "sync");
    float est = 0;
    ok(cudaEventElapsedTime(&est, ev[0], ev[1]), "elapsed");
    int const runs = iters ? iters : std::clamp(int(400.0 / std::max(est, 0.01f)), 3, 30);
    for (int w = 0; w < 2; ++w) r.launch(problem(w % sets), nullptr), cublas(w % sets);
    std::vector<float> t_ms, c_ms;
    for (int i = 0; i < runs; ++i) {
      int const s = i % sets;
      ok(cudaEventRecord(ev[0]), "record");
      r.launch(problem(s), nullptr);
      ok(cudaEventRecord(ev[1]), "record");
      ok(cudaEventRecord(ev[2]), "record");
      cublas(s);
      ok(cudaEventRecord(ev[3]), "record");
      ok(cudaEventSynchronize(ev[3]), "sync");
      float a = 0, b = 0;
      ok(cudaEventElapsedTime(&a, ev[0], ev[1]), "elapsed");
      ok(cudaEventElapsedTime(&b, ev[2], ev[3]), "elapsed");
      t_ms.push_back(a), c_ms.push_back(b);
    }
    ok(cudaGetLastError(), r.file);
    double const t = median(t_ms), c = median(c_ms);
    double const tf = flops / (t * 1e-3) / 1e12, cf = flops / (c * 1e-3) / 1e12;
    cublas_best = std::max(cublas_best, cf);
    std::printf("| %02d `%s` | %s | %.2f | %.1f%% | %s (%.2g) |\n", r.number, r.file, r.idea, tf, 100.0 * tf / cf,
                chk.passed() ? "yes" : "NO", chk.max_rel_err);
    if (!chk.passed()) std::fprintf(stderr, "%s: %s\n", r.file, chk.describe().c_str());
    std::fflush(stdout);
  }
  std::printf("| | cuBLAS SGEMM (CUBLAS_COMPUTE_32F, best median seen) | %.2f | 100%% | |\n", cublas_best);
  cublasDestroy(h);
  return all_ok ? 0 : 1;
}
