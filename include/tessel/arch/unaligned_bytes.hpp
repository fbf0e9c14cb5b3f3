// tessel/arch/unaligned_bytes.hpp -- 16 bytes that start at any byte of two aligned 16-byte words.
//
// A row whose start is not 16-byte aligned can still be read and written 16 bytes at a time: load
// the aligned words around a chunk (or, for stores, the staged chunks around it) and shift. Used
// where a matrix's leading dimension breaks 16-byte alignment: the operand staging copy
// (src/gemm/sm80_stage.cu) and the sm_90a GEMM's row-copy epilogue.
#pragma once

#include <tessel/config.hpp>

#include <cstdint>

namespace tessel {

// Four 32-bit words, lowest address first, 16-byte aligned (loads and stores of one are 16 bytes wide).
struct alignas(16) Words4 {
  std::uint32_t x, y, z, w;
};

// Bytes [offset, offset + 16) of lo:hi (lo at the lower address; little-endian words), offset 0..15:
// whole-word steps of 2 and 1 as selects, then one funnel shift per word -- no register array
// indexed at run time, so nothing goes to local memory.
TESSEL_HOST_DEVICE constexpr Words4 bytes_at(Words4 lo, Words4 hi, int offset) {
  std::uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  bool const by2 = (offset & 8) != 0, by1 = (offset & 4) != 0;
  unsigned const bits = 8u * unsigned(offset & 3);
  TESSEL_UNROLL
  for (int i = 0; i < 6; ++i) w[i] = by2 ? w[i + 2] : w[i];
  TESSEL_UNROLL
  for (int i = 0; i < 5; ++i) w[i] = by1 ? w[i + 1] : w[i];
  TESSEL_UNROLL
  for (int i = 0; i < 4; ++i) w[i] = std::uint32_t(((std::uint64_t(w[i + 1]) << 32) | w[i]) >> bits);  // SHF.R
  return {w[0], w[1], w[2], w[3]};
}

}  // namespace tessel
