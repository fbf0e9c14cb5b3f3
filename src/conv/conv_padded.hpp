// src/conv/conv_padded.hpp -- the padded route of convolution() (tessel/conv/conv_padded.hpp has
// the rules: which tensors are staged, their widths, the workspace): the copies in, the inner call
// through the normal route, the copy out. conv.cpp's route() decides when it runs.
#pragma once

#include "conv_output_view.hpp"

#include <tessel/conv/conv_arguments.hpp>
#include <tessel/conv/conv_padded.hpp>
#include <tessel/core/status.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessel::detail {

// The name conv_kernel_name reports for the padded route: "padded:" + the inner call's kernel
// (stable storage, one string per name).
char const* conv_padded_name(std::string_view inner);

// The bytes the padded route takes: the staged pieces and the inner call's own scratch. Pre:
// conv_validate(a) passed and l is a's layout.
Status conv_padded_workspace_size(ConvArguments const& a, ConvPaddedLayout const& l, std::size_t* bytes);

// Runs a through its padded problem on `stream` (asynchronously): the caller's workspace
// (refused below conv_padded_workspace_size, naming both parts) or the library's stream-ordered
// pool. Pre: as conv_padded_workspace_size, a GPU checked.
Status conv_padded_run(ConvArguments const& a, ConvPaddedLayout const& l, cudaStream_t stream);

// One copy of a tensor of 16-bit elements between two channel widths (src/conv/conv_padded.cu):
//   dst[i0][i1][i2][i3][ch] = i0 < src_rows && ch < src.channels ? src[i0][i1][i2][i3][ch] : 0
// for every (i0, i1, i2, i3) < dst.extent and ch < dst.channels; dst.extent is the grid (src's
// own extents are ignored). Widening (copy in) writes the zero channels and the zero filters;
// narrowing (copy out) reads the first dst.channels of each src row.
struct ConvRepack {
  void const* src;
  ConvOutputView src_view;  // strides and channels of src
  std::int64_t src_rows;    // src holds i0 < src_rows (the filters k of a k' > k problem)
  void* dst;
  ConvOutputView dst_view;  // extents, strides and channels of dst
};
Status conv_repack(ConvRepack const& r, cudaStream_t stream);

}  // namespace tessel::detail
