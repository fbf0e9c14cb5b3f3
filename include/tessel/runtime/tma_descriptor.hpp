// tessel/runtime/tma_descriptor.hpp -- TMA descriptors and copy atoms made on the host (implemented
// in tessel::kernels: the driver's cuTensorMapEncodeTiled, reached through the CUDA runtime).
//
//   encode_tma_descriptor(args, &desc)   cuTensorMapEncodeTiled on TmaEncodeArgs
//                                        (atom/tma_encode_args.hpp); the driver's refusal is a
//                                        Status (cuda_error) naming the arguments
//   encode_tma_im2col_descriptor(args, &desc)   cuTensorMapEncodeIm2col on TmaIm2colArgs (below)
//   make_tma_copy(op, gmem, smem_box)    make_tma_encode_args + encode: a TmaCopy holding the
//                                        Status, the arguments and the copy atom
//                                        Copy_Atom<Copy_Traits<op, Int<box bits>>, T> whose traits
//                                        carry the descriptor; op is SM90_TMA_LOAD,
//                                        SM90_TMA_LOAD_MULTICAST (smem_box: the part one CTA
//                                        loads) or SM90_TMA_STORE
// A refusal of make_tma_encode_args (a rule of the tensors) comes back as invalid_argument with
// its one-line reason; nothing here aborts.
//   auto tma = make_tma_copy(SM90_TMA_LOAD{}, mA, tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{}, Shape<_128,_64>{}));
//   if (!tma.status) return tma.status;
//   kernel<<<...>>>(tma.atom, ...);   // a __grid_constant__ parameter; in the kernel:
//   //   atom.with(bar).copy(smem, k0, m0, 0);  // coordinates in tma.args.mode_of_dim order
#pragma once

#include <tessel/arch/sm90_copy_tma.hpp>
#include <tessel/atom/copy_atom.hpp>
#include <tessel/atom/copy_traits_sm90_tma.hpp>
#include <tessel/atom/tma_encode_args.hpp>
#include <tessel/core/status.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/tensor/tensor.hpp>

#include <type_traits>
#include <utility>

namespace tessel {

// cuTensorMapEncodeTiled(args) into *out.
Status encode_tma_descriptor(TmaEncodeArgs const& args, TmaDescriptor* out);

// An im2col tensor map (cuTensorMapEncodeIm2col) over a channels-last activation tensor of rank 3
// to 5, dimensions innermost first: (C, W[, H[, D]], N). One load (SM90_TMA_LOAD_IM2COL) reads
// pixels_per_column pixels x channels_per_pixel channels. Per spatial dimension (w first) the
// bounding box the walk stays in runs from lower_corner to extent - 1 + upper_corner, stepping by
// the traversal stride element_strides[d + 1]; for a convolution: lower = -pad, upper =
// pad - (filter - 1) * dilation, the traversal stride the convolution's. The driver bounds the
// corners to [-128, 127] at rank 4 and [-16, 15] at rank 5, the traversal strides to 1 .. 8.
struct TmaIm2colArgs {
  TmaDataType data_type = TmaDataType::UINT8;
  std::uint32_t rank = 0;
  void const* global_address = nullptr;
  std::uint64_t global_dim[5] = {};
  std::uint64_t global_strides[4] = {};  // bytes, of dimensions 1 .. rank-1
  int lower_corner[3] = {};
  int upper_corner[3] = {};
  std::uint32_t channels_per_pixel = 0;
  std::uint32_t pixels_per_column = 0;
  std::uint32_t element_strides[5] = {1, 1, 1, 1, 1};
  TmaSwizzle swizzle = TmaSwizzle::NONE;
  TmaL2Promotion l2_promotion = TmaL2Promotion::L2_256B;
  TmaOobFill oob_fill = TmaOobFill::NONE;
};

// cuTensorMapEncodeIm2col(args) into *out; the driver's refusal is a Status naming the arguments.
Status encode_tma_im2col_descriptor(TmaIm2colArgs const& args, TmaDescriptor* out);

template <class Atom>
struct TmaCopy {
  Status status;
  TmaEncodeArgs args;
  Atom atom;
};

template <class Op, class GEngine, class GLayout, class BoxLayout>
auto make_tma_copy(Op const&, Tensor<GEngine, GLayout> const& gmem, BoxLayout const& smem_box,
                   TmaL2Promotion l2_promotion = TmaL2Promotion::L2_256B, TmaOobFill oob_fill = TmaOobFill::NONE) {
  static_assert(std::is_same_v<Op, SM90_TMA_LOAD> || std::is_same_v<Op, SM90_TMA_LOAD_MULTICAST> ||
                    std::is_same_v<Op, SM90_TMA_STORE>,
                "make_tma_copy: the op is SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST or SM90_TMA_STORE");
  static_assert(is_static_v<decltype(size(smem_box))>, "make_tma_copy: the box layout needs a static size");
  using T = typename GEngine::value_type;
  using Bits = Int<decltype(size(smem_box))::value * sizeof_bits_v<T>>;
  using Atom = Copy_Atom<Copy_Traits<Op, Bits>, T>;
  TmaCopy<Atom> r;
  TmaEncodeResult e = make_tma_encode_args(gmem, smem_box, l2_promotion, oob_fill);
  r.args = e.args;
  if (!e.ok()) {
    r.status = Status::error(StatusCode::invalid_argument, std::move(e.error));
    return r;
  }
  Copy_Traits<Op, Bits> traits;
  r.status = encode_tma_descriptor(e.args, &traits.tma_desc);
  r.atom = Atom(traits);
  return r;
}

}  // namespace tessel
