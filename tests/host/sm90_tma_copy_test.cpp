// TMA copies built from tensors, on the host: make_tma_encode_args (atom/tma_encode_args.hpp) must
// give, for the sm90 GEMM's A, B and D boxes, exactly the cuTensorMapEncodeTiled arguments the
// GEMM's kernels were written for (restated below as kernel_encode), whether the box is the
// kernel's shared-memory tile (tile_to_shape of a GMMA atom: walked element by element) or the
// flat run-time box the GEMM's host code passes (sm90_operand_map_args: checked per mode); MN-major
// and higher-rank tensors get the dimension order their boxes need; every rule refuses with its
// one-line reason; and the TMA copy atoms print and carry their descriptor.
#include <tessel/atom/copy_atom.hpp>
#include <tessel/atom/copy_traits_sm90_tma.hpp>
#include <tessel/atom/gmma_smem_layout.hpp>
#include <tessel/atom/tma_encode_args.hpp>
#include <tessel/gemm/device/sm90_operand_map.hpp>
#include <tessel/layout/tile_to_shape.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace tessel;

namespace {

// What the sm90 GEMM's kernels take for a (cols = K, rows, batch) row-contiguous
// matrix with a (box_k, box_rows, 1) box: a broadcast batch (stride 0) is one batch, and a single
// batch gets the stride of the whole matrix.
struct KernelEncode {
  std::uint64_t dims[3];
  std::uint64_t strides[2];
  std::uint32_t box[3];
};
KernelEncode kernel_encode(std::uint64_t eb, std::int64_t k, std::int64_t rows, std::int64_t row_stride,
                           std::int64_t batch, std::int64_t batch_stride, int box_k, int box_rows) {
  bool const broadcast = batch > 1 && batch_stride == 0;
  std::uint64_t const batches = broadcast ? 1 : std::uint64_t(batch);
  KernelEncode e{};
  e.dims[0] = std::uint64_t(k), e.dims[1] = std::uint64_t(rows), e.dims[2] = batches;
  e.strides[0] = std::uint64_t(row_stride) * eb;
  e.strides[1] = batches > 1 ? std::uint64_t(batch_stride) * eb : std::uint64_t(row_stride) * eb * std::uint64_t(rows);
  e.box[0] = std::uint32_t(box_k), e.box[1] = std::uint32_t(box_rows), e.box[2] = 1;
  return e;
}

template <class T>
T* fake_address(std::uintptr_t a) {
  return reinterpret_cast<T*>(a);  // never dereferenced: only its value is encoded
}

// The kernel's operand (rows, K, batches):(row_stride, 1, batch_stride) and its box of (box_rows,
// box_k) in the K-major 128-byte swizzle, against encode_operand.
template <class T, int BoxRows, int BoxK>
void expect_kernel_operand(TmaDataType type, std::int64_t k, std::int64_t rows, std::int64_t row_stride, std::int64_t batch,
                           std::int64_t batch_stride) {
  SCOPED_TRACE("k " + std::to_string(k) + " rows " + std::to_string(rows) + " ld " + std::to_string(row_stride) +
               " batch " + std::to_string(batch) + " batch stride " + std::to_string(batch_stride));
  bool const broadcast = batch > 1 && batch_stride == 0;
  std::int64_t const batches = broadcast ? 1 : batch;
  Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x7f0000010000)), make_shape(rows, k, batches),
                         make_stride(row_stride, _1{}, batch_stride));  // (rows,K,L)
  auto box = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<Int<BoxRows>, Int<BoxK>>{});  // (BOX_ROWS,BOX_K)
  TmaEncodeResult const r = make_tma_encode_args(g, box);
  ASSERT_TRUE(r.ok()) << r.error;
  TmaEncodeArgs const& a = r.args;
  KernelEncode const e = kernel_encode(sizeof(T), k, rows, row_stride, batch, batch_stride, BoxK, BoxRows);
  EXPECT_EQ(a.data_type, type);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.global_address, (void const*)fake_address<T>(0x7f0000010000));
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(a.global_dim[d], e.dims[d]) << "dim " << d;
    EXPECT_EQ(a.box_dim[d], e.box[d]) << "box " << d;
    EXPECT_EQ(a.element_strides[d], 1u) << "element stride " << d;
  }
  EXPECT_EQ(a.global_strides[0], e.strides[0]);
  EXPECT_EQ(a.global_strides[1], e.strides[1]);
  EXPECT_EQ(a.interleave, 0u);
  EXPECT_EQ(a.swizzle, TmaSwizzle::B128);
  EXPECT_EQ(a.l2_promotion, TmaL2Promotion::L2_256B);
  EXPECT_EQ(a.oob_fill, TmaOobFill::NONE);
  EXPECT_EQ(a.mode_of_dim[0], 1);  // K
  EXPECT_EQ(a.mode_of_dim[1], 0);  // rows
  EXPECT_EQ(a.mode_of_dim[2], 2);  // batch
  EXPECT_EQ(a.box_bytes, std::uint32_t(BoxRows * BoxK * sizeof(T)));
}

