// bench/sm80_peak.cu -- ceilings for the sm_80 mainloop experiment (bench_sm80_variants --peak 1):
// what mma.sync alone, and mma.sync fed by ldmatrix in the 64x64 warp tile's proportions, reach
// on this GPU, with no global memory and (but for one mode) no barriers. Every warp of one CTA per
// SM loops over k-blocks of its 64x64 tile: 4 A fragments (m16k16) x 8 B fragments (n8k16), 32
// HMMAs per k-block (tf32: m16k8 / n8k8, 32 HMMAs of half the work).
//   hmma        the 32 HMMAs only (fragments fixed in registers)
//   ldsm+hmma   8 ldmatrix.x4 (4 for A, 4 for B: 4 KiB) per k-block, double-buffered, conflict-free
//   +bar        the same with __syncthreads() every 4 k-blocks (one 128x256x64 k-tile)
//   +cp.async   and a 128x256x64 k-tile's copies: 12 16-byte cp.async per thread of 256 (48 KiB per
//               CTA, 4 in each of the first 3 k-blocks, one commit group), from a 3 MiB global
//               buffer that stays in L2, into a 3-stage ring of 144 KiB (over the ldmatrix's memory:
//               the values do not matter); cp.async.wait_group 1 before
//               the barrier. The mainloop of 128x256x64 without DRAM, prologue or epilogue.
//   nserp       ldsm+hmma with the MMAs in Sm80MmaOrder::n_serpentine order (B reused) instead of m
//               outer (A reused)
// Printed as TFLOP/s, for 8 warps per SM (the kernels' occupancy) and 4 (one warp per scheduler).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace tessel::bench {

namespace {

enum class PeakMode { hmma, ldsm_hmma, ldsm_hmma_bar, ldsm_hmma_bar_cp, ldsm_hmma_nserp };

template <bool Tf32>
__device__ __forceinline__ void mma(float (&c)[4], std::uint32_t const (&a)[4], std::uint32_t const (&b)[2]) {
  if constexpr (Tf32) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// zero: 0 at run time (the compiler cannot prove it, so ldmatrix addresses vary with the loop and
// are neither hoisted nor merged).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, void const* src) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

template <PeakMode Mode, bool Tf32>
__global__ void __launch_bounds__(256, 1) peak_kernel(float* out, int k_blocks, int zero, uint4 const* src) {
  extern __shared__ __align__(128) unsigned char smem[];
  int const lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  // Each warp reads its own 16 KiB (four k-blocks' fragments, 4 KiB each); lane l addresses
  // 16-byte row l of a 512-byte ldmatrix.x4 block: every phase of 8 lanes covers 128 contiguous
  // bytes (no conflict).
  std::uint32_t const base = std::uint32_t(__cvta_generic_to_shared(smem)) + std::uint32_t(warp) * 16384u + std::uint32_t(lane) * 16u;
  for (int i = int(threadIdx.x); i < 128 * 1024 / 4; i += int(blockDim.x))
    reinterpret_cast<std::uint32_t*>(smem)[i] = 0x3c003c00u ^ std::uint32_t(i & 0x00ff00ff);
  __syncthreads();
  float acc[4][8][4];
  std::uint32_t a[2][4][4], b[2][8][2];
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 8; ++n)
      for (int e = 0; e < 4; ++e) acc[m][n][e] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    for (int m = 0; m < 4; ++m)
      for (int e = 0; e < 4; ++e) a[s][m][e] = 0x3c003c00u + std::uint32_t(lane + m + e + s);
    for (int n = 0; n < 8; ++n)
      for (int e = 0; e < 2; ++e) b[s][n][e] = 0x3c003c00u + std::uint32_t(lane * 3 + n + e + s);
  }
  // +cp.async: a 144 KiB ring over the memory the ldmatrix read (the values do not matter);
  // thread t writes chunks t + 256 i of a stage.
  std::uint32_t const ring = std::uint32_t(__cvta_generic_to_shared(smem)) + std::uint32_t(threadIdx.x) * 16u;
  constexpr int KTileChunks = 3 * 1024;  // 48 KiB in 16-byte chunks
  int stage = 0;
#pragma unroll 1
  for (int kb = 0; kb < k_blocks; kb += 4) {
    std::uint32_t const iter_base = base + std::uint32_t(kb & zero);
    uint4 const* tile_src = src + std::size_t((int(blockIdx.x) * 7 + kb / 4) % 64) * KTileChunks + threadIdx.x;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (Mode == PeakMode::ldsm_hmma_bar_cp) {
        if (j < 3) {
#pragma unroll
          for (int i = 0; i < 4; ++i)
            cp_async_16(ring + std::uint32_t(stage) * 49152u + std::uint32_t(4 * j + i) * 4096u, tile_src + (4 * j + i) * 256);
        }
        if (j == 2) asm volatile("cp.async.commit_group;\n" ::);
      }
      int const cur = Mode == PeakMode::hmma ? 0 : j % 2, nxt = 1 - cur;
      if constexpr (Mode == PeakMode::ldsm_hmma_bar_cp) {
        if (j == 3) stage = stage == 2 ? 0 : stage + 1;
      }
      if constexpr (Mode != PeakMode::hmma) {
        std::uint32_t const blk = iter_base + std::uint32_t((j + 1) % 4) * 4096u;
#pragma unroll
        for (int m = 0; m < 4; ++m) ldsm_x4(a[nxt][m], blk + std::uint32_t(m) * 512u);
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          std::uint32_t r[4];
          ldsm_x4(r, blk + 2048u + std::uint32_t(n) * 512u);
          b[nxt][2 * n][0] = r[0], b[nxt][2 * n][1] = r[1], b[nxt][2 * n + 1][0] = r[2], b[nxt][2 * n + 1][1] = r[3];
        }
      }
      if constexpr (Mode == PeakMode::ldsm_hmma_nserp) {
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            int const m = n % 2 == 0 ? i : 3 - i;
            mma<Tf32>(acc[m][n], a[cur][m], b[cur][n]);
          }
      } else {
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int n = 0; n < 8; ++n) mma<Tf32>(acc[m][n], a[cur][m], b[cur][n]);
      }
      if constexpr (Mode == PeakMode::ldsm_hmma_bar || Mode == PeakMode::ldsm_hmma_bar_cp) {
        if (j == 3) {
          if constexpr (Mode == PeakMode::ldsm_hmma_bar_cp) asm volatile("cp.async.wait_group 1;\n" ::);
          __syncthreads();
        }
      }
    }
  }
  float sum = 0.0f;
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 8; ++n)
      for (int e = 0; e < 4; ++e) sum += acc[m][n][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <PeakMode Mode, bool Tf32>
double peak_tflops(int sms, int threads, float* out, uint4 const* src) {
  auto* k = &peak_kernel<Mode, Tf32>;
  int const smem = Mode == PeakMode::ldsm_hmma_bar_cp ? 144 * 1024 : 128 * 1024;
  if (Mode == PeakMode::ldsm_hmma_bar_cp && threads != 256) return 0.0;  // the copies assume 256 threads
  if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) return -1.0;
  int const k_blocks = 4096;
  k<<<sms, threads, smem>>>(out, 64, 0, src);  // warm-up
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    k<<<sms, threads, smem>>>(out, k_blocks, 0, src);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    best = ms < best ? ms : best;
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  if (cudaGetLastError() != cudaSuccess) return -1.0;
  double const flop_per_hmma = Tf32 ? 2.0 * 16 * 8 * 8 : 2.0 * 16 * 8 * 16;
  double const flops = double(sms) * (threads / 32) * double(k_blocks) * 32 * flop_per_hmma;
  return flops / best / 1e9;
}

}  // namespace

