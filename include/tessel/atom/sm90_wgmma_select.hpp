// tessel/atom/sm90_wgmma_select.hpp -- which wgmma instruction (arch/sm90_mma_wgmma_ops.hpp) a
// kernel issues for an element type and tile width, shared by the sm_90a GEMM and attention.
//   Sm90WgmmaOf<Element, N>::Op              A and B from shared memory, both K-major
//   Sm90WgmmaOf<Element, N>::Transposed<a,b> the same, either operand MN-major (16-bit types)
//   Sm90WgmmaRsOf<Element, N>::Op<TransB>    A from registers (attention's P in O += P V)
//   Sm90Fp8WgmmaOf<A, B, N>::Op              fp8 pairs (K-major only, k32)
#pragma once

#include <tessel/arch/sm90_mma_wgmma_ops.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/tfloat32.hpp>

namespace tessel::kernel {
// The wgmma instruction for an input type and tile width: Op reads K-major A and B; for 16-bit
// types Transposed<TransA, TransB> reads either operand MN-major (the instruction's transpose
// bits; fp8 wgmma has none).
template <class Element, int N>
struct Sm90WgmmaOf {
  static_assert(sizeof(Element) == 0, "Sm90WgmmaOf: the sm_90a GEMM takes bfloat16_t or half_t inputs with TileN 16, 64, 128, 192 or 256, float_e4m3_t (any fp8 pair) or tfloat32_t with 128 or 256");
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 16> {  // (no MN-major operands: 16 rows are not a 64-row TMA box)
  using Op = SM90_64x16x16_F32BF16BF16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 16> {
  using Op = SM90_64x16x16_F32F16F16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 256> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x256x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 192> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x192x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 128> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x128x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 64> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x64x16_F32BF16BF16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 256> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x256x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 192> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x192x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 128> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x128x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 64> {
  template <int TransA, int TransB>
  using Transposed = SM90_64x64x16_F32F16F16_SS<TransA, TransB>;
  using Op = Transposed<0, 0>;
};

// The attention kernels' key-block widths (16-bit types, K-major operands).
template <>
struct Sm90WgmmaOf<bfloat16_t, 80> {
  using Op = SM90_64x80x16_F32BF16BF16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 80> {
  using Op = SM90_64x80x16_F32F16F16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<bfloat16_t, 176> {
  using Op = SM90_64x176x16_F32BF16BF16_SS<0, 0>;
};
template <>
struct Sm90WgmmaOf<half_t, 176> {
  using Op = SM90_64x176x16_F32F16F16_SS<0, 0>;
};

// The fp8 wgmma instruction for an input pair and tile width (K-major A and B, k32). The fp8
// kernels are compiled for e4m3 x e4m3 and take the other three pairs at run time
// (Sm90GemmParams::fp8_pair; e5m2 x e5m2 is refused by the API, as by cuBLASLt): the operands are
// the same bytes to TMA and shared memory, only the instruction differs.
template <class A, class B, int N>
struct Sm90Fp8WgmmaOf {
  static_assert(sizeof(A) == 0, "Sm90Fp8WgmmaOf: fp8 tiles are 128 or 256 wide, and e5m2 x e5m2 is not taken");
};
// clang-format off
template <> struct Sm90Fp8WgmmaOf<float_e4m3_t, float_e4m3_t, 128> { using Op = SM90_64x128x32_F32E4M3E4M3_SS; };
template <> struct Sm90Fp8WgmmaOf<float_e4m3_t, float_e5m2_t, 128> { using Op = SM90_64x128x32_F32E4M3E5M2_SS; };
template <> struct Sm90Fp8WgmmaOf<float_e5m2_t, float_e4m3_t, 128> { using Op = SM90_64x128x32_F32E5M2E4M3_SS; };
template <> struct Sm90Fp8WgmmaOf<float_e4m3_t, float_e4m3_t, 256> { using Op = SM90_64x256x32_F32E4M3E4M3_SS; };
template <> struct Sm90Fp8WgmmaOf<float_e4m3_t, float_e5m2_t, 256> { using Op = SM90_64x256x32_F32E4M3E5M2_SS; };
template <> struct Sm90Fp8WgmmaOf<float_e5m2_t, float_e4m3_t, 256> { using Op = SM90_64x256x32_F32E5M2E4M3_SS; };
// clang-format on
template <int N>
struct Sm90WgmmaOf<float_e4m3_t, N> {
  using Op = typename Sm90Fp8WgmmaOf<float_e4m3_t, float_e4m3_t, N>::Op;
};

// tf32 (fp32 operands; TMA rounds them to tf32 on the way into shared memory, the tensor map's
// data type being TFLOAT32): K-major A and B, k8 -- 32 bytes per k-slice, as the other types.
template <>
struct Sm90WgmmaOf<tfloat32_t, 128> {
  using Op = SM90_64x128x8_F32TF32TF32_SS;
};
template <>
struct Sm90WgmmaOf<tfloat32_t, 256> {
  using Op = SM90_64x256x8_F32TF32TF32_SS;
};

// The register-A wgmma for a 16-bit input type and width N: Op<TransB> reads B K-major (0) or
// MN-major (1) from shared memory.
template <class Element, int N>
struct Sm90WgmmaRsOf {
  static_assert(sizeof(Element) == 0, "Sm90WgmmaRsOf: register-A wgmma takes bfloat16_t or half_t with N 64, 128, 192 or 256");
};
// clang-format off
template <> struct Sm90WgmmaRsOf<bfloat16_t, 64> { template <int TransB> using Op = SM90_64x64x16_F32BF16BF16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<bfloat16_t, 128> { template <int TransB> using Op = SM90_64x128x16_F32BF16BF16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<bfloat16_t, 192> { template <int TransB> using Op = SM90_64x192x16_F32BF16BF16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<bfloat16_t, 256> { template <int TransB> using Op = SM90_64x256x16_F32BF16BF16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<half_t, 64> { template <int TransB> using Op = SM90_64x64x16_F32F16F16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<half_t, 128> { template <int TransB> using Op = SM90_64x128x16_F32F16F16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<half_t, 192> { template <int TransB> using Op = SM90_64x192x16_F32F16F16_RS<TransB>; };
template <> struct Sm90WgmmaRsOf<half_t, 256> { template <int TransB> using Op = SM90_64x256x16_F32F16F16_RS<TransB>; };
// clang-format on

}  // namespace tessel::kernel
