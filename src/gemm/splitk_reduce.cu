// src/gemm/splitk_reduce.cu -- the fix-up of a parallel split-K GEMM: D = act(alpha * sum of the
// fp32 partial products of the K slices + beta * C + bias), in slice order (deterministic). With
// one slice it is the fused epilogue (bias, activation) of a kernel that has none (the SIMT
// kernels): their fp32 result, in a workspace or in place in an fp32 D, becomes D.
//
// The slices are fp32 (rows x cols) matrices: slice s of batch b at
// partials + s * batch * rows * cols + b * partials_batch_stride, rows partials_ld apart (packed by
// default). D and C are row-major (rows x cols) with their own
// leading dimensions and batch strides (the canonical D of the tensor-core adapters), or with
// `transposed` column-major (a skinny kernel ran the swapped problem): then consecutive threads
// take consecutive rows, so D's stores stay contiguous.
//
// The GEMM's kernel and this one are a split-K call's whole GPU cost beyond the unsplit kernel, so
// this one is kept short: four elements a thread where D's rows allow (float4 reads of the
// partials), 32-bit index arithmetic where the problem fits, and a programmatic dependent launch.
// H100 (bench_api_overhead, GPU time a call, queued): 512^3 in 2 slices 11.1 -> 7.1 us against the
// one-element, 64-bit, plain-launched form; the launch attribute alone is ~2.5 us of that
// (128x1024x4096: 12.2 -> 9.8 us).
#include "gemm_canonical.hpp"
#include "sm90_instances.hpp"

#include <tessel/arch/sm90_cluster.hpp>
#include <tessel/gemm/epilogue/epilogue_fusion.hpp>
#include <tessel/gemm/kernel/element_io.hpp>

#include <algorithm>
#include <cstdint>

