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

// The row alignment in bytes the host asks of an operand before reading it in place
// (sm90_operand_read's `align`, src/gemm/sm90_gemm.cpp): TMA's 16, or -- for a large D, where a
// staged copy costs little beside the GEMM -- 32. TMA reads rows that start off the L2's 32-byte
// sectors more slowly: a 16-byte multiple pitch that is not a 32-byte one (K = 8200 bf16, 16400
// bytes) puts every other row there. H100, random inputs (GPU time a call, A's and B's rows K + 8
// elements apart, in place against staged, twice): 8192^3 1734 -> 1691 us (cuBLAS 1563-1589),
// 6144^3 768 -> 727-733 (cuBLAS 666-676), but 4096^3 219-236 -> 243, and a skinny problem streams B
// once, so copying it first triples its traffic (16x8192x8192 49 -> 148 us). fp8 alike (CLI, same
// machine, twice: 8192^3 with 8208-byte rows 0.848-0.851 ms in place, 0.831-0.837 staged; 4096^3
// with 4112-byte rows 0.114 in place, 0.122-0.123 staged). Staged from M N / (M + N) >= 3072.
constexpr int sm90_operand_align(std::int64_t m, std::int64_t n) {
  return m > 0 && n > 0 && double(m) * double(n) / double(m + n) >= 3072.0 ? 32 : 16;
}

}  // namespace tessel
