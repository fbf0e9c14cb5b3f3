// examples/tutorial/rungs.cpp -- the ladder, in order (for the driver and the tests).
#include "tutorial.hpp"

#include <array>

namespace tutorial {

namespace {
std::array<Rung, 8> const kRungs = {{
    {1, "01_naive.cu", "one thread per output; consecutive threads take consecutive rows", launch_01_naive},
    {2, "02_coalescing.cu", "consecutive threads take consecutive columns: B and C accesses coalesce", launch_02_coalescing},
    {3, "03_smem_tiling.cu", "32x32 tiles of A and B staged in shared memory, reused by 32 threads each", launch_03_smem_tiling},
    {4, "04_1d_thread_tiling.cu", "each thread computes 8 outputs of a column: one B value feeds 8 FMAs", launch_04_1d_thread_tiling},
    {5, "05_2d_thread_tiling.cu", "each thread computes an 8x8 block: outer products of 8 A and 8 B values", launch_05_2d_thread_tiling},
    {6, "06_vectorized.cu", "128-bit global and shared loads; A stored transposed in shared memory", launch_06_vectorized},
    {7, "07_warp_tiling.cu", "a warp owns a 32x64 block, lanes take interleaved 4x4 sub-tiles: no bank conflicts", launch_07_warp_tiling},
    {8, "08_double_buffering.cu", "two shared-memory stages: next tile's loads overlap this tile's FMAs", launch_08_double_buffering},
}};
}  // namespace

std::span<Rung const> rungs() { return kRungs; }

}  // namespace tutorial