namespace tessel::kernel::detail {

namespace {

// Four consecutive elements of D (and C) per thread where rows allow it: the slices' partials
// read as float4s, D written in 16-byte (fp32) or 8-byte (16-bit) stores.
bool four_wide(SplitKReduceParams const& p, std::size_t element_bytes) {
  using tessel::detail::vector_aligned;
  return !p.transposed && p.cols % 4 == 0 && vector_aligned(p.partials, p.partials_ld, p.partials_batch_stride, p.batch, sizeof(float), 4) &&
         vector_aligned(p.d, p.ldd, p.batch_stride_d, p.batch, element_bytes, 4) &&
         (p.beta == 0.0f || vector_aligned(p.c, p.ldc, p.batch_stride_c, p.batch, element_bytes, 4));
}

// Thread i takes elements [V * i, V * i + V) of the flattened (batch, row, column) index space --
// in the transposed case (V = 1) of (batch, column, row), so that consecutive threads write
// consecutive elements of D. I: the index type, 32-bit where the element count allows (the
// divisions below are then a few instructions instead of a 64-bit division routine each). Fused:
// the fused epilogue (bias, activation) is compiled in -- its own instances, since the unfused
// ones, without its code in the loop, run a split-K call's fix-up 0.3-0.5 us faster.
template <class T, int V, class I, bool Fused>
__global__ void splitk_reduce_kernel(SplitKReduceParams const p) {
  // Launched as a programmatic dependent of the GEMM: its partials are complete and visible after this.
  grid_dependency_wait();
  I const rows = I(p.rows), cols = I(p.cols), plane = rows * cols;
  I const fast = p.transposed ? rows : cols;  // the extent consecutive threads walk
  I const units = I(p.batch) * plane / V;
  T const* const c = static_cast<T const*>(p.c);
  T* const d = static_cast<T*>(p.d);
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < units; i += I(gridDim.x) * blockDim.x) {
    I const e = V * i, line = e / fast, along = e - line * fast;  // line: (batch, slow index)
    I const slow_extent = p.transposed ? cols : rows;
    I const b = line / slow_extent, slow = line - b * slow_extent;
    I const r = p.transposed ? along : slow, col = p.transposed ? slow : along;
    std::int64_t const at_c = p.transposed ? std::int64_t(col) * p.ldc + r : std::int64_t(r) * p.ldc + col;
    std::int64_t const at_d = p.transposed ? std::int64_t(col) * p.ldd + r : std::int64_t(r) * p.ldd + col;
    float const* src = p.partials + std::int64_t(b) * p.partials_batch_stride + std::int64_t(r) * p.partials_ld + col;
    std::int64_t const slice = std::int64_t(p.batch) * plane;
    if constexpr (V == 4) {
      float4 sum = __ldcs(reinterpret_cast<float4 const*>(src));
      for (int s = 1; s < p.splits; ++s) {
        float4 const v = __ldcs(reinterpret_cast<float4 const*>(src + s * slice));
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      float4 out = make_float4(p.alpha * sum.x, p.alpha * sum.y, p.alpha * sum.z, p.alpha * sum.w);
      if (p.beta != 0.0f) {
        float4 const cv = load_float4(c + std::int64_t(b) * p.batch_stride_c + at_c);
        out.x += p.beta * cv.x, out.y += p.beta * cv.y, out.z += p.beta * cv.z, out.w += p.beta * cv.w;
      }
      if constexpr (Fused) {
        float v[4] = {out.x, out.y, out.z, out.w};
        epilogue::fusion_apply_row<false>(p.fusion, v, r, col, 4);
        out = make_float4(v[0], v[1], v[2], v[3]);
      }
      store_float4(d + std::int64_t(b) * p.batch_stride_d + at_d, out);
    } else {
      float sum = __ldcs(src);
      for (int s = 1; s < p.splits; ++s) sum += __ldcs(src + s * slice);
      float v = p.alpha * sum;
      if (p.beta != 0.0f) v += p.beta * to_float(c[std::int64_t(b) * p.batch_stride_c + at_c]);
      if constexpr (Fused) v = epilogue::fusion_apply<false>(p.fusion, v, r, col);
      d[std::int64_t(b) * p.batch_stride_d + at_d] = from_float<T>(v);
    }
  }
}

template <class T, bool Fused>
cudaError_t reduce(SplitKReduceParams p, cudaStream_t stream) {
  if (p.partials_ld == 0) p.partials_ld = p.cols;
  if (p.partials_batch_stride == 0) p.partials_batch_stride = p.rows * p.cols;
  std::int64_t const total = p.batch * p.rows * p.cols;
  bool const wide = four_wide(p, sizeof(T));
  int const threads = 256;
  std::int64_t const units = wide ? total / 4 : total;
  std::int64_t const blocks = std::max<std::int64_t>(1, std::min<std::int64_t>((units + threads - 1) / threads, 132LL * 16));
  // 32-bit indices while every flattened index, and the stride of the grid walk past it, fits.
  bool const narrow = total + blocks * threads <= 0xffffffffLL;
  void (*kernel)(SplitKReduceParams) =
      wide ? (narrow ? splitk_reduce_kernel<T, 4, unsigned, Fused> : splitk_reduce_kernel<T, 4, long long, Fused>)
           : (narrow ? splitk_reduce_kernel<T, 1, unsigned, Fused> : splitk_reduce_kernel<T, 1, long long, Fused>);
  // A programmatic dependent launch: the reduction's CTAs are launched as the GEMM's leave, and
  // wait in griddepcontrol.wait for its partials, instead of after the whole GEMM has retired.
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, p);
}

template <bool Fused>
cudaError_t reduce_to(SplitKReduceParams const& p, DType out, cudaStream_t stream) {
  switch (out) {
    case DType::f16: return reduce<__half, Fused>(p, stream);
    case DType::bf16: return reduce<__nv_bfloat16, Fused>(p, stream);
    default: return reduce<float, Fused>(p, stream);
  }
}

}  // namespace

cudaError_t launch_splitk_reduce(SplitKReduceParams const& p, DType out, cudaStream_t stream) {
  return p.fusion.active() ? reduce_to<true>(p, out, stream) : reduce_to<false>(p, out, stream);
}

}  // namespace tessel::kernel::detail
