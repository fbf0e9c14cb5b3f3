// bench/sm80_tiles.cu -- tuning: sm_80 tensor-core GEMM configurations and mainloop schedules
// (bench/sm80_variants.cuh), each checked on ragged shapes and timed against cuBLAS in the same
// process (interleaved pairs enqueued back to back as the CLI does, inputs rotated past L2, medians). The kernels' canonical problem: A (M x K)
// and B (N x K) K-major with 16-byte aligned rows, D row-major (docs/sm80_gemm.md).
//
//   bench_sm80_variants [--m 4096 --n 4096 --k 4096] [--dtype bf16|tf32] [--iters 20]
//                       [--check 0|1|2] [--time 0|1] [--profile 1] [--only SUBSTRING|=NAME[,...]]
//                       [--raster-group 8] [--rotate 0|1] [--peak 1] [--list 1]
//
// --check 1 runs every variant of the dtype on ragged shapes (1x1x1, 17x33x65, K below a tile,
// fewer k-tiles than stages, batches with beta, padded and odd leading dimensions of D, whole
// tiles with beta 0 and more tiles than resident CTAs, and 4095x4097x4099) against the fp64 reference, with the GPU tests' rule (tests/gpu/gemm_verdict.hpp):
// pass the fp64 judge, and an error at most twice cuBLAS's on the same inputs (tf32: never less
// than 2^-10 of the scale as the yardstick); --check 2 only the first three shapes (for
// compute-sanitizer). The exit status is 1 when any check fails. Timing prints, per variant,
// registers, spill bytes, shared memory, the median time, TFLOP/s, cuBLAS's and the ratio; the
// last lines are the ratio table. --profile 1 launches each variant once and nothing else (ncu).
// --peak 1 prints the ceilings of bench/sm80_peak.cu (mma.sync alone, fed by ldmatrix, with barriers).
// --rotate 0 times with one input set (warm L2 between launches, as the CUTLASS measurements of
// shared/reference/peer_kernels.md were taken) instead of sets rotated through 2x the L2.
#include "sm80_variants.cuh"

#include <tessel/reference/gemm_device.hpp>
#include <tessel/runtime/device.hpp>
#include <tessel/schedule/raster.hpp>

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tessel::bench;
using tessel::DType;
using tessel::GemmArguments;
using tessel::kernel::Sm80GemmParams;
using tessel::kernel::detail::Sm80Instance;

namespace tessel::bench {
int run_peak_bench();  // bench/sm80_peak.cu
}

namespace {

void ok(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_sm80_variants: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (double(v[v.size() / 2 - 1]) + v[v.size() / 2]);
}

int g_raster_group = 8;  // --raster-group: GroupedRaster's band width (the library uses 8)

std::int64_t round_up(std::int64_t x, std::int64_t q) { return (x + q - 1) / q * q; }

// One problem in the kernels' terms: A (M x K) and B (N x K) K-major with rows padded to 16 bytes,
// D (M x N) row-major with ldd = N + pad_d.
struct Problem {
  std::int64_t m, n, k, batch;
  std::int64_t pad_d;
  float alpha, beta;
  DType cd;  // D's dtype (bf16 or f32 for bf16 inputs; f32 for tf32)
};

GemmArguments arguments(Problem const& q, DType ab) {
  using tessel::MatrixOrder;
  GemmArguments g = tessel::make_packed_gemm(q.m, q.n, q.k, q.batch, ab, q.cd, MatrixOrder::row_major,
                                             MatrixOrder::col_major, MatrixOrder::row_major);
  std::int64_t const row_elems = 16 / std::int64_t(tessel::size_of(ab));
  g.lda = g.ldb = round_up(q.k, row_elems);
  g.ldc = g.ldd = q.n + q.pad_d;
  g.batch_stride_a = g.lda * q.m, g.batch_stride_b = g.ldb * q.n;
  g.batch_stride_c = g.batch_stride_d = g.ldd * q.m;
  g.alpha = q.alpha, g.beta = q.beta;
  return g;
}

bool aligned16(void const* p, std::int64_t ld, std::int64_t stride, std::int64_t batch, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * bytes) % 16 == 0 && (batch == 1 || (stride * bytes) % 16 == 0);
}

