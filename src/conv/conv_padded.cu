// src/conv/conv_padded.cu -- the padded route's copy between channel widths (conv_padded.hpp,
// ConvRepack): memory-bound, one thread per 8 destination channels of one row (16 bytes),
// 16-byte loads and stores where the chunk is whole and aligned, element accesses otherwise
// (an unaligned source such as the stem's 3-channel pixels: consecutive threads still read
// consecutive pixels). The elements are moved as 16-bit patterns: one kernel for bf16 and fp16.
#include "conv_padded.hpp"

#include <tessel/config.hpp>
#include <tessel/schedule/fast_divisor.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tessel::detail {

namespace {

struct RepackParams {
  std::uint16_t const* src;
  std::uint16_t* dst;
  std::int64_t src_stride[4], dst_stride[4];
  std::int64_t extent[4];  // the destination's (i0, i1, i2, i3)
  std::int64_t src_rows;
  std::int64_t src_channels, dst_channels, chunks;  // chunks = ceil(dst_channels / 8)
  std::int64_t total;                               // extent product x chunks
  bool src_vec, dst_vec;                            // 16-byte aligned pointer and strides multiples of 8
  FastDivisor32 div_chunks, div_e3, div_e2, div_e1;  // the decode when total < 2^31
};

struct Coord {
  std::int64_t i[4], chunk;
};

// idx -> (i0, i1, i2, i3, chunk), chunk fastest. Narrow: every index below 2^31 (FastDivisor32).
template <bool Narrow>
TESSEL_DEVICE Coord decode(RepackParams const& p, std::int64_t idx) {
  Coord c;
  if constexpr (Narrow) {
    std::uint32_t u = std::uint32_t(idx);
    std::uint32_t q = p.div_chunks.div(u);
    c.chunk = u - q * std::uint32_t(p.chunks), u = q;
    q = p.div_e3.div(u), c.i[3] = u - q * std::uint32_t(p.extent[3]), u = q;
    q = p.div_e2.div(u), c.i[2] = u - q * std::uint32_t(p.extent[2]), u = q;
    q = p.div_e1.div(u), c.i[1] = u - q * std::uint32_t(p.extent[1]);
    c.i[0] = q;
  } else {
    c.chunk = idx % p.chunks, idx /= p.chunks;
    c.i[3] = idx % p.extent[3], idx /= p.extent[3];
    c.i[2] = idx % p.extent[2], idx /= p.extent[2];
    c.i[1] = idx % p.extent[1];
    c.i[0] = idx / p.extent[1];
  }
  return c;
}

template <bool Narrow>
__global__ void conv_repack_kernel(RepackParams const p) {
  for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < p.total;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    Coord const c = decode<Narrow>(p, idx);
    std::int64_t const ch0 = c.chunk * 8;
    std::int64_t src_off = ch0, dst_off = ch0;
    TESSEL_UNROLL
    for (int j = 0; j < 4; ++j) src_off += c.i[j] * p.src_stride[j], dst_off += c.i[j] * p.dst_stride[j];
    std::int64_t const left_src = c.i[0] < p.src_rows ? p.src_channels - ch0 : 0;
    int const n_src = left_src <= 0 ? 0 : left_src >= 8 ? 8 : int(left_src);
    int const n_dst = p.dst_channels - ch0 >= 8 ? 8 : int(p.dst_channels - ch0);
    alignas(16) std::uint16_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (n_src == 8 && p.src_vec) {
      *reinterpret_cast<uint4*>(v) = *reinterpret_cast<uint4 const*>(p.src + src_off);
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e)
        if (e < n_src) v[e] = p.src[src_off + e];
    }
    if (n_dst == 8 && p.dst_vec) {
      *reinterpret_cast<uint4*>(p.dst + dst_off) = *reinterpret_cast<uint4 const*>(v);
    } else {
      TESSEL_UNROLL
      for (int e = 0; e < 8; ++e)
        if (e < n_dst) p.dst[dst_off + e] = v[e];
    }
  }
}

// A 16-byte aligned pointer, and every stride of an extent > 1 a multiple of 8 elements.
bool vec_ok(void const* ptr, std::int64_t const (&stride)[4], std::int64_t const (&extent)[4]) {
  if (reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0) return false;
  for (int j = 0; j < 4; ++j)
    if (extent[j] > 1 && stride[j] % 8 != 0) return false;
  return true;
}

}  // namespace

Status conv_repack(ConvRepack const& r, cudaStream_t stream) {
  RepackParams p{};
  p.src = static_cast<std::uint16_t const*>(r.src);
  p.dst = static_cast<std::uint16_t*>(r.dst);
  for (int j = 0; j < 4; ++j) {
    p.src_stride[j] = r.src_view.stride[j], p.dst_stride[j] = r.dst_view.stride[j];
    p.extent[j] = r.dst_view.extent[j];
  }
  p.src_rows = r.src_rows;
  p.src_channels = r.src_view.channels, p.dst_channels = r.dst_view.channels;
  p.chunks = (p.dst_channels + 7) / 8;
  p.total = p.extent[0] * p.extent[1] * p.extent[2] * p.extent[3] * p.chunks;
  if (p.total == 0) return Status::success();
  p.src_vec = p.src_channels % 8 == 0 && vec_ok(r.src, p.src_stride, p.extent);
  p.dst_vec = p.dst_channels % 8 == 0 && vec_ok(r.dst, p.dst_stride, p.extent);
  constexpr std::int64_t kNarrow = 0x7fffffffLL;
  constexpr int kThreads = 256;
  unsigned const grid = unsigned(std::clamp<std::int64_t>((p.total + kThreads - 1) / kThreads, 1, std::int64_t(1) << 20));
  if (p.total <= kNarrow) {
    p.div_chunks = FastDivisor32::make(p.chunks);
    p.div_e3 = FastDivisor32::make(p.extent[3]);
    p.div_e2 = FastDivisor32::make(p.extent[2]);
    p.div_e1 = FastDivisor32::make(p.extent[1]);
    conv_repack_kernel<true><<<grid, kThreads, 0, stream>>>(p);
  } else {
    conv_repack_kernel<false><<<grid, kThreads, 0, stream>>>(p);
  }
  if (cudaError_t const err = cudaGetLastError(); err != cudaSuccess)
    return Status::error(StatusCode::cuda_error, std::string("launch of the padded route's channel copy: ") + cudaGetErrorName(err) +
                                                     ": " + cudaGetErrorString(err));
  return Status::success();
}

}  // namespace tessel::detail