template <class L>
std::string refusal(L const& box, std::int64_t m, std::int64_t k, std::int64_t ld, std::uintptr_t address = 0x10000) {
  Tensor g = make_tensor(make_gmem_ptr(fake_address<bfloat16_t>(address)), make_shape(m, k), make_stride(ld, _1{}));
  TmaEncodeResult const r = make_tma_encode_args(g, box);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
  return r.error;
}

}  // namespace

// A (TileM / ClusterN rows), B (TileN / ClusterM rows), D (64 x 64) of the configurations in
// src/gemm/sm90_*.cu: bf16/fp16 128x256x64 (1x1, 2x1, 1x2), 128x128x64 2x1, 128x64x64, e4m3 128x128x128.
TEST(TmaEncodeArgs, KernelBoxesAreWhatSm90GemmPasses) {
  // bf16 A and B of 128x256x64, 1x1: boxes 128 x 64 and 256 x 64 (256 rows: the most a box takes).
  expect_kernel_operand<bfloat16_t, 128, 64>(TmaDataType::BFLOAT16, 4099, 4095, 4104, 1, 0);
  expect_kernel_operand<bfloat16_t, 256, 64>(TmaDataType::BFLOAT16, 4099, 4097, 4160, 3, 4160 * 4097 + 64);
  // 2x1 cluster: B halves of 128 rows; 1x2: A halves of 64 rows.
  expect_kernel_operand<bfloat16_t, 128, 64>(TmaDataType::BFLOAT16, 64, 300, 64, 2, 0);  // broadcast batch
  expect_kernel_operand<half_t, 64, 64>(TmaDataType::FLOAT16, 17, 33, 24, 5, 24 * 33);
  // 128x64x64: B of 64 rows.
  expect_kernel_operand<half_t, 64, 64>(TmaDataType::FLOAT16, 8192, 16, 8192, 1, 0);
  // e4m3 128x128x128 in 2x1 clusters: A 128 x 128 bytes, B halves of 64 rows; fp8 as raw bytes.
  expect_kernel_operand<float_e4m3_t, 128, 128>(TmaDataType::UINT8, 1000, 999, 1024, 1, 0);
  expect_kernel_operand<float_e4m3_t, 64, 128>(TmaDataType::UINT8, 4096, 4096, 4096, 2, 4096 * 4096);
  // D: (N, M, batch) with 64 x 64 boxes (the epilogue's staging, 128-byte swizzle).
  expect_kernel_operand<bfloat16_t, 64, 64>(TmaDataType::BFLOAT16, 4097, 4095, 4104, 1, 0);
  expect_kernel_operand<half_t, 64, 64>(TmaDataType::FLOAT16, 256, 128, 256, 4, 256 * 128);
}

