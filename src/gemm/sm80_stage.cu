// src/gemm/sm80_stage.cu -- staging an operand into the form the sm_80 kernels read: K-major
// rows of kp elements (16-byte aligned), zero past K.
//
// Used by the host adapter when an operand is MN-major (transposed) or its pointer, leading
// dimension or batch stride is not a multiple of 16 bytes (cp.async and TMA copy 16-byte aligned
// chunks). One pass over the operand. A K-major source is copied chunk by chunk (narrow loads,
// 16-byte stores); any other goes through 64x64 tiles in shared memory, read along whichever of
// the source's dimensions is contiguous (coalesced 2- or 4-byte loads), written as 16-byte
// stores along K. The CTAs stride over the work, so any size and batch count fits one launch.
#include "sm80_instances.hpp"

#include <tessel/arch/unaligned_bytes.hpp>
#include <tessel/config.hpp>
#include <tessel/numeric/int_types.hpp>

#include <algorithm>
#include <cstdint>

namespace tessel::kernel::detail {

namespace {

constexpr int kStageTile = 64;  // rows x k per tile
constexpr int kStageThreads = 256;
constexpr int kLoadsPerThread = kStageTile * kStageTile / kStageThreads;

// RowsContiguous: the source steps by 1 along rows (an MN-major operand, transposed here);
// otherwise along K (a K-major operand whose rows are not 16-byte aligned). Consecutive threads
// read consecutive elements either way; each thread keeps 16 independent loads in flight, and the
// register cap leaves room for 4 CTAs (32 warps) per SM: enough bytes in flight to stream at
// memory bandwidth with 2-byte loads.
template <class T, bool RowsContiguous>
__global__ void __launch_bounds__(kStageThreads, 4) sm80_stage_kernel(Sm80StageParams const s) {
  // Rows padded to an odd number of 32-bit words: a warp writing one column (the transposed case)
  // hits 32 distinct banks.
  constexpr int Pitch = kStageTile + (sizeof(T) == 4 ? 1 : 4 / int(sizeof(T)));
  __shared__ T tile[kStageTile * Pitch];
  constexpr int ChunkElems = 16 / int(sizeof(T));
  constexpr int ChunksPerRow = kStageTile / ChunkElems;

  std::int64_t const tiles_r = (s.rows + kStageTile - 1) / kStageTile;
  std::int64_t const tiles_k = (s.kp + kStageTile - 1) / kStageTile;
  std::int64_t const tiles = tiles_r * tiles_k * s.batch;
  int const tid = int(threadIdx.x);
  // This thread's element of the tile in load i: (r, k) with the contiguous index fast.
  int const fast = tid % kStageTile, slow0 = tid / kStageTile;  // slow = slow0 + 4 i
  constexpr int SlowStep = kStageThreads / kStageTile;

  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    std::int64_t const b = t / (tiles_r * tiles_k);
    std::int64_t const rt = (t / tiles_k) % tiles_r;
    std::int64_t const kt = t % tiles_k;
    std::int64_t const r0 = rt * kStageTile, k0 = kt * kStageTile;
    int const r_fast = RowsContiguous ? fast : slow0, k_fast = RowsContiguous ? slow0 : fast;
    std::int64_t const gr = r0 + r_fast, gk = k0 + k_fast;
    std::int64_t const step = SlowStep * (RowsContiguous ? s.src_k : s.src_row);
    std::int64_t const slow_left = RowsContiguous ? s.k - gk : s.rows - gr;  // loads i < this are in range
    bool const fast_in = RowsContiguous ? gr < s.rows : gk < s.k;
    T const* src = static_cast<T const*>(s.src) + b * s.src_batch + gr * s.src_row + gk * s.src_k;

    T v[kLoadsPerThread];
    TESSEL_UNROLL
    for (int i = 0; i < kLoadsPerThread; ++i) v[i] = fast_in && SlowStep * i < slow_left ? src[i * step] : T(0);
    TESSEL_UNROLL
    for (int i = 0; i < kLoadsPerThread; ++i) {
      int const r = RowsContiguous ? fast : slow0 + SlowStep * i;
      int const k = RowsContiguous ? slow0 + SlowStep * i : fast;
      tile[r * Pitch + k] = v[i];
    }
    __syncthreads();

    // Store: 16-byte chunks along K (zeros past K were loaded above).
    T* dst = static_cast<T*>(s.dst);
    for (int c = tid; c < kStageTile * ChunksPerRow; c += kStageThreads) {
      int const r = c / ChunksPerRow;
      int const kc = (c % ChunksPerRow) * ChunkElems;
      std::int64_t const orow = r0 + r, ok = k0 + kc;
      if (orow < s.rows && ok < s.kp) {
        alignas(16) T out[ChunkElems];
        TESSEL_UNROLL
        for (int j = 0; j < ChunkElems; ++j) out[j] = tile[r * Pitch + kc + j];
        *reinterpret_cast<uint4*>(dst + (b * s.rows + orow) * s.kp + ok) = *reinterpret_cast<uint4 const*>(out);
      }
    }
    __syncthreads();
  }
}

// 16 aligned bytes, read once (evict-first: the source is not read again; the staged copy is).
__device__ Words4 load_streaming(char const* p) {
  uint4 const v = __ldcs(reinterpret_cast<uint4 const*>(p));
  return {v.x, v.y, v.z, v.w};
}

// A K-major source (k stride 1) whose rows are not 16-byte aligned: no transpose is needed. A
// warp makes 4 x 32 consecutive 16-byte output chunks of a row at a time, lane l chunks l, l + 32,
// l + 64 and l + 96, each from the two aligned 16-byte words of the source that hold its bytes,
// shifted into place (arch/unaligned_bytes.hpp): two 16-byte loads per chunk, not one narrow load
// per element. Only words inside the row's K elements are read: the chunk that starts the row, those
// that reach its end and the zero padding past K are made from narrow loads.
template <class T>
__global__ void __launch_bounds__(kStageThreads) sm80_stage_k_contiguous_kernel(Sm80StageParams const s) {
  constexpr int ChunkElems = 16 / int(sizeof(T));
  constexpr int Unroll = 4;
  constexpr int WarpsPerCta = kStageThreads / 32;
  int const lane = int(threadIdx.x) % 32;
  std::int64_t const chunks = s.kp / ChunkElems;
  std::int64_t const k_bytes = s.k * std::int64_t(sizeof(T));
  std::int64_t const rows = std::int64_t(s.batch) * s.rows;
  std::int64_t const warps = std::int64_t(gridDim.x) * WarpsPerCta;
  // A warp's task: one step of 32 * Unroll chunks of one row (tasks are small and many, so the
  // warps finish together however many rows there are).
  std::int64_t const steps = (chunks + 32 * Unroll - 1) / (32 * Unroll);
  for (std::int64_t task = std::int64_t(blockIdx.x) * WarpsPerCta + threadIdx.x / 32; task < rows * steps; task += warps) {
    std::int64_t const row = task / steps, step = task % steps;
    std::int64_t const b = row / s.rows, r = row % s.rows;
    T const* const from = static_cast<T const*>(s.src) + b * s.src_batch + r * s.src_row;
    T* const to = static_cast<T*>(s.dst) + row * s.kp;
    int const offset = int(reinterpret_cast<std::uintptr_t>(from) % 16);  // bytes past an aligned address
    char const* const aligned = reinterpret_cast<char const*>(from) - offset;
    int const span = offset != 0 ? 32 : 16;  // bytes of aligned words a chunk needs
    std::int64_t const c0 = step * 32 * Unroll + lane;
    // Every chunk's aligned loads are issued before any is used (predicated, no branches between
    // them), so a lane keeps 2 * Unroll 16-byte loads in flight.
    Words4 lo[Unroll], hi[Unroll];
    bool wide[Unroll];
    TESSEL_UNROLL
    for (int u = 0; u < Unroll; ++u) {
      std::int64_t const c = c0 + 32 * u, first = c * 16;  // the chunk's first byte in the row
      wide[u] = c < chunks && first >= offset && first - offset + span <= k_bytes;
      lo[u] = hi[u] = Words4{};
      if (wide[u]) {
        lo[u] = load_streaming(aligned + first);
        if (offset != 0) hi[u] = load_streaming(aligned + first + 16);
      }
    }
    TESSEL_UNROLL
    for (int u = 0; u < Unroll; ++u) {
      std::int64_t const c = c0 + 32 * u;
      if (c >= chunks) continue;
      Words4 out;
      if (wide[u]) {
        out = bytes_at(lo[u], hi[u], offset);
      } else {  // the row's first chunk, its last ones, and the zero padding past K
        alignas(16) T e[ChunkElems];
        std::int64_t const k0 = c * ChunkElems;
        TESSEL_UNROLL
        for (int j = 0; j < ChunkElems; ++j) e[j] = k0 + j < s.k ? from[k0 + j] : T(0);
        out = *reinterpret_cast<Words4 const*>(e);
      }
      *reinterpret_cast<Words4*>(to + c * ChunkElems) = out;
    }
  }
}

// The K-major kernel's grid: one round of resident CTAs (each warp then walks its share of the
// tasks with no CTA waiting for a slot), fewer when there are fewer tasks.
template <class T>
cudaError_t k_contiguous_grid(Sm80StageParams const& s, unsigned* grid) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaError_t err = cudaGetDevice(&dev); err != cudaSuccess) return err;
  if (cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); err != cudaSuccess) return err;
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sm80_stage_k_contiguous_kernel<T>, kStageThreads, 0);
      err != cudaSuccess)
    return err;
  std::int64_t const steps = (s.kp * std::int64_t(sizeof(T)) / 16 + 127) / 128;  // per row, as the kernel counts them
  std::int64_t const task_ctas = (std::int64_t(s.batch) * s.rows * steps + kStageThreads / 32 - 1) / (kStageThreads / 32);
  std::int64_t const resident = std::int64_t(std::max(1, sms)) * std::max(1, per_sm);
  *grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(task_ctas, resident)));
  return cudaSuccess;
}

