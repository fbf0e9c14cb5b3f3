// src/gemm/sm80_stage.cu -- staging an operand into the form the sm_80 kernels read: K-major
// rows of kp elements (16-byte aligned), zero past K.
//
// Used by the host adapter when an operand is MN-major (transposed) or its pointer, leading
// dimension or batch stride is not a multiple of 16 bytes (cp.async and TMA copy 16-byte aligned
// chunks). One pass over the operand. A K-major source is copied chunk by chunk (narrow loads,
// 16-byte stores); any other goes through 64x64 tiles in shared memory, read along whichever of
// the source's dimensions is contiguous (coalesced 2- or 4-byte loads), written as 16-byte
// stores along K. The CTAs stride over the work, so any size and batch count fits one launch; two
// K-major operands share one.
#include "sm80_instances.hpp"

#include <tessel/arch/sm90_cluster.hpp>
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
//
// One launch stages up to two operands (a GEMM's A and B): their tasks are numbered one after the
// other, so the warps finish together and the GEMM waits for one kernel's tail, not two.
constexpr int kKContiguousUnroll = 4;

struct KContiguousJobs {
  Sm80StageParams op[2];
  int count = 1;
};

// Tasks (one step of 32 * Unroll 16-byte chunks of one row) of one operand.
TESSEL_HOST_DEVICE inline std::int64_t k_contiguous_steps(Sm80StageParams const& s, int element_bytes) {
  std::int64_t const chunks = s.kp * element_bytes / 16;
  return (chunks + 32 * kKContiguousUnroll - 1) / (32 * kKContiguousUnroll);
}
TESSEL_HOST_DEVICE inline std::int64_t k_contiguous_tasks(Sm80StageParams const& s, int element_bytes) {
  return std::int64_t(s.batch) * s.rows * k_contiguous_steps(s, element_bytes);
}

template <class T>
__global__ void __launch_bounds__(kStageThreads) sm80_stage_k_contiguous_kernel(KContiguousJobs const jobs) {
  // One round of resident CTAs: the GEMM behind may launch now (its CTAs take SMs as these
  // finish, and wait in griddepcontrol.wait for the copies).
  grid_dependents_launch();
  constexpr int ChunkElems = 16 / int(sizeof(T));
  constexpr int Unroll = kKContiguousUnroll;
  constexpr int WarpsPerCta = kStageThreads / 32;
  int const lane = int(threadIdx.x) % 32;
  std::int64_t const warps = std::int64_t(gridDim.x) * WarpsPerCta;
  std::int64_t const first_tasks = k_contiguous_tasks(jobs.op[0], int(sizeof(T)));
  std::int64_t const all_tasks = first_tasks + (jobs.count > 1 ? k_contiguous_tasks(jobs.op[1], int(sizeof(T))) : 0);
  for (std::int64_t job_task = std::int64_t(blockIdx.x) * WarpsPerCta + threadIdx.x / 32; job_task < all_tasks;
       job_task += warps) {
    bool const second = job_task >= first_tasks;
    Sm80StageParams const& s = jobs.op[second ? 1 : 0];
    std::int64_t const task = second ? job_task - first_tasks : job_task;
    std::int64_t const chunks = s.kp / ChunkElems;
    std::int64_t const k_bytes = s.k * std::int64_t(sizeof(T));
    std::int64_t const steps = k_contiguous_steps(s, int(sizeof(T)));
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
cudaError_t k_contiguous_grid(KContiguousJobs const& jobs, unsigned* grid) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaError_t err = cudaGetDevice(&dev); err != cudaSuccess) return err;
  if (cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); err != cudaSuccess) return err;
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sm80_stage_k_contiguous_kernel<T>, kStageThreads, 0);
      err != cudaSuccess)
    return err;
  std::int64_t tasks = 0;
  for (int i = 0; i < jobs.count; ++i) tasks += k_contiguous_tasks(jobs.op[i], int(sizeof(T)));
  std::int64_t const task_ctas = (tasks + kStageThreads / 32 - 1) / (kStageThreads / 32);
  std::int64_t const resident = std::int64_t(std::max(1, sms)) * std::max(1, per_sm);
  *grid = static_cast<unsigned>(std::max<std::int64_t>(1, std::min(task_ctas, resident)));
  return cudaSuccess;
}

template <class T>
cudaError_t k_contiguous_launch(KContiguousJobs const& jobs, cudaStream_t stream) {
  unsigned grid = 1;
  if (cudaError_t err = k_contiguous_grid<T>(jobs, &grid); err != cudaSuccess) return err;
  sm80_stage_k_contiguous_kernel<T><<<grid, kStageThreads, 0, stream>>>(jobs);
  return cudaGetLastError();
}

template <class T>
cudaError_t transpose_launch(Sm80StageParams const& s, cudaStream_t stream) {
  std::int64_t const tiles = ((s.rows + kStageTile - 1) / kStageTile) * ((s.kp + kStageTile - 1) / kStageTile) * s.batch;
  unsigned const grid = static_cast<unsigned>(std::min<std::int64_t>(tiles, 132 * 4 * 8));
  if (s.src_row == 1 && s.src_k != 1) {
    sm80_stage_kernel<T, true><<<grid, kStageThreads, 0, stream>>>(s);
  } else {
    sm80_stage_kernel<T, false><<<grid, kStageThreads, 0, stream>>>(s);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t stage_all(Sm80StageParams const* ops, int count, cudaStream_t stream) {
  KContiguousJobs jobs;
  jobs.count = 0;
  for (int i = 0; i < count; ++i) {
    Sm80StageParams const& s = ops[i];
    if (s.rows == 0 || s.kp == 0 || s.batch == 0) continue;
    if (s.src_k == 1) {
      jobs.op[jobs.count++] = s;  // K-major: shares one launch with the other operand
    } else if (cudaError_t err = transpose_launch<T>(s, stream); err != cudaSuccess) {
      return err;
    }
  }
  return jobs.count > 0 ? k_contiguous_launch<T>(jobs, stream) : cudaSuccess;
}

}  // namespace

cudaError_t sm80_stage_operands(Sm80StageParams const* ops, int count, cudaStream_t stream) {
  if (count < 1 || count > 2) return cudaErrorInvalidValue;
  if (count == 2 && ops[0].element_bytes != ops[1].element_bytes) {
    if (cudaError_t err = sm80_stage_operands(ops, 1, stream); err != cudaSuccess) return err;
    return sm80_stage_operands(ops + 1, 1, stream);
  }
  switch (ops[0].element_bytes) {
    case 1: return stage_all<std::uint8_t>(ops, count, stream);
    case 2: return stage_all<std::uint16_t>(ops, count, stream);
    default: return stage_all<std::uint32_t>(ops, count, stream);
  }
}

}  // namespace tessel::kernel::detail