// The GEMM host code's maps (sm90_operand_map_args: a flat run-time box in the 128-byte swizzle)
// against kernel_encode, for every element type, K-major and MN-major boxes, edge boxes of any
// multiple of 8 rows, single, batched and broadcast batches; and the same arguments as the
// kernel's own shared-memory tile gives (expect_kernel_operand's path) where that tile is static.
TEST(Sm90OperandMap, ArgumentsAreTheKernelsEncode) {
  struct Type {
    DType t;
    bool truncate;
    TmaDataType want;
    int bytes;
  };
  Type const types[] = {{DType::bf16, false, TmaDataType::BFLOAT16, 2}, {DType::f16, false, TmaDataType::FLOAT16, 2},
                        {DType::tf32, false, TmaDataType::TFLOAT32, 4}, {DType::tf32, true, TmaDataType::FLOAT32, 4},
                        {DType::e4m3, false, TmaDataType::UINT8, 1},    {DType::e5m2, false, TmaDataType::UINT8, 1}};
  struct Shape3 {
    std::int64_t cols, rows, row_stride, batch, batch_stride;
  };
  Shape3 const shapes[] = {{4096, 4096, 4096, 1, 0},        {4099, 4095, 4160, 1, 0},   {300, 4097, 320, 3, 320 * 4097 + 64},
                           {64, 300, 64, 2, 0},             {1000, 999, 1024, 5, 1024 * 999}, {128, 8, 256, 1, 0},
                           {8192, 16, 8192, 1, 0},          {17, 33, 64, 4, 64 * 33}};
  int const box_rows[] = {8, 16, 40, 64, 96, 128, 200, 256};
  for (Type const& ty : types) {
    int const box_cols = 128 / ty.bytes;  // one 128-byte swizzle row
    for (Shape3 const& sh : shapes) {
      if (sh.row_stride * ty.bytes % 16 != 0) continue;  // (TMA's rule; the GEMM stages such operands)
      for (int rows_in_box : box_rows) {
        for (TmaL2Promotion l2 : {TmaL2Promotion::L2_256B, TmaL2Promotion::NONE}) {
          SCOPED_TRACE(std::string(to_string(ty.t)) + (ty.truncate ? " truncated" : "") + " cols " + std::to_string(sh.cols) +
                       " rows " + std::to_string(sh.rows) + " ld " + std::to_string(sh.row_stride) + " batch " +
                       std::to_string(sh.batch) + " box rows " + std::to_string(rows_in_box));
          int step = -1;
          TmaEncodeResult const r =
              sm90_operand_map_args(ty.t, fake_address<char>(0x7f0000020000), sh.cols, sh.rows, sh.row_stride, sh.batch,
                                    sh.batch_stride, box_cols, rows_in_box, l2, ty.truncate, &step);
          ASSERT_TRUE(r.ok()) << r.error;
          KernelEncode const e = kernel_encode(std::uint64_t(ty.bytes), sh.cols, sh.rows, sh.row_stride, sh.batch,
                                               sh.batch_stride, box_cols, rows_in_box);
          TmaEncodeArgs const& a = r.args;
          EXPECT_EQ(a.data_type, ty.want);
          EXPECT_EQ(a.rank, 3u);
          EXPECT_EQ(a.global_address, (void const*)fake_address<char>(0x7f0000020000));
          for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(a.global_dim[d], e.dims[d]) << "dim " << d;
            EXPECT_EQ(a.box_dim[d], e.box[d]) << "box " << d;
            EXPECT_EQ(a.element_strides[d], 1u);
            EXPECT_EQ(a.mode_of_dim[d], d);
          }
          EXPECT_EQ(a.global_strides[0], e.strides[0]);
          EXPECT_EQ(a.global_strides[1], e.strides[1]);
          EXPECT_EQ(a.swizzle, TmaSwizzle::B128);
          EXPECT_EQ(a.l2_promotion, l2);
          EXPECT_EQ(a.oob_fill, TmaOobFill::NONE);
          EXPECT_EQ(a.box_bytes, std::uint32_t(128 * rows_in_box));
          EXPECT_EQ(step, sh.batch > 1 && sh.batch_stride == 0 ? 0 : 1);
        }
      }
    }
  }
  // The kernel's own tiles give the same arguments (bf16 A of 128 rows, fp8 B of 64, a D box).
  auto same_as_tile = [](auto element, auto tile, DType t, std::int64_t k, std::int64_t rows, std::int64_t ld) {
    using T = decltype(element);
    constexpr int BoxRows = decltype(size<0>(tile))::value, BoxK = decltype(size<1>(tile))::value;
    Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x7f0000010000)), make_shape(rows, k, 1), make_stride(ld, _1{}, 0));
    TmaEncodeResult const from_tile = make_tma_encode_args(g, tile);
    int step = 0;
    TmaEncodeResult const from_host = sm90_operand_map_args(t, fake_address<T>(0x7f0000010000), k, rows, ld, 1, 0, BoxK,
                                                            BoxRows, TmaL2Promotion::L2_256B, false, &step);
    ASSERT_TRUE(from_tile.ok() && from_host.ok()) << from_tile.error << from_host.error;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(from_tile.args.global_dim[d], from_host.args.global_dim[d]);
      EXPECT_EQ(from_tile.args.box_dim[d], from_host.args.box_dim[d]);
    }
    EXPECT_EQ(from_tile.args.global_strides[0], from_host.args.global_strides[0]);
    EXPECT_EQ(from_tile.args.global_strides[1], from_host.args.global_strides[1]);
    EXPECT_EQ(from_tile.args.swizzle, from_host.args.swizzle);
    EXPECT_EQ(from_tile.args.data_type, from_host.args.data_type);
    EXPECT_EQ(from_tile.args.box_bytes, from_host.args.box_bytes);
  };
  same_as_tile(bfloat16_t{}, tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_128, _64>{}), DType::bf16, 4099,
               4095, 4104);
  same_as_tile(float_e4m3_t{}, tile_to_shape(GMMA::Layout_K_SW128_Atom<float_e4m3_t>{}, Shape<_64, _128>{}), DType::e4m3,
               4096, 4096, 4096);
  same_as_tile(half_t{}, tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64, _64>{}), DType::f16, 4097, 4095, 4104);
}