template <class T>
cudaError_t stage_launch(Sm80StageParams const& s, unsigned grid, cudaStream_t stream) {
  if (s.src_row == 1 && s.src_k != 1) {
    sm80_stage_kernel<T, true><<<grid, kStageThreads, 0, stream>>>(s);
  } else if (s.src_k == 1) {
    if (cudaError_t err = k_contiguous_grid<T>(s, &grid); err != cudaSuccess) return err;
    sm80_stage_k_contiguous_kernel<T><<<grid, kStageThreads, 0, stream>>>(s);
  } else {
    sm80_stage_kernel<T, false><<<grid, kStageThreads, 0, stream>>>(s);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t sm80_stage_operand(Sm80StageParams const& s, cudaStream_t stream) {
  std::int64_t const tiles = ((s.rows + kStageTile - 1) / kStageTile) * ((s.kp + kStageTile - 1) / kStageTile) * s.batch;
  if (tiles == 0) return cudaSuccess;
  unsigned const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, 132 * 4 * 8));
  switch (s.element_bytes) {
    case 1: return stage_launch<std::uint8_t>(s, grid, stream);
    case 2: return stage_launch<std::uint16_t>(s, grid, stream);
    default: return stage_launch<std::uint32_t>(s, grid, stream);
  }
}

}  // namespace tessel::kernel::detail
