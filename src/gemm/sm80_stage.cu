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

// A K-major source (k stride 1) whose rows are not 16-byte aligned: no transpose is needed. A warp
// takes a row (or a segment of one) at a time; lane l makes output chunks l, l + 32, ... (16 bytes each, four in flight)
// from the two aligned 16-byte words of the source that hold the chunk's bytes, shifted into
// place (arch/unaligned_bytes.hpp) -- two 16-byte loads per chunk instead of one narrow load per
// element. Only words inside the row's K elements are read: the chunk that starts the row, those
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
  // Few rows (a skinny operand) are split into segments of whole 128-chunk steps, so every warp
  // of the grid has work; otherwise a warp's task is a whole row.
  std::int64_t const steps = (chunks + 32 * Unroll - 1) / (32 * Unroll);
  std::int64_t const segments = rows >= warps ? 1 : std::min(steps, (warps + rows - 1) / rows);
  std::int64_t const steps_per_segment = (steps + segments - 1) / segments;
  for (std::int64_t task = std::int64_t(blockIdx.x) * WarpsPerCta + threadIdx.x / 32; task < rows * segments; task += warps) {
    std::int64_t const row = task / segments, segment = task % segments;
    std::int64_t const b = row / s.rows, r = row % s.rows;
    std::int64_t const c_end = std::min(chunks, (segment + 1) * steps_per_segment * 32 * Unroll);
    T const* const from = static_cast<T const*>(s.src) + b * s.src_batch + r * s.src_row;
    T* const to = static_cast<T*>(s.dst) + row * s.kp;
    int const offset = int(reinterpret_cast<std::uintptr_t>(from) % 16);  // bytes past an aligned address
    char const* const aligned = reinterpret_cast<char const*>(from) - offset;
    int const span = offset != 0 ? 32 : 16;  // bytes of aligned words a chunk needs
    for (std::int64_t c0 = segment * steps_per_segment * 32 * Unroll + lane; c0 < c_end; c0 += 32 * Unroll) {
      Words4 out[Unroll];
      TESSEL_UNROLL
      for (int u = 0; u < Unroll; ++u) {
        std::int64_t const c = c0 + 32 * u, first = c * 16;  // the chunk's first byte in the row
        if (c >= c_end) continue;
        if (first >= offset && first - offset + span <= k_bytes) {
          Words4 const lo = *reinterpret_cast<Words4 const*>(aligned + first);
          Words4 const hi = offset != 0 ? *reinterpret_cast<Words4 const*>(aligned + first + 16) : lo;
          out[u] = bytes_at(lo, hi, offset);
        } else {
          alignas(16) T e[ChunkElems];
          std::int64_t const k0 = c * ChunkElems;
          TESSEL_UNROLL
          for (int j = 0; j < ChunkElems; ++j) e[j] = k0 + j < s.k ? from[k0 + j] : T(0);
          out[u] = *reinterpret_cast<Words4 const*>(e);
        }
      }
      TESSEL_UNROLL
      for (int u = 0; u < Unroll; ++u) {
        std::int64_t const c = c0 + 32 * u;
        if (c < c_end) *reinterpret_cast<Words4*>(to + c * ChunkElems) = out[u];
      }
    }
  }
}

template <class T>
cudaError_t stage_launch(Sm80StageParams const& s, unsigned grid, cudaStream_t stream) {
  if (s.src_row == 1 && s.src_k != 1) {
    sm80_stage_kernel<T, true><<<grid, kStageThreads, 0, stream>>>(s);
  } else if (s.src_k == 1) {
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
  unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, 132 * 4 * 8));
  if (s.src_k == 1) {  // a warp per row (segment): enough CTAs for the rows, at most 8 per SM for 4 rounds
    std::int64_t const row_ctas = (std::int64_t(s.batch) * s.rows + kStageThreads / 32 - 1) / (kStageThreads / 32);
    grid = static_cast<unsigned>(std::clamp<std::int64_t>(row_ctas, 132 * 8, 132 * 8 * 4));
  }
  switch (s.element_bytes) {
    case 1: return stage_launch<std::uint8_t>(s, grid, stream);
    case 2: return stage_launch<std::uint16_t>(s, grid, stream);
    default: return stage_launch<std::uint32_t>(s, grid, stream);
  }
}

}  // namespace tessel::kernel::detail
