// bench_api_overhead: what one call of tessel::gemm (and of cublasGemmEx on the same problem)
// costs the host, against what its kernels cost the GPU -- for small problems, where the two are
// of the same size and the CLI's per-call event timing (which starts before the host enqueues)
// sees the larger.
//
//   bench_api_overhead [MxNxK[+P][/S][@KERNEL] ...]
//                                         (bf16 in and out, fp32 accumulation, "tn": A and B K-major,
//                                         their rows K + P elements apart; P = 0 by default; S the
//                                         K slices per tile, as `tessel gemm --tune splits=S`; KERNEL
//                                         a registry name, as `tessel gemm --kernel`, else the heuristic)
//
// Per problem and side, three numbers in microseconds:
//   host   wall time of one call that only enqueues (median over 200 calls, the stream kept busy
//          by a sleeping kernel first, so no call waits for the GPU);
//   alone  GPU time between events around one call on an idle stream (the CLI's measure);
//   queued GPU time per call of 200 calls enqueued back to back behind a busy stream (kernels only).
#include <tessel/gemm.hpp>
#include <tessel/reference/gemm_device.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_api_overhead: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void hold_gpu(long long ns) {
  long long const start = clock64();
  while (clock64() - start < ns * 2) {  // ~2 clocks a nanosecond: long enough to cover the enqueues
  }
}

struct Times {
  double host, alone, queued;
};

