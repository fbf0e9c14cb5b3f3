// bench/l2_partition_probe.cu -- which half of the L2 each SM sits beside (a diagnostic, target
// bench_l2_partition_probe; what it found on an H100: docs/PERF.md, session 26).
//
// The H100's L2 is two partitions joined by a fabric. An atomic is carried out at its line's home
// slice and never cached on the SM's side, so its latency from an SM says whether the line lives
// in the SM's own partition or across the fabric. One CTA per SM (the shared-memory request keeps
// a second one off) times chains of dependent atomics to the same lines; for each line the SMs
// fall into a fast and a slow group, and SMs beside the same partition share their pattern of
// fast lines. Prints the groups of SMs and the latencies behind them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <vector>

constexpr int kLines = 96;       // lines probed (each 128 bytes apart by a large stride)
constexpr int kChain = 8;        // dependent atomics per timing
constexpr int kRepeats = 3;      // timings per line, the least kept

__global__ void probe(unsigned* buffer, std::uint32_t const* offsets, unsigned* latency, int* sm_of_block) {
  extern __shared__ char hold[];  // only to keep one CTA per SM
  if (threadIdx.x != 0) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  sm_of_block[blockIdx.x] = int(smid);
  hold[0] = 0;
  for (int step = 0; step < kLines; ++step) {
    int const line = (step + int(blockIdx.x) * 7) % kLines;  // a different order per CTA: less contention
    unsigned best = ~0u;
    for (int r = 0; r < kRepeats; ++r) {
      unsigned v = 0;
      unsigned* p = buffer + offsets[line];
      long long const t0 = clock64();
      for (int i = 0; i < kChain; ++i) {
        v = atomicAdd(p + v, 0u);  // the buffer is zero: the same line, but the address waits for v
      }
      unsigned sink;
      asm volatile("mov.u32 %0, %1;" : "=r"(sink) : "r"(v));
      long long const t1 = clock64();
      if (sink == 12345u) buffer[0] = 1;  // never; keeps sink
      best = min(best, unsigned((t1 - t0) / kChain));
    }
    latency[blockIdx.x * kLines + line] = best;
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("# %s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
  std::size_t const words = std::size_t(64) << 20;  // 256 MB
  unsigned* buffer = nullptr;
  cudaMalloc(&buffer, words * 4);
  cudaMemset(buffer, 0, words * 4);
  std::vector<std::uint32_t> offsets(kLines);
  std::mt19937 rng(7);
  for (int i = 0; i < kLines; ++i) offsets[i] = std::uint32_t((std::uint64_t(rng()) % (words / 32)) * 32);  // 128-byte lines
  std::uint32_t* d_offsets = nullptr;
  cudaMalloc(&d_offsets, kLines * 4);
  cudaMemcpy(d_offsets, offsets.data(), kLines * 4, cudaMemcpyHostToDevice);
  int const blocks = sms;
  unsigned* d_latency = nullptr;
  int* d_sm = nullptr;
  cudaMalloc(&d_latency, std::size_t(blocks) * kLines * 4);
  cudaMalloc(&d_sm, blocks * 4);
  int const smem = 200 * 1024;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  probe<<<blocks, 32, smem>>>(buffer, d_offsets, d_latency, d_sm);  // warm-up
  probe<<<blocks, 32, smem>>>(buffer, d_offsets, d_latency, d_sm);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("probe failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<unsigned> latency(std::size_t(blocks) * kLines);
  std::vector<int> sm_of(blocks);
  cudaMemcpy(latency.data(), d_latency, latency.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(sm_of.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost);

  // Per line: the threshold halfway between the fastest and slowest SM's latency.
  std::vector<std::string> pattern(blocks, std::string(kLines, '.'));
  std::vector<unsigned> near_sum(blocks, 0), far_sum(blocks, 0), near_n(blocks, 0), far_n(blocks, 0);
  for (int l = 0; l < kLines; ++l) {
    unsigned lo = ~0u, hi = 0;
    for (int b = 0; b < blocks; ++b) lo = std::min(lo, latency[b * kLines + l]), hi = std::max(hi, latency[b * kLines + l]);
    unsigned const mid = (lo + hi) / 2;
    for (int b = 0; b < blocks; ++b) {
      unsigned const t = latency[b * kLines + l];
      if (t <= mid) {
        pattern[b][l] = 'n', near_sum[b] += t, ++near_n[b];
      } else {
        far_sum[b] += t, ++far_n[b];
      }
    }
  }
  std::map<std::string, std::vector<int>> groups;
  for (int b = 0; b < blocks; ++b) groups[pattern[b]].push_back(sm_of[b]);
  std::printf("# %zu patterns over %d SMs\n", groups.size(), blocks);
  int g = 0;
  for (auto& [pat, members] : groups) {
    std::sort(members.begin(), members.end());
    std::printf("group %d: %zu SMs, pattern %s\n  SMs:", g++, members.size(), pat.c_str());
    for (int sm : members) std::printf(" %d", sm);
    std::printf("\n");
  }
  std::printf("# per SM: smid near-lines near-mean far-mean (cycles)\n");
  std::vector<int> order(blocks);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return sm_of[a] < sm_of[b]; });
  for (int b : order)
    std::printf("sm %3d  %2u  %4u  %4u\n", sm_of[b], near_n[b], near_n[b] ? near_sum[b] / near_n[b] : 0,
                far_n[b] ? far_sum[b] / far_n[b] : 0);
  return 0;
}