// Prints one line per mode and warps per SM; returns 0, or 1 after a CUDA error.
int run_peak_bench() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  float* out = nullptr;
  uint4* src = nullptr;  // +cp.async's source: 64 k-tiles of 48 KiB
  if (cudaMalloc(&out, std::size_t(sms) * 256 * sizeof(float)) != cudaSuccess) return 1;
  if (cudaMalloc(&src, std::size_t(64) * 48 * 1024) != cudaSuccess) return 1;
  cudaMemset(src, 0, std::size_t(64) * 48 * 1024);
  std::printf("ceilings: one CTA per SM, every warp a 64x64 tile, 32 mma.sync per k-block, best of 5 (TFLOP/s)\n");
  std::printf("%-34s %10s %10s\n", "mode", "8 warps", "4 warps");
  auto line = [&](char const* name, auto f) { std::printf("%-34s %10.1f %10.1f\n", name, f(256), f(128)); };
  line("bf16 hmma", [&](int t) { return peak_tflops<PeakMode::hmma, false>(sms, t, out, src); });
  line("bf16 ldsm+hmma", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma, false>(sms, t, out, src); });
  line("bf16 ldsm+hmma nserp", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma_nserp, false>(sms, t, out, src); });
  line("bf16 ldsm+hmma+bar/4kb", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma_bar, false>(sms, t, out, src); });
  line("bf16 ldsm+hmma+bar+cp.async", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma_bar_cp, false>(sms, t, out, src); });
  line("tf32 hmma", [&](int t) { return peak_tflops<PeakMode::hmma, true>(sms, t, out, src); });
  line("tf32 ldsm+hmma", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma, true>(sms, t, out, src); });
  line("tf32 ldsm+hmma nserp", [&](int t) { return peak_tflops<PeakMode::ldsm_hmma_nserp, true>(sms, t, out, src); });
  cudaFree(out);
  cudaFree(src);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace tessel::bench
