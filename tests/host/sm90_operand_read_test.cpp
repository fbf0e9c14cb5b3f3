// How the sm_90a GEMMs read each canonical operand (gemm/device/sm90_operand_read.hpp): in place
// K-major, in place MN-major (16-bit kernels), or staged. Checked against the rule it stands for
// -- every box start TMA would be given is 16-byte aligned -- by enumerating addresses, and on the
// cases the GPU sweep (tests/gpu/sm90_gemm_test.cpp) relies on. No GPU.
#include <tessel/gemm/device/sm90_operand_read.hpp>

#include <gtest/gtest.h>

#include <cstdint>

using namespace tessel;

namespace {

constexpr std::uintptr_t kBase = 0x10000;  // a 16-byte aligned address

// The reference: TMA can read the operand in place in this orientation iff every start of a box
// it would be asked for is 16-byte aligned -- K-major boxes start at any row and at multiples of
// a 128-byte k-tile along K, MN-major boxes at any K-row and at multiples of 128 bytes of rows --
// in every batch (a batch stride of 0 is one tensor read for every batch).
bool boxes_aligned(std::uintptr_t address, std::int64_t row_stride, std::int64_t k_stride, std::int64_t batch_stride,
                   std::int64_t batch, int bytes, bool mn_major, int align = 16) {
  std::int64_t const row_step = mn_major ? 128 / bytes : 1, k_step = mn_major ? 1 : 128 / bytes;
  for (std::int64_t b = 0; b < (batch > 1 ? 4 : 1); ++b)
    for (std::int64_t i = 0; i < 24; ++i)
      for (std::int64_t j = 0; j < 24; ++j) {
        std::int64_t const element = b * batch_stride + i * row_step * row_stride + j * k_step * k_stride;
        if ((address + std::uintptr_t(element * bytes)) % std::uintptr_t(align) != 0) return false;
      }
  return true;
}

}  // namespace

TEST(Sm90OperandRead, MatchesTheAlignedBoxStartsRule) {
  int checked = 0;
  for (int align : {16, 32}) {
    for (int bytes : {1, 2}) {
      for (bool kernel_mn : {false, true}) {
        for (std::uintptr_t offset : {0, 1, 2, 4, 8, 16}) {
          if (offset % std::uintptr_t(bytes) != 0) continue;
          for (std::int64_t ld = 1; ld <= 40; ++ld) {
            for (std::int64_t batch : {1, 3}) {
              for (std::int64_t bs : {0, 1, 8, 9, 16, 24, 1000, 1024}) {
                // K-major (k stride 1, rows ld apart), then MN-major (row stride 1, K-rows ld apart).
                for (bool mn : {false, true}) {
                  std::int64_t const rs = mn ? 1 : ld, ks = mn ? ld : 1;
                  Sm90OperandRead const got = sm90_operand_read(kBase + offset, rs, ks, bs, batch, bytes, kernel_mn, align);
                  Sm90OperandRead expected = Sm90OperandRead::staged;
                  if (ks == 1 && boxes_aligned(kBase + offset, rs, ks, bs, batch, bytes, false, align)) {
                    expected = Sm90OperandRead::k_major;
                  } else if (rs == 1 && kernel_mn && boxes_aligned(kBase + offset, rs, ks, bs, batch, bytes, true, align)) {
                    expected = Sm90OperandRead::mn_major;
                  }
                  EXPECT_EQ(int(got), int(expected)) << "bytes " << bytes << " offset " << offset << " ld " << ld << " batch "
                                                     << batch << " batch stride " << bs << (mn ? " MN-major" : " K-major")
                                                     << (kernel_mn ? "" : ", kernel without MN-major operands") << ", align " << align;
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(Sm90OperandRead, TheSweepsCases) {
  // bf16, a 16-bit kernel. K-major with a 16-byte aligned leading dimension: in place.
  EXPECT_EQ(sm90_operand_read(kBase, 208, 1, 0, 1, 2, true), Sm90OperandRead::k_major);
  // MN-major (`nn`, `nt`, `tt` operands) with ld a multiple of 8 elements and ragged extents: in
  // place, read with the transpose bit; batched with a stride of 8k elements or a broadcast too.
  EXPECT_EQ(sm90_operand_read(kBase, 1, 136, 0, 1, 2, true), Sm90OperandRead::mn_major);
  EXPECT_EQ(sm90_operand_read(kBase, 1, 136, 136 * 99, 3, 2, true), Sm90OperandRead::mn_major);
  EXPECT_EQ(sm90_operand_read(kBase, 1, 136, 0, 3, 2, true), Sm90OperandRead::mn_major);
  // ... staged when the leading dimension, the batch stride or the pointer is off 16 bytes.
  EXPECT_EQ(sm90_operand_read(kBase, 1, 137, 0, 1, 2, true), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase, 1, 136, 136 * 99 + 1, 3, 2, true), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase + 2, 1, 136, 0, 1, 2, true), Sm90OperandRead::staged);
  // One batch: its batch stride is never used.
  EXPECT_EQ(sm90_operand_read(kBase, 1, 136, 7, 1, 2, true), Sm90OperandRead::mn_major);
  // fp8 (no wgmma transpose): an MN-major operand is staged however aligned; K-major is in place.
  EXPECT_EQ(sm90_operand_read(kBase, 1, 256, 0, 1, 1, false), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase, 256, 1, 0, 1, 1, false), Sm90OperandRead::k_major);
  // K = 1 with ld = 1 (both strides 1, neither aligned): staged.
  EXPECT_EQ(sm90_operand_read(kBase, 1, 1, 0, 1, 2, true), Sm90OperandRead::staged);
  // Asked for 32-byte rows (the host, for a bf16 operand with a 1032-element pitch: every other
  // row off the L2's sectors): staged; a 1000-element (2000-byte) pitch too, 1024 not.
  EXPECT_EQ(sm90_operand_read(kBase, 1032, 1, 0, 1, 2, true), Sm90OperandRead::k_major);
  EXPECT_EQ(sm90_operand_read(kBase, 1032, 1, 0, 1, 2, true, 32), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase, 1000, 1, 0, 1, 2, true, 32), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase, 1024, 1, 0, 1, 2, true, 32), Sm90OperandRead::k_major);
  EXPECT_EQ(sm90_operand_read(kBase + 16, 1024, 1, 0, 1, 2, true, 32), Sm90OperandRead::staged);
  EXPECT_EQ(sm90_operand_read(kBase, 1, 1032, 0, 1, 2, true, 32), Sm90OperandRead::staged);
}