Sm80GemmParams params(GemmArguments const& g, Sm80Instance const& t) {
  Sm80GemmParams p;
  std::int64_t const ob = std::int64_t(tessel::size_of(g.c_type));
  p.m = g.m, p.n = g.n, p.k = g.k, p.batch = int(g.batch_count);
  p.a = g.a, p.lda = g.lda, p.batch_stride_a = g.batch_stride_a;
  p.b = g.b, p.ldb = g.ldb, p.batch_stride_b = g.batch_stride_b;
  p.c = g.beta != 0.0f ? g.c : nullptr, p.ldc = g.ldc, p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.ldd = g.ldd, p.batch_stride_d = g.batch_stride_d;
  p.alpha = g.alpha, p.beta = g.beta;
  p.out_f32 = g.c_type == DType::f32;
  p.c_vec = p.c != nullptr && aligned16(g.c, g.ldc, g.batch_stride_c, g.batch_count, ob);
  p.d_vec = aligned16(g.d, g.ldd, g.batch_stride_d, g.batch_count, ob);
  p.tiles_m = int((g.m + t.tile_m - 1) / t.tile_m), p.tiles_n = int((g.n + t.tile_n - 1) / t.tile_n);
  p.raster_order = tessel::choose_raster_order(p.tiles_m, p.tiles_n);
  p.raster_group = g_raster_group;
  p.splits = 1;
  return p;
}

cudaDataType cuda_type(DType t) { return t == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

// cuBLAS on the same problem: row-major D = A B^T is column-major D^T = B A^T.
cublasStatus_t cublas_gemm(cublasHandle_t h, GemmArguments const& g, void* d) {
  float const alpha = g.alpha, beta = g.beta;
  auto const compute = g.a_type == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  return cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &alpha, g.b,
                                    cuda_type(g.a_type), int(g.ldb), g.batch_stride_b, g.a, cuda_type(g.a_type),
                                    int(g.lda), g.batch_stride_a, &beta, d, cuda_type(g.c_type), int(g.ldd),
                                    g.batch_stride_d, int(g.batch_count), compute, CUBLAS_GEMM_DEFAULT);
}

// The GPU tests' rule (tests/gpu/gemm_verdict.hpp, expect_good).
bool within_twice_cublas(tessel::reference::GemmCheck const& ours, tessel::reference::GemmCheck const& cublas, DType ab,
                         std::int64_t k) {
  double const floor = ab == DType::tf32 ? 0x1p-10 : 0.0;
  double const max_base = std::max(cublas.max_rel_err, floor), norm_base = std::max(cublas.norm_rel_err, floor);
  return ours.max_rel_err <= 2.0 * max_base + 4 * 0x1p-24 &&
         ours.norm_rel_err <= 2.0 * norm_base + (4 + std::sqrt(double(k))) * 0x1p-24;
}

struct Buffers {
  void *a = nullptr, *b = nullptr, *c = nullptr, *d = nullptr, *dc = nullptr;
  double *ref = nullptr, *scale = nullptr;
  ~Buffers() {
    for (void* p : {a, b, c, d, dc}) cudaFree(p);
    cudaFree(ref), cudaFree(scale);
  }
};

