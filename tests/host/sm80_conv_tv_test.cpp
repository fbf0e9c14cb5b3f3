// The sm_80 implicit-GEMM convolution configuration (tessel/conv/kernel/sm80_conv_config.hpp),
// checked on the host for each op (and the index decoding of sm80_conv_kernel_params.hpp against
// plain division): the chunks the threads fill cover every stage of both operand
// buffers exactly once with 8 elements contiguous in shared memory, and ldmatrix (K-major
// operands) or ldmatrix.trans (MN-major ones) out of those buffers delivers to every fragment
// register exactly the (row, k) the mma.sync expects there.
//
// ldmatrix is played by its PTX definition: lane 8j+r gives the address of row r of matrix j;
// non-transposed, lane t receives of matrix j the elements 2(t%4), 2(t%4)+1 of row t/4 in register
// j; transposed (.trans), it receives element t/4 of rows 2(t%4) and 2(t%4)+1.
#include <tessel/conv/kernel/sm80_conv_config.hpp>
#include <tessel/conv/kernel/sm80_conv_kernel_params.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/tensor.hpp>

#include <gtest/gtest.h>

#include <vector>

using namespace tessel;

namespace {

inline long tag_of(long row, long k, long cols) { return row * cols + k; }

template <class K, bool IsA>
void check_operand() {
  using Element = typename K::Element;
  using Config = typename K::Config;
  constexpr bool Mn = IsA ? K::AMn : K::BMn;
  constexpr int Rows = IsA ? K::BlkM : K::BlkN;
  constexpr int BlkK = K::BlkK;
  constexpr int Copies = IsA ? K::CopiesA : K::CopiesB;
  constexpr int StageElems = IsA ? K::StageElemsA : K::StageElemsB;
  using SmemLayout = std::conditional_t<IsA, typename K::SmemLayoutA, typename K::SmemLayoutB>;
  int const stage = K::Stages - 1;

  // Tags written by the chunks of stage `stage`.
  std::vector<long> tags(decltype(cosize(SmemLayout{}))::value, -1);
  for (int t = 0; t < K::Threads; ++t) {
    for (int i = 0; i < Copies; ++i) {
      auto const c = IsA ? K::chunk_a(t, i) : K::chunk_b(t, i);
      int const off = (IsA ? K::smem_offset_a(t, i) : K::smem_offset_b(t, i)) + stage * StageElems;
      ASSERT_EQ(off % 8, 0) << "chunk not 16-byte aligned";
      for (int e = 0; e < 8; ++e) {
        int const row = Mn ? c.row + e : c.row, k = Mn ? c.k : c.k + e;
        ASSERT_LT(row, Rows);
        ASSERT_LT(k, BlkK);
        ASSERT_EQ(int(SmemLayout{}(row, k, stage)), off + e) << "chunk elements are not contiguous in shared memory";
        ASSERT_EQ(tags[std::size_t(off + e)], -1) << "element " << off + e << " written twice";
        tags[std::size_t(off + e)] = tag_of(row, k, BlkK);
      }
    }
  }
  for (int e = stage * StageElems; e < (stage + 1) * StageElems; ++e) ASSERT_NE(tags[std::size_t(e)], -1) << "element " << e << " never written";

  std::vector<Element> smem(tags.size());
  Tensor s = make_tensor(make_smem_ptr(smem.data()), SmemLayout{});                                              // (ROWS,BLK_K,PIPE)
  Tensor s_shape = make_tensor(make_smem_ptr(smem.data()), make_layout(make_shape(Int<Rows>{}, Int<BlkK>{})));  // (ROWS,BLK_K)
  Tensor c = make_identity_tensor(make_shape(Int<Rows>{}, Int<BlkK>{}));                                         // -> (row,k)
  typename Config::TiledMma mma;
  auto s2r = [&] {
    if constexpr (IsA) {
      return make_tiled_copy_A(typename K::SmemCopyAtomA{}, mma);
    } else {
      return make_tiled_copy_B(typename K::SmemCopyAtomB{}, mma);
    }
  }();
  auto const fragment = [&](int t) {
    auto thr_mma = mma.get_slice(t);
    if constexpr (IsA) {
      return thr_mma.partition_fragment_A(s_shape);
    } else {
      return thr_mma.partition_fragment_B(s_shape);
    }
  };

  for (int warp = 0; warp < K::Threads / 32; ++warp) {
    std::vector<std::vector<long>> got(32), want(32);
    for (int lane = 0; lane < 32; ++lane) {
      int const t = warp * 32 + lane;
      auto thr_mma = mma.get_slice(t);
      Tensor frg = fragment(t);  // (MMA,MMA_M|N,MMA_K)
      Tensor crd = [&] {
        if constexpr (IsA) {
          return thr_mma.partition_A(c);
        } else {
          return thr_mma.partition_B(c);
        }
      }();
      got[lane].assign(size(frg), -2);
      want[lane].resize(size(frg));
      for (int i = 0; i < int(size(frg)); ++i)
        want[lane][std::size_t(&frg(i) - frg.data())] = tag_of(long(get<0>(crd(i))), long(get<1>(crd(i))), BlkK);
    }
    auto thr0 = s2r.get_slice(warp * 32);
    Tensor tCs0 = thr0.partition_S(s);  // (CPY,CPY_M,CPY_K,PIPE)
    for (int i = 0; i < int(size<1>(tCs0)); ++i) {
      for (int kb = 0; kb < int(size<2>(tCs0)); ++kb) {
        long row_addr[32];
        for (int lane = 0; lane < 32; ++lane) {
          Tensor tCs = s2r.get_slice(warp * 32 + lane).partition_S(s);
          row_addr[lane] = long(&tCs(0, i, kb, stage) - smem.data());
          for (int e = 1; e < int(size<0>(tCs)); ++e) ASSERT_EQ(long(&tCs(e, i, kb, stage) - smem.data()), row_addr[lane] + e);
        }
        for (int lane = 0; lane < 32; ++lane) {
          Tensor frg = fragment(warp * 32 + lane);
          Tensor view = s2r.get_slice(warp * 32 + lane).retile_D(frg);  // (CPY,CPY_M,CPY_K)
          for (int j = 0; j < 4; ++j) {
            for (int e = 0; e < 2; ++e) {
              long const src = Mn ? row_addr[8 * j + 2 * (lane % 4) + e] + lane / 4 : row_addr[8 * j + lane / 4] + (lane % 4) * 2 + e;
              got[lane][std::size_t(&view(j * 2 + e, i, kb) - frg.data())] = tags[std::size_t(src)];
            }
          }
        }
      }
    }
    for (int lane = 0; lane < 32; ++lane)
      for (std::size_t slot = 0; slot < want[lane].size(); ++slot)
        ASSERT_EQ(got[lane][slot], want[lane][slot])
            << (IsA ? "A" : "B") << (Mn ? " (MN-major)" : " (K-major)") << " thread " << warp * 32 + lane << " slot " << slot
            << ": ldmatrix delivered (row,k) = (" << got[lane][slot] / BlkK << "," << got[lane][slot] % BlkK
            << "), the MMA expects (" << want[lane][slot] / BlkK << "," << want[lane][slot] % BlkK << ")";
  }
}

template <class Element, int Access>
using Cfg = kernel::Sm80ConvConfig<Element, 128, 128, 32, 2, 4, 4, Access>;

template <class Element, conv::Operator Op>
void check_op() {
  using K = kernel::Sm80ImplicitGemmConv<Cfg<Element, 8>, Op>;
  check_operand<K, true>();
  check_operand<K, false>();
}

TEST(Sm80ConvTv, FpropBf16) { check_op<bfloat16_t, conv::Operator::kFprop>(); }
TEST(Sm80ConvTv, DgradBf16) { check_op<bfloat16_t, conv::Operator::kDgrad>(); }
TEST(Sm80ConvTv, WgradBf16) { check_op<bfloat16_t, conv::Operator::kWgrad>(); }
TEST(Sm80ConvTv, WgradF16) { check_op<half_t, conv::Operator::kWgrad>(); }

TEST(Sm80ConvTv, IndexDecoding) {
  kernel::Sm80ConvKernelParams kp{};
  kp.p.t = 2, kp.p.r = 3, kp.p.s = 5, kp.p.dilation_d = 3, kp.p.dilation_h = 2, kp.p.dilation_w = 1;
  kp.div_chan = FastDivisor32::make(7);
  kp.div_s = FastDivisor32::make(5);
  kp.div_r = FastDivisor32::make(3);
  for (int i = 0; i < 2 * 3 * 5 * 7; ++i) {  // (t, r, s, channel), channel fastest
    kernel::detail::ConvTapOffset const o = kernel::detail::conv_tap_offset(kp, i);
    int const ch = i % 7, s = i / 7 % 5, r = i / 35 % 3, t = i / 105;
    ASSERT_EQ(o.ch, ch) << i;
    ASSERT_EQ(o.dw, s * 1) << i;
    ASSERT_EQ(o.dh, r * 2) << i;
    ASSERT_EQ(o.dz, t * 3) << i;
  }
  kp.div_px[0] = FastDivisor32::make(7), kp.div_px[1] = FastDivisor32::make(6), kp.div_px[2] = FastDivisor32::make(5);
  for (int m = 0; m < 7 * 6 * 5 * 3; ++m) {
    kernel::detail::ConvPixel const px = kernel::detail::conv_pixel(kp, m);
    ASSERT_EQ(px.i0, m % 7);
    ASSERT_EQ(px.i1, m / 7 % 6);
    ASSERT_EQ(px.i2, m / 42 % 5);
    ASSERT_EQ(px.n, m / 210);
  }
  for (int d : {1, 2, 3, 7}) {
    FastDivisor32 const div = FastDivisor32::make(d);
    for (int v = 0; v < 100; ++v) {
      kernel::detail::ConvDivided const q = kernel::detail::conv_divided(v, div);
      ASSERT_EQ(q.quo, v / d);
      ASSERT_EQ(q.rem, v % d);
    }
  }
}

}  // namespace
