// src/gemm/tensor_simt_f32.cu -- seed 004's kernel with tessel tensors (tensor_simt_gemm.hpp), fp32:
// 128x128x8 CTA tile, 256 threads (tA, tB: 32x8; tC: 16x16, 8x8 outputs each), M/N-major smem.
#include "simt_instances.hpp"

#include <tessel/gemm/kernel/tensor_simt_gemm.hpp>

#include <algorithm>

namespace tessel::kernel::detail {

namespace {

auto const kTiler = make_shape(Int<128>{}, Int<128>{}, Int<8>{});
auto const kSmemA = make_layout(make_shape(Int<128>{}, Int<8>{}));  // (BLK_M,BLK_K), m contiguous
auto const kSmemB = make_layout(make_shape(Int<128>{}, Int<8>{}));  // (BLK_N,BLK_K), n contiguous
auto const kThrA = make_layout(make_shape(Int<32>{}, Int<8>{}));
auto const kThrB = make_layout(make_shape(Int<32>{}, Int<8>{}));
auto const kThrC = make_layout(make_shape(Int<16>{}, Int<16>{}));

auto kernel() {
  return tensor_simt_gemm_kernel<decltype(kTiler), decltype(kSmemA), decltype(kThrA), decltype(kSmemB), decltype(kThrB),
                                 decltype(kThrC)>;
}

}  // namespace

cudaError_t launch_tensor_simt(GemmArguments const& g, cudaStream_t stream) {
  SimtGemmParams p;
  p.m = g.m, p.n = g.n, p.k = g.k, p.batch = g.batch_count, p.alpha = g.alpha, p.beta = g.beta;
  p.a = g.a, p.batch_stride_a = g.batch_stride_a;
  p.b = g.b, p.batch_stride_b = g.batch_stride_b;
  p.c = g.c, p.batch_stride_c = g.batch_stride_c;
  p.d = g.d, p.batch_stride_d = g.batch_stride_d;
  bool const ar = g.a_order == MatrixOrder::row_major, br = g.b_order == MatrixOrder::row_major,
             cr = g.c_order == MatrixOrder::row_major;
  TensorGemmStrides const st{ar ? g.lda : 1, ar ? 1 : g.lda,   // A (M,K)
                             br ? 1 : g.ldb, br ? g.ldb : 1,   // B (N,K): op(B) is K x N
                             cr ? g.ldc : 1, cr ? 1 : g.ldc,   // C (M,N)
                             cr ? g.ldd : 1, cr ? 1 : g.ldd};  // D (M,N)
  dim3 const grid(static_cast<unsigned>((g.m + 127) / 128), static_cast<unsigned>((g.n + 127) / 128),
                  static_cast<unsigned>(std::min<std::int64_t>(g.batch_count, 65535)));
  kernel()<<<grid, 256, 0, stream>>>(p, st, kTiler, kSmemA, kThrA, kSmemB, kThrB, kThrC);
  return cudaGetLastError();
}

cudaError_t tensor_simt_attributes(cudaFuncAttributes* attr) { return cudaFuncGetAttributes(attr, kernel()); }

}  // namespace tessel::kernel::detail
