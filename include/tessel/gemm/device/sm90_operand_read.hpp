// tessel/gemm/device/sm90_operand_read.hpp -- how the sm_90a GEMMs read one operand of the
// canonical problem (src/gemm/gemm_canonical.hpp): in place K-major, in place MN-major, or from a
// staged K-major copy. Plain C++: the host adapter (src/gemm/sm90_gemm.cpp) and the host tests
// use it.
//
// The operand is rows x K, element (r, k) of batch b at ptr + b * batch_stride + r * row_stride +
// k * k_stride (elements). TMA reads a tensor whose base address and outer strides are multiples
// of 16 bytes, in boxes whose starts are 16-byte aligned too (docs/sm90_gemm.md, "Any shape, any
// layout"):
//   k_major   k_stride 1 (K contiguous): the pointer, row_stride and -- more than one batch, not
//             a broadcast (stride 0) -- batch_stride multiples of 16 bytes; boxes start at
//             multiples of a k-tile (128 bytes) along K.
//   mn_major  row_stride 1 (M or N contiguous), a kernel that reads MN-major operands (16-bit
//             inputs: wgmma's transpose bits; fp8 has none), and the pointer, k_stride and
//             batch_stride multiples of 16 bytes; boxes start at multiples of 64 rows.
//   staged    anything else (an odd leading dimension, a pointer off 16 bytes, an fp8 MN-major
//             operand): copied once into a K-major buffer with 128-byte rows, read K-major.
#pragma once

#include <cstdint>

namespace tessel {

enum class Sm90OperandRead { k_major, mn_major, staged };

//
// `align` (16 or 32 bytes) raises the 16 bytes TMA needs: with 32, rows whose starts are off the
// 32-byte sectors of the L2 -- every other row of a 16-byte multiple pitch like 2064 bytes --
// are staged too (the host's choice for a large D, src/gemm/sm90_gemm.cpp: TMA reads them more slowly).
constexpr Sm90OperandRead sm90_operand_read(std::uintptr_t address, std::int64_t row_stride, std::int64_t k_stride,
                                            std::int64_t batch_stride, std::int64_t batch, int element_bytes,
                                            bool kernel_reads_mn_major, int align = 16) {
  std::int64_t const per = align / element_bytes;  // elements in `align` bytes
  bool const base_aligned = address % std::uintptr_t(align) == 0 && (batch == 1 || batch_stride % per == 0);
  if (k_stride == 1 && base_aligned && row_stride % per == 0) return Sm90OperandRead::k_major;
  if (row_stride == 1 && kernel_reads_mn_major && base_aligned && k_stride % per == 0) return Sm90OperandRead::mn_major;
  return Sm90OperandRead::staged;
}

}  // namespace tessel
