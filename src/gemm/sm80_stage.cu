// src/gemm/sm80_stage.cu -- staging an operand into the form the sm_80 kernels read: K-major
// rows of kp elements (16-byte aligned), zero past K.
//
// Used by the host adapter when an operand is MN-major (transposed) or its pointer, leading
// dimension or batch stride is not a multiple of 16 bytes (cp.async copies 16-byte aligned
// chunks). One pass over the operand: 64x64 tiles through shared memory, read along whichever of
// the source's dimensions is contiguous (coalesced 2- or 4-byte loads), written as 16-byte stores
// along K. The CTAs stride over the tiles, so any size and batch count fits one launch.
#include "sm80_instances.hpp"

#include <tessel/config.hpp>
#include <tessel/numeric/int_types.hpp>

#include <algorithm>
#include <cstdint>

namespace tessel::kernel::detail {

namespace {

constexpr int kStageTile = 64;     // rows x k per tile
constexpr int kStageThreads = 256;

template <class T>
__global__ void __launch_bounds__(kStageThreads) sm80_stage_kernel(Sm80StageParams const s) {
  // Rows padded to an odd number of 32-bit words: a warp writing one column (MN-major source)
  // hits 32 distinct banks.
  constexpr int Pitch = kStageTile + (sizeof(T) == 2 ? 2 : 1);
  __shared__ T tile[kStageTile * Pitch];
  constexpr int ChunkElems = 16 / int(sizeof(T));
  constexpr int ChunksPerRow = kStageTile / ChunkElems;

  std::int64_t const tiles_r = (s.rows + kStageTile - 1) / kStageTile;
  std::int64_t const tiles_k = (s.kp + kStageTile - 1) / kStageTile;
  std::int64_t const tiles = tiles_r * tiles_k * s.batch;
  T const* src = static_cast<T const*>(s.src);
  T* dst = static_cast<T*>(s.dst);
  bool const rows_contiguous = s.src_row == 1 && s.src_k != 1;  // MN-major: read along rows

  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    std::int64_t const b = t / (tiles_r * tiles_k);
    std::int64_t const rt = (t / tiles_k) % tiles_r;
    std::int64_t const kt = t % tiles_k;
    std::int64_t const r0 = rt * kStageTile, k0 = kt * kStageTile;
    T const* sb = src + b * s.src_batch;

    // Load: consecutive threads along the source's contiguous dimension.
    TESSEL_UNROLL
    for (int i = 0; i < kStageTile * kStageTile / kStageThreads; ++i) {
      int const e = int(threadIdx.x) + i * kStageThreads;
      int const r = rows_contiguous ? e % kStageTile : e / kStageTile;
      int const k = rows_contiguous ? e / kStageTile : e % kStageTile;
      std::int64_t const gr = r0 + r, gk = k0 + k;
      T v = T(0);
      if (gr < s.rows && gk < s.k) v = sb[gr * s.src_row + gk * s.src_k];
      tile[r * Pitch + k] = v;
    }
    __syncthreads();

    // Store: 16-byte chunks along K.
    for (int c = int(threadIdx.x); c < kStageTile * ChunksPerRow; c += kStageThreads) {
      int const r = c / ChunksPerRow;
      int const kc = (c % ChunksPerRow) * ChunkElems;
      std::int64_t const gr = r0 + r, gk = k0 + kc;
      if (gr < s.rows && gk < s.kp) {
        alignas(16) T v[ChunkElems];
        TESSEL_UNROLL
        for (int j = 0; j < ChunkElems; ++j) v[j] = tile[r * Pitch + kc + j];
        *reinterpret_cast<uint4*>(dst + (b * s.rows + gr) * s.kp + gk) = *reinterpret_cast<uint4 const*>(v);
      }
    }
    __syncthreads();
  }
}

}  // namespace

cudaError_t sm80_stage_operand(Sm80StageParams const& s, cudaStream_t stream) {
  std::int64_t const tiles = ((s.rows + kStageTile - 1) / kStageTile) * ((s.kp + kStageTile - 1) / kStageTile) * s.batch;
  if (tiles == 0) return cudaSuccess;
  unsigned const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, 132 * 16));
  if (s.element_bytes == 2) {
    sm80_stage_kernel<std::uint16_t><<<grid, kStageThreads, 0, stream>>>(s);
  } else {
    sm80_stage_kernel<std::uint32_t><<<grid, kStageThreads, 0, stream>>>(s);
  }
  return cudaGetLastError();
}

}  // namespace tessel::kernel::detail