// Every variant of dtype `ab` on ragged shapes; returns the number of failures.
int check_all(std::vector<Sm80Variant> const& vs, DType ab, int shapes, cublasHandle_t h) {
  DType const wide = DType::f32, narrow = ab == DType::tf32 ? DType::f32 : DType::bf16;
  Problem const problems[] = {
      {130, 129, 37, 1, 0, 1.0f, 0.0f, narrow},       // edges everywhere, K not a multiple of the k-tile
      {257, 260, 64, 2, 4, 0.5f, 0.25f, wide},        // batches, padded aligned D rows, C read
      {2304, 2048, 48, 1, 0, 1.0f, 0.0f, narrow},     // whole tiles with beta 0 (the whole-tile epilogue), more
                                                      // tiles than resident CTAs (persistent kernels loop), one
                                                      // partial k-tile
      {17, 33, 65, 1, 0, 1.0f, 0.0f, narrow},         // smaller than a tile, odd ldd
      {1, 1, 1, 1, 0, 1.0f, 0.0f, narrow},            // one element
      {128, 256, 16, 1, 0, 1.0f, 0.0f, narrow},       // K below a k-tile, whole tiles
      {300, 200, 100, 1, 1, 1.0f, -1.0f, wide},       // odd ldd with beta: element stores and loads
      {512, 384, 1004, 1, 0, 1.0f, 0.0f, narrow},     // interior tiles, partial last k-tile
      {256, 256, 96, 1, 0, 1.0f, 0.0f, narrow},       // fewer k-tiles than some pipelines' stages
      {1023, 1001, 999, 1, 3, -1.0f, 0.5f, wide},     // larger ragged
      {4095, 4097, 4099, 1, 0, 1.0f, 0.0f, narrow},   // the issue's odd shape (rows padded to 16 bytes)
  };
  int failures = 0;
  int const count = std::min<int>(shapes, int(std::size(problems)));
  for (int pi = 0; pi < count; ++pi) {
    Problem const& q = problems[pi];
    std::printf("shape %lldx%lldx%lld batch %lld -> %s\n", (long long)q.m, (long long)q.n, (long long)q.k,
                (long long)q.batch, tessel::to_string(q.cd));
    std::fflush(stdout);  // a hang (timeout) shows where it happened
    GemmArguments g = arguments(q, ab);
    std::size_t const eb = tessel::size_of(ab), ob = tessel::size_of(q.cd);
    std::size_t const na = std::size_t(g.batch_stride_a * q.batch), nb = std::size_t(g.batch_stride_b * q.batch);
    std::size_t const nd = std::size_t(g.batch_stride_d * q.batch), nr = std::size_t(q.m * q.n * q.batch);
    Buffers x;
    ok(cudaMalloc(&x.a, eb * na), "cudaMalloc"), ok(cudaMalloc(&x.b, eb * nb), "cudaMalloc");
    ok(cudaMalloc(&x.c, ob * nd), "cudaMalloc"), ok(cudaMalloc(&x.d, ob * nd), "cudaMalloc");
    ok(cudaMalloc(&x.dc, ob * nd), "cudaMalloc");
    ok(cudaMalloc(&x.ref, 8 * nr), "cudaMalloc"), ok(cudaMalloc(&x.scale, 8 * nr), "cudaMalloc");
    tessel::reference::fill_uniform_device(x.a, ab, std::int64_t(na), 7 + pi);
    tessel::reference::fill_uniform_device(x.b, ab, std::int64_t(nb), 17 + pi);
    tessel::reference::fill_uniform_device(x.c, q.cd, std::int64_t(nd), 27 + pi);
    g.a = x.a, g.b = x.b, g.c = x.c, g.d = x.d;
    tessel::reference::gemm_device(g, x.ref, x.scale);
    double const tol = tessel::reference::gemm_tolerance(ab, q.cd, q.k);
    // cuBLAS on the same inputs (D starts as a copy of C).
    tessel::reference::GemmCheck theirs;
    ok(cudaMemcpy(x.dc, x.c, ob * nd, cudaMemcpyDeviceToDevice), "copy C");
    GemmArguments gc = g;
    gc.d = x.dc;
    bool const have_cublas = cublas_gemm(h, g, x.dc) == CUBLAS_STATUS_SUCCESS &&
                             tessel::reference::check_device(gc, x.ref, x.scale, tol, &theirs).ok();
    for (Sm80Variant const& v : vs) {
      Sm80Instance const t = v.instance();
      tessel::reference::fill_constant_device(x.d, q.cd, std::int64_t(nd), NAN);
      ok(t.launch(params(g, t), nullptr), v.name.c_str());
      ok(cudaDeviceSynchronize(), v.name.c_str());
      tessel::reference::GemmCheck ours;
      tessel::reference::check_device(g, x.ref, x.scale, tol, &ours);
      bool const twice = have_cublas && within_twice_cublas(ours, theirs, ab, q.k);
      if (!ours.passed() || !twice) {
        ++failures;
        std::printf("CHECK FAILED %s, %lldx%lldx%lld batch %lld -> %s: %s; cuBLAS %s max %.3g norm %.3g, ours norm %.3g\n",
                    v.name.c_str(), (long long)q.m, (long long)q.n, (long long)q.k, (long long)q.batch,
                    tessel::to_string(q.cd), ours.describe().c_str(), have_cublas ? "ran" : "did not run",
                    theirs.max_rel_err, theirs.norm_rel_err, ours.norm_rel_err);
        std::fflush(stdout);
      } else if (pi + 1 == count || q.m >= 1000) {
        std::printf("  ok %-44s %lldx%lldx%lld: max rel err %.3g (cuBLAS %.3g), norm %.3g (cuBLAS %.3g)\n", v.name.c_str(),
                    (long long)q.m, (long long)q.n, (long long)q.k, ours.max_rel_err, theirs.max_rel_err,
                    ours.norm_rel_err, theirs.norm_rel_err);
      }
    }
  }
  std::printf("checks %s: %d variants x %d shapes, %d failed\n", tessel::to_string(ab), int(vs.size()), count, failures);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  long long m = 4096, n = 4096, k = 4096;
  int iters = 20, check = 0, timing = 1, profile = 0, peak = 0, list = 0, rotate = 1;
  std::string only, dtype = "bf16";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const a = argv[i], v = argv[i + 1];
    if (a == "--m") m = std::atoll(v.c_str());
    else if (a == "--n") n = std::atoll(v.c_str());
    else if (a == "--k") k = std::atoll(v.c_str());
    else if (a == "--iters") iters = std::atoi(v.c_str());
    else if (a == "--dtype") dtype = v;
    else if (a == "--check") check = std::atoi(v.c_str());
    else if (a == "--time") timing = std::atoi(v.c_str());
    else if (a == "--only") only = v;
    else if (a == "--profile") profile = std::atoi(v.c_str());
    else if (a == "--peak") peak = std::atoi(v.c_str());
    else if (a == "--list") list = std::atoi(v.c_str());
    else if (a == "--rotate") rotate = std::atoi(v.c_str());
    else if (a == "--raster-group") g_raster_group = std::max(1, std::atoi(v.c_str()));
    else {
      std::fprintf(stderr, "bench_sm80_variants: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (dtype != "bf16" && dtype != "tf32") {
    std::fprintf(stderr, "bench_sm80_variants: --dtype is bf16 or tf32, not %s\n", dtype.c_str());
    return 2;
  }
  if (list) {  // the linked variants, no GPU needed
    for (Sm80Variant const& v : sm80_variant_registry()) std::printf("%3d %s\n", v.order, v.name.c_str());
    return 0;
  }
  if (std::string why = tessel::no_device_reason(); !why.empty()) {
    std::fprintf(stderr, "bench_sm80_variants: %s\n", why.c_str());
    return 2;
  }
  if (peak) return run_peak_bench();
  DType const ab = dtype == "bf16" ? DType::bf16 : DType::tf32;
  std::vector<std::string> wanted;  // --only: any of these substrings
  for (std::size_t b = 0; b < only.size();) {
    std::size_t const e = std::min(only.find(',', b), only.size());
    wanted.push_back(only.substr(b, e - b));
    b = e + 1;
  }
  std::vector<Sm80Variant> vs;
  for (Sm80Variant const& v : sm80_variant_registry()) {
    bool const named = wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](std::string const& w) {
                         return w.starts_with('=') ? v.name == w.substr(1) : v.name.find(w) != std::string::npos;
                       });
    if (v.ab == ab && named) vs.push_back(v);
  }
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_sm80_variants: cublasCreate failed\n");
    return 1;
  }

  int failures = 0;
  if (check > 0) failures = check_all(vs, ab, check == 1 ? 1 << 20 : 3, h);
  if (!timing && !profile) return failures ? 1 : 0;

  auto info = tessel::query_device(0);
  DType const cd = ab == DType::tf32 ? DType::f32 : DType::bf16;  // the benchmarks' output type
  std::size_t const eb = tessel::size_of(ab), ob = tessel::size_of(cd);
  Problem const q{m, n, k, 1, 0, 1.0f, 0.0f, cd};
  GemmArguments g = arguments(q, ab);
  std::size_t const na = std::size_t(m * g.lda), nb = std::size_t(n * g.ldb), nd = std::size_t(m * n);
  if (profile) {  // one launch of each
    Buffers x;
    ok(cudaMalloc(&x.a, eb * na), "cudaMalloc"), ok(cudaMalloc(&x.b, eb * nb), "cudaMalloc"), ok(cudaMalloc(&x.d, ob * nd), "cudaMalloc");
    tessel::reference::fill_uniform_device(x.a, ab, std::int64_t(na), 31);
    tessel::reference::fill_uniform_device(x.b, ab, std::int64_t(nb), 41);
    g.a = x.a, g.b = x.b, g.d = x.d;
    for (Sm80Variant const& v : vs) {
      Sm80Instance const t = v.instance();
      ok(t.launch(params(g, t), nullptr), v.name.c_str());
      std::printf("profiled %s\n", v.name.c_str());
    }
    ok(cudaDeviceSynchronize(), "profile");
    return failures ? 1 : 0;
  }
  std::size_t const set_bytes = eb * (na + nb) + ob * nd;
  int const sets = rotate ? int(std::clamp<std::size_t>((2 * info->l2_bytes + set_bytes - 1) / set_bytes, 2, 8)) : 1;
  std::vector<void*> A(sets), B(sets), D(sets);
  for (int s = 0; s < sets; ++s) {
    ok(cudaMalloc(&A[s], eb * na), "cudaMalloc"), ok(cudaMalloc(&B[s], eb * nb), "cudaMalloc"), ok(cudaMalloc(&D[s], ob * nd), "cudaMalloc");
    tessel::reference::fill_uniform_device(A[s], ab, std::int64_t(na), 31 + s);
    tessel::reference::fill_uniform_device(B[s], ab, std::int64_t(nb), 41 + s);
  }
  double *ref = nullptr, *scale = nullptr;
  ok(cudaMalloc(&ref, 8 * nd), "cudaMalloc"), ok(cudaMalloc(&scale, 8 * nd), "cudaMalloc");
  std::vector<cudaEvent_t> ev(4 * std::size_t(std::max(iters, 1)));
  for (auto& e : ev) cudaEventCreate(&e);
  double const flops = 2.0 * double(m) * double(n) * double(k);
  auto with_set = [&](int s) {
    GemmArguments x = g;
    x.a = A[s], x.b = B[s], x.d = D[s];
    return x;
  };
  g.a = A[0], g.b = B[0], g.d = D[0];
  tessel::reference::gemm_device(g, ref, scale);
  double const tol = tessel::reference::gemm_tolerance(ab, cd, k);
  // cuBLAS's error at this size, for the table.
  tessel::reference::GemmCheck theirs;
  ok(cublas_gemm(h, g, D[0]) == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown, "cuBLAS");
  tessel::reference::check_device(g, ref, scale, tol, &theirs);

  std::printf("GPU %s (%d SMs); %lldx%lldx%lld %s -> %s, %d input sets, %d iters; cuBLAS max rel err %.3g\n",
              info->name.c_str(), info->sm_count, m, n, k, tessel::to_string(ab), tessel::to_string(cd), sets, iters,
              theirs.max_rel_err);
  std::printf("%-46s %5s %5s %6s %8s %8s %8s %7s  %s\n", "variant", "regs", "local", "smemKB", "ms", "TFLOP/s", "cuBLAS",
              "ratio", "check");
  std::vector<double> ratio(vs.size(), -1.0);
  for (std::size_t vi = 0; vi < vs.size(); ++vi) {
    Sm80Variant const& v = vs[vi];
    Sm80Instance const t = v.instance();
    cudaFuncAttributes attr{};
    t.attributes(&attr);
    tessel::reference::fill_constant_device(D[0], cd, std::int64_t(nd), NAN);
    ok(t.launch(params(g, t), nullptr), v.name.c_str());
    tessel::reference::GemmCheck chk;
    tessel::reference::check_device(g, ref, scale, tol, &chk);
    bool const good = chk.passed() && within_twice_cublas(chk, theirs, ab, k);
    failures += good ? 0 : 1;
    for (int w = 0; w < 3; ++w) {
      GemmArguments const x = with_set(w % sets);
      t.launch(params(x, t), nullptr), cublas_gemm(h, x, x.d);
    }
    // As the CLI times (apps/tessel/cmd_gemm.cpp): pairs enqueued back to back, one sync at the end.
    for (int i = 0; i < iters; ++i) {
      GemmArguments const x = with_set(i % sets);
      cudaEventRecord(ev[4 * i + 0]);
      t.launch(params(x, t), nullptr);
      cudaEventRecord(ev[4 * i + 1]);
      cudaEventRecord(ev[4 * i + 2]);
      cublas_gemm(h, x, x.d);
      cudaEventRecord(ev[4 * i + 3]);
    }
    ok(cudaDeviceSynchronize(), v.name.c_str());
    std::vector<float> tt, tc;
    for (int i = 0; i < iters; ++i) {
      float a = 0, b = 0;
      cudaEventElapsedTime(&a, ev[4 * i + 0], ev[4 * i + 1]);
      cudaEventElapsedTime(&b, ev[4 * i + 2], ev[4 * i + 3]);
      tt.push_back(a), tc.push_back(b);
    }
    ok(cudaGetLastError(), v.name.c_str());
    double const tm = median(tt), cm = median(tc);
    ratio[vi] = good ? cm / tm : -1.0;
    std::printf("%-46s %5d %5d %6d %8.3f %8.1f %8.1f %7.3f  %s\n", v.name.c_str(), attr.numRegs, int(attr.localSizeBytes),
                t.smem_bytes / 1024, tm, flops / tm / 1e9, flops / cm / 1e9, cm / tm,
                good ? "ok" : chk.describe().c_str());
    std::fflush(stdout);
  }
  std::printf("\nratio to cuBLAS, %s %lldx%lldx%lld (-1: wrong result)\n", tessel::to_string(ab), m, n, k);
  for (std::size_t vi = 0; vi < vs.size(); ++vi) std::printf("%-46s %6.3f\n", vs[vi].name.c_str(), ratio[vi]);
  return failures ? 1 : 0;
}
