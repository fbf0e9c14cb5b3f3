// bench/copy_bandwidth.cu -- the device memory bandwidth a kernel can hope for, measured in the
// same run as the GEMMs it bounds (scripts/bench.sh skinny): a memory-bound GEMM's floor is the
// bytes it must move divided by this.
//
//   bench_copy_bandwidth [--mib 1024] [--iters 20]
//
// copy: cudaMemcpyAsync device -> device of `mib` MiB, bytes read + written per second.
// read: a kernel that reads the buffer with 16-byte loads (every SM, 8 loads in flight per
//       thread) and keeps one sum per CTA: bytes read per second (a GEMM streaming its long
//       operand mostly reads).
// Each is timed with CUDA events around one operation, after 3 warm-ups; the median of `iters`.
// Prints one line each: "copy_gbs <GB/s>" and "read_gbs <GB/s>" (GB = 1e9 bytes), then the
// details. Exit 1 with a message when there is no GPU or a CUDA call fails.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kReadThreads = 256;
constexpr int kReadUnroll = 8;

__global__ void __launch_bounds__(kReadThreads) read_kernel(uint4 const* __restrict__ src, std::size_t n, unsigned* out) {
  unsigned acc = 0;
  std::size_t const stride = std::size_t(gridDim.x) * kReadThreads;
  std::size_t i = std::size_t(blockIdx.x) * kReadThreads + threadIdx.x;
  for (; i + (kReadUnroll - 1) * stride < n; i += kReadUnroll * stride) {
    uint4 v[kReadUnroll];
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    uint4 const v = __ldcs(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) out[blockIdx.x] = acc;  // keeps the loads; almost never stores
}

bool ok(cudaError_t e, char const* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "bench_copy_bandwidth: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

template <class Op>
bool median_ms(Op op, int iters, double* out) {
  cudaEvent_t start, stop;
  if (!ok(cudaEventCreate(&start), "cudaEventCreate") || !ok(cudaEventCreate(&stop), "cudaEventCreate")) return false;
  for (int i = 0; i < 3; ++i) op();
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(start);
    op();
    cudaEventRecord(stop);
    if (!ok(cudaEventSynchronize(stop), "timed operation")) return false;
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  *out = ms[ms.size() / 2];
  return ok(cudaGetLastError(), "the timed operations");
}

}  // namespace

int main(int argc, char** argv) {
  long long mib = 1024;
  int iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mib")) mib = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_copy_bandwidth [--mib 1024] [--iters 20]\n");
      return 2;
    }
  }
  if (mib < 1 || iters < 1) {
    std::fprintf(stderr, "bench_copy_bandwidth: --mib and --iters must be >= 1\n");
    return 2;
  }
  int dev = 0, sms = 0;
  cudaDeviceProp prop{};
  if (!ok(cudaGetDevice(&dev), "cudaGetDevice") || !ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties"))
    return 1;
  sms = prop.multiProcessorCount;
  std::size_t const bytes = std::size_t(mib) << 20;
  void *a = nullptr, *b = nullptr;
  unsigned* sink = nullptr;
  if (!ok(cudaMalloc(&a, bytes), "cudaMalloc") || !ok(cudaMalloc(&b, bytes), "cudaMalloc") ||
      !ok(cudaMalloc(&sink, sizeof(unsigned) * sms * 8), "cudaMalloc") || !ok(cudaMemset(a, 1, bytes), "cudaMemset"))
    return 1;

  double copy_ms = 0, read_ms = 0;
  if (!median_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }, iters, &copy_ms)) return 1;
  int const grid = sms * 8;  // 8 CTAs of 256 threads per SM: 64 warps, each thread 8 x 16 bytes in flight
  if (!median_ms([&] { read_kernel<<<grid, kReadThreads>>>(static_cast<uint4 const*>(a), bytes / 16, sink); }, iters,
                 &read_ms))
    return 1;
  double const copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e-3) / 1e9;
  double const read_gbs = double(bytes) / (read_ms * 1e-3) / 1e9;
  std::printf("copy_gbs %.1f\nread_gbs %.1f\n", copy_gbs, read_gbs);
  std::printf("%s, %d SMs: %lld MiB, median of %d: copy (D2D, read + write) %.3f ms, read %.3f ms\n", prop.name, sms, mib,
              iters, copy_ms, read_ms);
  cudaFree(a);
  cudaFree(b);
  cudaFree(sink);
  return 0;
}