// What the GEMM's host code is refused: an unaligned base or row stride, a box not one swizzle row
// wide; and a flat run-time box that is not dense, found by the per-mode check.
TEST(Sm90OperandMap, RefusesWithTheRule) {
  int step = 0;
  auto map = [&](std::uintptr_t address, std::int64_t ld, int box_cols) {
    return sm90_operand_map_args(DType::bf16, fake_address<char>(address), 100, 50, ld, 1, 0, box_cols, 64,
                                 TmaL2Promotion::L2_256B, false, &step);
  };
  EXPECT_NE(map(0x10008, 64, 64).error.find("16-byte aligned"), std::string::npos);
  EXPECT_NE(map(0x10000, 100, 64).error.find("multiples of 16 bytes"), std::string::npos);
  EXPECT_NE(map(0x10000, 64, 32).error.find("swizzle spans 128"), std::string::npos);
  Tensor g = make_tensor(make_gmem_ptr(fake_address<bfloat16_t>(0x10000)), make_shape(100, 64), make_stride(_1{}, 128));
  int const padded = 72;  // a run-time box whose columns are 72 elements apart
  TmaEncodeResult const r = make_tma_encode_args(g, make_layout(make_shape(64, 64), make_stride(1, padded)));
  EXPECT_NE(r.error.find("box element (0,1) is at shared-memory offset 72 but TMA writes it at 64"), std::string::npos)
      << r.error;
  EXPECT_TRUE(make_tma_encode_args(g, make_layout(make_shape(64, 64))).ok());
}

// The per-mode check of a flat box and the element walk of a hierarchical one give the same
// verdict: each flat box below against the same box with its modes nested one level (depth 2,
// walked), dense or not, in either stride order, with run-time and static extents.
TEST(TmaEncodeArgs, FlatBoxCheckAgreesWithTheWalk) {
  Tensor g = make_tensor(make_gmem_ptr(fake_address<bfloat16_t>(0x10000)), make_shape(100, 64, 3), make_stride(_1{}, 128, 128 * 64));
  struct Case {
    int e0, e1, e2, s0, s1, s2;
  };
  Case const cases[] = {{64, 16, 1, 1, 64, 1024},  {64, 16, 1, 1, 72, 1152}, {64, 16, 2, 1, 64, 1024}, {64, 16, 2, 1, 128, 64},
                        {64, 16, 2, 1, 64, 2048}, {8, 16, 2, 1, 8, 128},     {8, 16, 2, 2, 16, 256},   {64, 1, 4, 1, 7, 64}};
  for (Case const& c : cases) {
    SCOPED_TRACE("box (" + std::to_string(c.e0) + "," + std::to_string(c.e1) + "," + std::to_string(c.e2) + "):(" +
                 std::to_string(c.s0) + "," + std::to_string(c.s1) + "," + std::to_string(c.s2) + ")");
    auto const flat = make_layout(make_shape(c.e0, c.e1, c.e2), make_stride(c.s0, c.s1, c.s2));
    auto const nested = make_layout(make_shape(make_shape(c.e0), make_shape(c.e1), make_shape(c.e2)),
                                    make_stride(make_stride(c.s0), make_stride(c.s1), make_stride(c.s2)));
    TmaEncodeResult const by_mode = make_tma_encode_args(g, flat), walked = make_tma_encode_args(g, nested);
    EXPECT_EQ(by_mode.ok(), walked.ok()) << by_mode.error << " / " << walked.error;
    if (by_mode.ok() && walked.ok()) {
      for (int d = 0; d < 3; ++d) EXPECT_EQ(by_mode.args.box_dim[d], walked.args.box_dim[d]);
      EXPECT_EQ(by_mode.args.global_strides[1], walked.args.global_strides[1]);
    }
  }
}

