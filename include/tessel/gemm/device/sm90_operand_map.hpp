// tessel/gemm/device/sm90_operand_map.hpp -- the tensor maps of the sm_90a GEMM's operands, C and D,
// made through the one TMA path (atom/tma_encode_args.hpp's make_tma_encode_args): a matrix whose
// `cols` are contiguous, `rows` apart by row_stride elements, `batch` matrices batch_stride apart,
// read or written in boxes of box_cols x box_rows in the 128-byte swizzle the kernels' shared-memory
// tiles use (one swizzle row wide: box_cols x element size = 128 bytes).
//
//   A K-major (the kernel's A or B, or C and D by rows):  cols = K (or N), rows = M (or N, M)
//   MN-major (read in place):                             cols = M or N, rows = K
//   e.g. sm90_operand_map_args(DType::bf16, a, 4096, 4096, 4104, 1, 0, 64, 128, TmaL2Promotion::L2_256B, false, &step)
//        -> rank 3, dims {4096, 4096, 1}, strides {8208, 8208 * 4096} bytes, box {64, 128, 1}, SWIZZLE_128B
//
// A batch broadcast (batch > 1, batch_stride 0) is one batch that every batch index reads:
// *batch_step is 0 then (the kernels step the batch coordinate by it), 1 otherwise. fp8 maps are
// raw bytes; tf32 maps round to tf32 (TFLOAT32) unless tf32_truncate (FLOAT32: wgmma drops the low
// bits). A refusal is make_tma_encode_args's one-line reason.
#pragma once

#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/atom/tma_encode_args.hpp>
#include <tessel/core/dtype.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/tfloat32.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/tensor.hpp>

#include <cstdint>

namespace tessel {

namespace detail {

template <class T>
TmaEncodeResult sm90_operand_map_args_as(void const* ptr, std::int64_t cols, std::int64_t rows, std::int64_t row_stride,
                                         std::int64_t batches, std::int64_t batch_stride, int box_cols, int box_rows,
                                         TmaL2Promotion l2) {
  auto const g = make_tensor(make_gmem_ptr(static_cast<T const*>(ptr)), make_shape(cols, rows, batches),
                             make_stride(_1{}, row_stride, batch_stride));  // (COLS,ROWS,L)
  // The kernels' 128-byte swizzle on element offsets (the GMMA SW128 atoms'), over a flat box.
  auto const box = composition(GMMA::gmma_swizzle<sizeof_bits_v<T>, GMMA::LayoutType::B128>{},
                               make_layout(make_shape(box_cols, box_rows, _1{})));  // (BOX_COLS,BOX_ROWS,1)
  return make_tma_encode_args(g, box, l2);
}

}  // namespace detail

inline TmaEncodeResult sm90_operand_map_args(DType t, void const* ptr, std::int64_t cols, std::int64_t rows,
                                             std::int64_t row_stride, std::int64_t batch, std::int64_t batch_stride,
                                             int box_cols, int box_rows, TmaL2Promotion l2, bool tf32_truncate,
                                             int* batch_step) {
  bool const broadcast = batch > 1 && batch_stride == 0;
  *batch_step = broadcast ? 0 : 1;
  std::int64_t const batches = broadcast ? 1 : batch;
  auto const as = [&](auto element) {
    using T = decltype(element);
    return detail::sm90_operand_map_args_as<T>(ptr, cols, rows, row_stride, batches, batch_stride, box_cols, box_rows, l2);
  };
  switch (t) {
    case DType::bf16: return as(bfloat16_t{});
    case DType::f16: return as(half_t{});
    case DType::tf32: return tf32_truncate ? as(float{}) : as(tfloat32_t{});
    case DType::f32: return as(float{});
    case DType::e4m3:
    case DType::e5m2: return as(std::uint8_t{});
  }
  TmaEncodeResult refused;
  refused.error = "sm90_operand_map_args: not an element type of the sm_90a GEMM";
  return refused;
}

}  // namespace tessel
