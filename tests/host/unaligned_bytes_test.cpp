// arch/unaligned_bytes.hpp on the host: bytes_at(lo, hi, offset) is bytes [offset, offset + 16) of
// the 32 bytes lo:hi, for every offset, on random words -- what the staging copy and the sm_90a
// row-copy epilogue rely on to read and write misaligned rows 16 bytes at a time.
#include <tessel/arch/unaligned_bytes.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

using tessel::bytes_at;
using tessel::Words4;

TEST(UnalignedBytes, EveryOffsetPicksTheSixteenBytesThere) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    unsigned char window[32];
    for (unsigned char& b : window) b = static_cast<unsigned char>(rng());
    Words4 lo, hi;
    std::memcpy(&lo, window, 16);
    std::memcpy(&hi, window + 16, 16);
    for (int offset = 0; offset < 16; ++offset) {
      Words4 const got = bytes_at(lo, hi, offset);
      unsigned char out[16];
      std::memcpy(out, &got, 16);
      for (int i = 0; i < 16; ++i)
        ASSERT_EQ(out[i], window[offset + i]) << "offset " << offset << " byte " << i << " trial " << trial;
    }
  }
}

TEST(UnalignedBytes, UsableInConstantExpressions) {
  constexpr Words4 lo{0x03020100u, 0x07060504u, 0x0b0a0908u, 0x0f0e0d0cu};
  constexpr Words4 hi{0x13121110u, 0x17161514u, 0x1b1a1918u, 0x1f1e1d1cu};
  constexpr Words4 at5 = bytes_at(lo, hi, 5);  // bytes 5..20
  static_assert(at5.x == 0x08070605u && at5.y == 0x0c0b0a09u && at5.z == 0x100f0e0du && at5.w == 0x14131211u);
  constexpr Words4 at0 = bytes_at(lo, hi, 0);
  static_assert(at0.x == lo.x && at0.w == lo.w);
  SUCCEED();
}