// A column-major B (N,K):(1,ldb) read in place: the MN-major box, N is the tensor map's dimension 0.
TEST(TmaEncodeArgs, MnMajorOperand) {
  using T = bfloat16_t;
  Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x20000)), make_shape(1000, 300), make_stride(_1{}, 1008));  // (N,K)
  auto box = tile_to_shape(GMMA::Layout_MN_SW128_Atom<T>{}, Shape<_64, _64>{});  // (BOX_N,BOX_K)
  TmaEncodeResult const r = make_tma_encode_args(g, box);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.args.rank, 2u);
  EXPECT_EQ(r.args.global_dim[0], 1000u);
  EXPECT_EQ(r.args.global_dim[1], 300u);
  EXPECT_EQ(r.args.global_strides[0], 2016u);
  EXPECT_EQ(r.args.box_dim[0], 64u);
  EXPECT_EQ(r.args.box_dim[1], 64u);
  EXPECT_EQ(r.args.mode_of_dim[0], 0);
  EXPECT_EQ(r.args.mode_of_dim[1], 1);
  EXPECT_EQ(r.args.swizzle, TmaSwizzle::B128);
  // The 64-byte swizzle: boxes 32 wide; the (64,64) tile tiled K-first is two of them.
  auto box64 = tile_to_shape(GMMA::Layout_MN_SW64_Atom<T>{}, Shape<_32, _64>{});
  TmaEncodeResult const r64 = make_tma_encode_args(g, box64);
  ASSERT_TRUE(r64.ok()) << r64.error;
  EXPECT_EQ(r64.args.box_dim[0], 32u);
  EXPECT_EQ(r64.args.swizzle, TmaSwizzle::B64);
  EXPECT_EQ(r64.args.box_bytes, 32u * 64u * 2u);
}

// Five modes, the box over three of them in an order unlike the tensor's: the map follows the box.
TEST(TmaEncodeArgs, FiveModes) {
  using T = half_t;
  // (C, H, W, N, G) with W contiguous; the box (8 of C, 1 of H, 64 of W) is W-fastest, then C.
  Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x40000)), make_shape(16, 10, 64, 3, 2),
                         make_stride(640, 64, _1{}, 10240, 30720));  // (C,H,W,N,G)
  auto box = make_layout(make_shape(_8{}, _1{}, _64{}), make_stride(_64{}, _0{}, _1{}));  // (8,1,64), W then C
  TmaEncodeResult const r = make_tma_encode_args(g, box);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.args.rank, 5u);
  int const modes[5] = {2, 0, 1, 3, 4};  // W, C (spanned, by smem stride), then H, N, G
  for (int d = 0; d < 5; ++d) EXPECT_EQ(r.args.mode_of_dim[d], modes[d]) << "dim " << d;
  std::uint64_t const dims[5] = {64, 16, 10, 3, 2};
  std::uint32_t const boxd[5] = {64, 8, 1, 1, 1};
  std::uint64_t const strides[4] = {1280, 128, 20480, 61440};
  for (int d = 0; d < 5; ++d) EXPECT_EQ(r.args.global_dim[d], dims[d]) << "dim " << d;
  for (int d = 0; d < 5; ++d) EXPECT_EQ(r.args.box_dim[d], boxd[d]) << "box " << d;
  for (int d = 0; d < 4; ++d) EXPECT_EQ(r.args.global_strides[d], strides[d]) << "stride " << d;
  EXPECT_EQ(r.args.swizzle, TmaSwizzle::NONE);
  EXPECT_EQ(r.args.box_bytes, 8u * 64u * 2u);
}

