// src/conv/conv_padded.cpp -- the padded route's host side (conv_padded.hpp): the workspace, the
// copies in, the inner call through tessel::convolution, the copy out, all on the call's stream.
#include "conv_padded.hpp"

#include "../gemm/gemm_canonical.hpp"  // pool_allocate, cuda_failure

#include <tessel/conv/conv.hpp>

#include <functional>
#include <mutex>
#include <set>
#include <string>

namespace tessel::detail {

namespace {

using P = ConvPaddedPiece;

// One of a's three tensors as extents, strides and channels: x [n][d][h][w][c], y [n][z][p][q][k],
// the filters [k][t][r][s][c] (groups == 1).
ConvOutputView view_of(ConvArguments const& a, ConvOperand o) {
  ConvOutputExtents const e = conv_output_extents(a);
  switch (o) {
    case ConvOperand::x: return {{a.n, a.d, a.h, a.w}, a.c, {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w}};
    case ConvOperand::y: return {{a.n, e.z, e.p, e.q}, a.k, {a.y.stride_n, a.y.stride_d, a.y.stride_h, a.y.stride_w}};
    case ConvOperand::filter: return {{a.k, a.t, a.r, a.s}, a.c, {a.filter.stride_k, a.r * a.s * a.c, a.s * a.c, a.c}};
  }
  return {};
}

ConvOperand operand_of(P p) { return p == P::x ? ConvOperand::x : p == P::y ? ConvOperand::y : ConvOperand::filter; }

void const* input_ptr(ConvArguments const& a, ConvOperand o) {
  return o == ConvOperand::x ? a.x.ptr : o == ConvOperand::y ? a.y.ptr : a.filter.ptr;
}

// src (a's tensor o at `from`) into dst (inner's tensor o at `to`), or the reverse for the copy out:
// the grid is dst's view; src's rows past its own first extent read as zero.
Status repack(void const* from, ConvOutputView const& src, void* to, ConvOutputView const& dst, cudaStream_t stream) {
  return conv_repack({from, src, src.extent[0], to, dst}, stream);
}

// The staged inputs, the residual and the bias, from a into inner's pieces.
Status stage_in(ConvArguments const& a, ConvPaddedLayout const& l, ConvArguments const& inner, cudaStream_t stream) {
  ConvOperand const out = conv_output_operand(a.op);
  for (P p : {P::x, P::filter, P::y}) {
    ConvOperand const o = operand_of(p);
    if (!l.is_staged(p) || o == out) continue;
    if (Status s = repack(input_ptr(a, o), view_of(a, o), const_cast<void*>(input_ptr(inner, o)), view_of(inner, o), stream); !s)
      return s;
  }
  if (l.is_staged(P::residual))
    if (Status s = repack(a.residual, view_of(a, out), const_cast<void*>(inner.residual), view_of(inner, out), stream); !s) return s;
  if (l.is_staged(P::bias)) {
    std::size_t const have = std::size_t(a.op == conv::Operator::kFprop ? a.k : a.c) * sizeof(float);
    auto* dst = reinterpret_cast<unsigned char*>(const_cast<float*>(inner.bias));
    if (cudaError_t err = cudaMemcpyAsync(dst, a.bias, have, cudaMemcpyDeviceToDevice, stream); err != cudaSuccess)
      return cuda_failure("cudaMemcpyAsync (the padded route's bias)", err);
    if (cudaError_t err = cudaMemsetAsync(dst + have, 0, l.bytes[int(P::bias)] - have, stream); err != cudaSuccess)
      return cuda_failure("cudaMemsetAsync (the padded route's bias)", err);
  }
  return Status::success();
}

// The staged output's first channels (and filters) into a.out.
Status copy_out(ConvArguments const& a, ConvPaddedLayout const& l, ConvArguments const& inner, cudaStream_t stream) {
  ConvOperand const out = conv_output_operand(a.op);
  P const piece = out == ConvOperand::x ? P::x : out == ConvOperand::y ? P::y : P::filter;
  if (!l.is_staged(piece)) return Status::success();
  return repack(inner.out, view_of(inner, out), a.out, view_of(a, out), stream);
}

}  // namespace

char const* conv_padded_name(std::string_view inner) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;  // nodes: the strings never move
  std::lock_guard<std::mutex> const lock(mutex);
  return names.insert("padded:" + std::string(inner)).first->c_str();
}

Status conv_padded_workspace_size(ConvArguments const& a, ConvPaddedLayout const& l, std::size_t* bytes) {
  *bytes = 0;
  std::size_t inner = 0;
  if (Status s = conv_workspace_size(conv_padded_inner(a, l, kConvPaddedPlaceholder), &inner); !s) return s;
  *bytes = l.total + inner;
  return Status::success();
}

Status conv_padded_run(ConvArguments const& a, ConvPaddedLayout const& l, cudaStream_t stream) {
  std::size_t inner_bytes = 0;
  if (Status s = conv_workspace_size(conv_padded_inner(a, l, kConvPaddedPlaceholder), &inner_bytes); !s) return s;
  if (a.workspace != nullptr)
    if (Status s = conv_padded_workspace_check(l, inner_bytes, a.workspace_bytes); !s) return s;
  std::size_t const need = l.total + inner_bytes;
  void* base = a.workspace;
  if (base == nullptr)
    if (Status s = pool_allocate(&base, need,
                                 "the " + std::to_string(need >> 10) + " KiB of the padded route's channel-padded tensors", stream);
        !s)
      return s;
  ConvArguments inner = conv_padded_inner(a, l, reinterpret_cast<std::uintptr_t>(base));
  if (inner_bytes > 0) inner.workspace = static_cast<unsigned char*>(base) + l.total, inner.workspace_bytes = inner_bytes;
  Status result = stage_in(a, l, inner, stream);
  if (result.ok()) result = convolution(inner, stream);
  if (result.ok()) result = copy_out(a, l, inner, stream);
  if (a.workspace == nullptr)
    if (cudaError_t err = cudaFreeAsync(base, stream); err != cudaSuccess && result.ok())
      result = cuda_failure("cudaFreeAsync (the padded route's workspace)", err);
  return result;
}

}  // namespace tessel::detail