Times measure(std::function<void()> const& call, cudaStream_t stream) {
  constexpr int kCalls = 200;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  for (int i = 0; i < 10; ++i) call();  // warm-up: first-call caches, lazy module loading
  check(cudaStreamSynchronize(stream), "warm-up");

  // Host: enqueue-only wall time, the GPU busy meanwhile.
  hold_gpu<<<1, 1, 0, stream>>>(20'000'000);
  std::vector<double> host;
  for (int i = 0; i < kCalls; ++i) {
    auto const t0 = std::chrono::steady_clock::now();
    call();
    host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  check(cudaStreamSynchronize(stream), "host");
  std::nth_element(host.begin(), host.begin() + kCalls / 2, host.end());

  // Alone: one call between events on an idle stream, as the CLI times it.
  std::vector<float> alone;
  for (int i = 0; i < 50; ++i) {
    check(cudaStreamSynchronize(stream), "alone");
    check(cudaEventRecord(e0, stream), "cudaEventRecord");
    call();
    check(cudaEventRecord(e1, stream), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "alone");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    alone.push_back(1000.0f * ms);
  }
  std::nth_element(alone.begin(), alone.begin() + 25, alone.end());

  // Queued: back to back behind a busy stream, so the host is never what the GPU waits for.
  hold_gpu<<<1, 1, 0, stream>>>(20'000'000);
  check(cudaEventRecord(e0, stream), "cudaEventRecord");
  for (int i = 0; i < kCalls; ++i) call();
  check(cudaEventRecord(e1, stream), "cudaEventRecord");
  check(cudaEventSynchronize(e1), "queued");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
  check(cudaEventDestroy(e0), "cudaEventDestroy");
  check(cudaEventDestroy(e1), "cudaEventDestroy");
  return {host[kCalls / 2], double(alone[25]), 1000.0 * ms / kCalls};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes(argv + 1, argv + argc);
  if (shapes.empty()) shapes = {"512x512x512", "1000x1000x1000", "1024x1024x1024", "256x256x4096", "16x4096x4096"};
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS || cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_api_overhead: cuBLAS would not start\n");
    return 1;
  }
  std::printf("%-18s %-28s %8s %8s %8s   %8s %8s %8s\n", "problem", "tessel kernel", "host", "alone", "queued",
              "cuBLAS:h", "alone", "queued");
  for (std::string const& s : shapes) {
    long long m = 0, n = 0, k = 0, pad = 0, splits = 0;
    std::string::size_type const at = s.find('@');
    std::string const name = at == std::string::npos ? "" : s.substr(at + 1);
    std::string shape = s.substr(0, at);
    if (std::string::size_type const slash = shape.find('/'); slash != std::string::npos) {
      char* end = nullptr;
      splits = std::strtoll(shape.c_str() + slash + 1, &end, 10);
      if (*end != '\0' || splits < 1) splits = -1;
      shape.resize(slash);
    }
    int const fields = std::sscanf(shape.c_str(), "%lldx%lldx%lld+%lld", &m, &n, &k, &pad);
    if (fields < 3 || m < 1 || n < 1 || k < 1 || pad < 0 || splits < 0) {
      std::fprintf(stderr, "bench_api_overhead: problem '%s' is not MxNxK[+P][/S][@KERNEL] with positive extents (P: elements of padding per row of A and B; S: K slices, at least 1)\n", s.c_str());
      return 2;
    }
    if (at != std::string::npos && tessel::find_gemm_kernel(name) == nullptr) {
      std::fprintf(stderr, "bench_api_overhead: problem '%s': no kernel named '%s' (tessel list)\n", s.c_str(), name.c_str());
      return 2;
    }
    // BLAS "tn": op(A) = A^T with A stored K x M column-major, B K x N column-major, D M x N
    // column-major -- in tessel's terms A row-major M x K, B column-major K x N, D column-major.
    tessel::GemmArguments g = tessel::make_packed_gemm(m, n, k, 1, tessel::DType::bf16, tessel::DType::bf16,
                                                       tessel::MatrixOrder::row_major, tessel::MatrixOrder::col_major,
                                                       tessel::MatrixOrder::col_major);
    long long const ld = k + pad;  // A's and B's rows (K-major) are ld elements apart
    g.lda = g.ldb = ld;
    void *a = nullptr, *b = nullptr, *d = nullptr;
    check(cudaMalloc(&a, std::size_t(m * ld) * 2), "cudaMalloc A");
    check(cudaMalloc(&b, std::size_t(n * ld) * 2), "cudaMalloc B");
    check(cudaMalloc(&d, std::size_t(m * n) * 2), "cudaMalloc D");
    // Random inputs, as the CLI's: a constant fill lets the tensor cores run below the power cap,
    // and large problems then read ~15% faster on either side.
    if (!tessel::reference::fill_uniform_device(a, tessel::DType::bf16, m * ld, 1) ||
        !tessel::reference::fill_uniform_device(b, tessel::DType::bf16, n * ld, 2)) {
      std::fprintf(stderr, "bench_api_overhead: filling A and B failed\n");
      return 1;
    }
    check(cudaDeviceSynchronize(), "fill A and B");
    g.a = a, g.b = b, g.c = d, g.d = d;
    if (!name.empty()) g.kernel = name.c_str();
    g.options.splits = int(splits);
    std::string kernel = "?";
    if (tessel::Status st = tessel::gemm(g, stream); !st) {
      std::fprintf(stderr, "bench_api_overhead: tessel::gemm %s: %s\n", s.c_str(), st.reason.c_str());
      return 1;
    }
    if (auto const* info = tessel::select_gemm_kernel(g)) kernel = info->name;
    Times const t = measure([&] { (void)tessel::gemm(g, stream); }, stream);
    float const one = 1.0f, zero = 0.0f;
    auto const blas = [&] {
      (void)cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(k), &one, a, CUDA_R_16BF, int(ld), b,
                         CUDA_R_16BF, int(ld), &zero, d, CUDA_R_16BF, int(m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    Times const c = measure(blas, stream);
    std::printf("%-18s %-28s %8.2f %8.2f %8.2f   %8.2f %8.2f %8.2f\n", s.c_str(), kernel.c_str(), t.host, t.alone,
                t.queued, c.host, c.alone, c.queued);
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
    check(cudaFree(d), "cudaFree");
  }
  cublasDestroy(handle);
  return 0;
}