TEST(TmaEncodeArgs, EachRuleRefusesWithItsReason) {
  using T = bfloat16_t;
  auto k128 = tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{});
  auto contains = [](std::string const& s, char const* what) {
    EXPECT_NE(s.find(what), std::string::npos) << "\"" << s << "\" does not say \"" << what << "\"";
  };
  contains(refusal(k128, 100, 64, 64, 0x10008), "base address must be 16-byte aligned");
  contains(refusal(k128, 100, 63, 63), "multiples of 16 bytes");
  contains(refusal(k128, 100, 64, 1LL << 39), "below 2^40");
  // The box as a transpose of the tensor.
  contains(refusal(tile_to_shape(GMMA::Layout_MN_SW128_Atom<T>{}, Shape<_64, _64>{}), 100, 64, 64), "cannot transpose");
  // No mode of stride 1.
  {
    Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x10000)), make_shape(100, 64), make_stride(128, 2));
    contains(make_tma_encode_args(g, k128).error, "no mode of the global tensor has stride 1");
  }
  // A 128-byte-swizzled box 64 bytes wide, and a 64-byte-swizzled tile two atoms wide as one box.
  contains(refusal(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_64, _32>, Stride<_32, _1>>{}), 100, 64, 64),
           "swizzle spans 128");
  contains(refusal(tile_to_shape(GMMA::Layout_K_SW64_Atom<T>{}, Shape<_64, _64>{}), 100, 64, 64), "swizzle spans 64");
  // A box that is not dense: rows padded to 72 elements.
  contains(refusal(Layout<Shape<_64, _64>, Stride<Int<72>, _1>>{}, 100, 64, 64), "TMA writes it at");
  // A static box's walk is remembered only when it passes: asked again, the same box is refused again.
  contains(refusal(Layout<Shape<_64, _64>, Stride<Int<72>, _1>>{}, 100, 64, 64), "TMA writes it at");
  // The same of a hierarchical box, which is walked element by element (a flat one is checked per
  // mode): its walk is remembered only when it passes.
  using Padded = Layout<Shape<Shape<_64>, Shape<_64>>, Stride<Stride<Int<72>>, Stride<_1>>>;
  contains(refusal(Padded{}, 100, 64, 64), "TMA writes it at");
  contains(refusal(Padded{}, 100, 64, 64), "TMA writes it at");
  // The byte-address swizzle on 16-bit offsets.
  contains(refusal(composition(Swizzle<3, 4, 3>{}, Layout<Shape<_64, _64>, Stride<_64, _1>>{}), 100, 64, 64),
           "is not a TMA swizzle for 2-byte elements");
  // Too large a box, a box wider than 16-byte units, a broadcast mode, an empty tensor.
  contains(refusal(tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_512, _64>{}), 1000, 64, 64), "takes 1 to 256");
  contains(refusal(Layout<Shape<_8, _4>, Stride<_4, _1>>{}, 100, 64, 64), "whole 16-byte units");
  {
    Tensor g = make_tensor(make_gmem_ptr(fake_address<T>(0x10000)), make_shape(100, 64, 4), make_stride(64, _1{}, 0));
    contains(make_tma_encode_args(g, k128).error, "TMA cannot broadcast");
  }
  contains(refusal(k128, 0, 64, 64), "has extent 0");
}

TEST(TmaCopyAtoms, PrintAndCarryTheDescriptor) {
  using Load = Copy_Atom<Copy_Traits<SM90_TMA_LOAD, Int<128 * 64 * 16>>, bfloat16_t>;
  EXPECT_EQ(to_string(Load{}),
            "Copy_Atom\n"
            "  ThrID:        _1:_0\n"
            "  ValLayoutSrc: (_1,_8192):(_0,_1)\n"
            "  ValLayoutDst: (_1,_8192):(_0,_1)\n"
            "  ValLayoutRef: (_1,_8192):(_0,_1)\n"
            "  ValueType:    16b\n");
  EXPECT_EQ(Load::box_bytes, 16384u);
  Load load;
  load.tma_desc.opaque[0] = 42;
  std::uint64_t bar = 0;
  auto exec = load.with(bar);
  EXPECT_TRUE((std::is_same_v<decltype(exec), Copy_Atom<Copy_Traits<SM90_TMA_LOAD_OP, Int<131072>>, bfloat16_t>>));
  EXPECT_EQ(exec.desc, load.get_tma_descriptor());
  EXPECT_EQ(exec.desc->opaque[0], 42u);
  EXPECT_EQ(exec.bar, &bar);
  TmaDescriptor param{};
  EXPECT_EQ(load.with(&param, bar).desc, &param);

  Copy_Atom<Copy_Traits<SM90_TMA_LOAD_MULTICAST, Int<64 * 64 * 16>>, half_t> mcast;
  auto m = mcast.with(bar, std::uint16_t(0b11));
  EXPECT_EQ(m.mask, 3u);
  EXPECT_EQ(m.bar, &bar);
  EXPECT_EQ(m.desc, mcast.get_tma_descriptor());
  Copy_Atom<Copy_Traits<SM90_TMA_STORE, Int<64 * 64 * 16>>, half_t> store;
  EXPECT_EQ(store.get_tma_descriptor(), &store.tma_desc);
}
