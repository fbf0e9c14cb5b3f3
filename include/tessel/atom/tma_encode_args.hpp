// tessel/atom/tma_encode_args.hpp -- the arguments of cuTensorMapEncodeTiled, derived from a tensor
// in global memory and the shared-memory layout of one TMA box.
//
// make_tma_encode_args(gmem, smem_box) -> TmaEncodeResult { args, error }:
//   gmem      a global-memory tensor, 1 to 5 flat modes with element strides (run-time or static);
//   smem_box  the layout of one box in shared memory, mode i over mode i of gmem (gmem modes past
//             its rank get box extent 1): a Layout, or Swizzle o offset o Layout as
//             tile_to_shape(GMMA::Layout_*_Atom<T>, box shape) makes. The offset is ignored (where
//             the box lands is the copy's smem address, aligned to the swizzle pattern).
// TMA writes a box densely, its innermost dimension (the gmem mode of stride 1) fastest, and then
// permutes the 16-byte chunks of each 32/64/128-byte row with CU_TENSOR_MAP_SWIZZLE_{32,64,128}B
// (chunk c of 128-byte line l goes to chunk c ^ (l % (span / 16)); on byte offsets that is
// Swizzle<log2(span/16), 4, 3>). So the derivation reads the swizzle off smem_box, orders the
// tensor map's dimensions as smem_box's strides order the modes (the stride-1 gmem mode first,
// then the box modes by increasing shared-memory stride, then the extent-1 modes), and checks at
// every box element that smem_box is exactly what TMA writes. Each refusal is one line naming the
// rule; none is silent:
//   rank 1..5 and flat; base 16-byte aligned; extents 1..2^32; one mode of stride 1, contiguous in
//   the box too (TMA cannot transpose); other byte strides multiples of 16 below 2^40 (stride 0
//   only on extent 1); box extents 1..256, inner extent * element size a multiple of 16 bytes and,
//   swizzled, equal to the swizzle span; the swizzle Sw<B,log2(16/bytes),3>, B 0..3.
// The result mirrors the driver's enumerators (TmaDataType, TmaSwizzle, ... hold CUDA's values;
// src/runtime/tma_descriptor.cpp checks) and records mode_of_dim: the gmem mode behind each
// tensor-map dimension, the order in which the copy atom takes box coordinates.
//   e.g. A (M,K,L):(lda,1,M*lda) bf16, box tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>, (_128,_64)):
//        rank 3, dims {K, M, L}, strides {2*lda, 2*M*lda} bytes, box {64, 128, 1}, SWIZZLE_128B,
//        mode_of_dim {1, 0, 2}, 16384 bytes per copy.
#pragma once

#include <tessel/config.hpp>
#include <tessel/layout.hpp>
#include <tessel/numeric/bfloat16.hpp>
#include <tessel/numeric/float8.hpp>
#include <tessel/numeric/half.hpp>
#include <tessel/numeric/int_types.hpp>
#include <tessel/numeric/tfloat32.hpp>
#include <tessel/tensor/pointer.hpp>
#include <tessel/tensor/tensor.hpp>

#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace tessel {

// CUtensorMapDataType, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill values.
enum class TmaDataType : std::uint32_t {
  UINT8 = 0, UINT16, UINT32, INT32, UINT64, INT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32,
  TFLOAT32_FTZ
};
enum class TmaSwizzle : std::uint32_t { NONE = 0, B32 = 1, B64 = 2, B128 = 3 };
enum class TmaL2Promotion : std::uint32_t { NONE = 0, L2_64B = 1, L2_128B = 2, L2_256B = 3 };
enum class TmaOobFill : std::uint32_t { NONE = 0, NAN_REQUEST_ZERO_FMA = 1 };

// The data type a tensor map of T elements is encoded with (fp8 and int8 as raw bytes).
template <class T>
constexpr TmaDataType tma_data_type_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bfloat16_t>) return TmaDataType::BFLOAT16;
  else if constexpr (std::is_same_v<U, half_t>) return TmaDataType::FLOAT16;
  else if constexpr (std::is_same_v<U, tfloat32_t>) return TmaDataType::TFLOAT32;
  else if constexpr (std::is_same_v<U, float>) return TmaDataType::FLOAT32;
  else if constexpr (std::is_same_v<U, double>) return TmaDataType::FLOAT64;
  else if constexpr (std::is_same_v<U, std::int32_t>) return TmaDataType::INT32;
  else if constexpr (std::is_same_v<U, std::int64_t>) return TmaDataType::INT64;
  else if constexpr (sizeof(U) == 1) return TmaDataType::UINT8;
  else if constexpr (sizeof(U) == 2) return TmaDataType::UINT16;
  else if constexpr (sizeof(U) == 4) return TmaDataType::UINT32;
  else {
    static_assert(sizeof(U) == 8, "tma_data_type_of: TMA moves 1-, 2-, 4- or 8-byte elements");
    return TmaDataType::UINT64;
  }
}

// The most shared memory one CTA may have on sm_90 (227 KiB): no box is larger.
inline constexpr long long kTmaMaxBoxBytes = 232448;

struct TmaEncodeArgs {
  TmaDataType data_type = TmaDataType::UINT8;
  std::uint32_t rank = 0;
  void const* global_address = nullptr;
  std::uint64_t global_dim[5] = {};
  std::uint64_t global_strides[4] = {};  // bytes, of dimensions 1 .. rank-1
  std::uint32_t box_dim[5] = {};
  std::uint32_t element_strides[5] = {};
  std::uint32_t interleave = 0;  // CU_TENSOR_MAP_INTERLEAVE_NONE
  TmaSwizzle swizzle = TmaSwizzle::NONE;
  TmaL2Promotion l2_promotion = TmaL2Promotion::L2_256B;
  TmaOobFill oob_fill = TmaOobFill::NONE;
  int mode_of_dim[5] = {};        // the gmem mode behind tensor-map dimension d
  std::uint32_t box_bytes = 0;    // what one copy moves (an mbarrier's expect_tx)
};

struct TmaEncodeResult {
  TmaEncodeArgs args;
  std::string error;  // empty when args are valid
  bool ok() const { return error.empty(); }
};

namespace detail {

template <class Swz>
struct tma_swizzle_bits {  // a plain Layout: no swizzle
  static constexpr int b = 0, m = 4, s = 3;
};
template <int B, int M, int S>
struct tma_swizzle_bits<Swizzle<B, M, S>> {
  static constexpr int b = B, m = M, s = S;
};

template <class L>
struct box_parts {
  using swizzle = void;
  static constexpr L const& outer(L const& l) { return l; }
};
template <class I, class O, class L>
struct box_parts<ComposedLayout<I, O, L>> {
  static_assert(is_swizzle_v<I>, "make_tma_encode_args: the box layout must be Swizzle o offset o Layout, or a Layout");
  using swizzle = I;
  static constexpr L const& outer(ComposedLayout<I, O, L> const& l) { return l.layout_b(); }
};

// The box layout at coordinate c (one int per top-level mode).
template <class L, int R, std::size_t... Is>
constexpr long long box_offset(L const& l, long long const (&c)[R], std::index_sequence<Is...>) {
  if constexpr (sizeof...(Is) == 1) {
    return static_cast<long long>(l(c[0]));
  } else {
    return static_cast<long long>(l(make_coord(c[Is]...)));
  }
}

template <class F, std::size_t... Is>
constexpr void static_for(F const& f, std::index_sequence<Is...>) {
  (f(Int<int(Is)>{}), ...);
}

template <class... Parts>
std::string tma_refusal(Parts const&... parts) {
  std::ostringstream os;
  os << "make_tma_encode_args: ";
  (os << ... << parts);
  return os.str();
}

}  // namespace detail

template <class GEngine, class GLayout, class BoxLayout>
TmaEncodeResult make_tma_encode_args(Tensor<GEngine, GLayout> const& gmem, BoxLayout const& smem_box,
                                     TmaL2Promotion l2_promotion = TmaL2Promotion::L2_256B,
                                     TmaOobFill oob_fill = TmaOobFill::NONE) {
  using T = typename GEngine::value_type;
  constexpr long long E = sizeof(T);
  constexpr int R = rank_v<decltype(gmem.shape())>;
  using Parts = detail::box_parts<BoxLayout>;
  auto const& box = Parts::outer(smem_box);
  using Box = std::remove_cvref_t<decltype(box)>;
  constexpr int BR = Box::rank;
  static_assert(1 <= R && R <= 5, "make_tma_encode_args: a TMA tensor has 1 to 5 modes; reshape the global tensor");
  static_assert(decltype(depth(gmem.shape()))::value <= 1,
                "make_tma_encode_args: the global tensor's modes must be flat (each one extent and one stride)");
  static_assert(BR <= R, "make_tma_encode_args: the box layout has more modes than the global tensor");

  TmaEncodeResult out;
  TmaEncodeArgs& a = out.args;
  auto const refuse = [&out](auto const&... parts) {
    out.error = detail::tma_refusal(parts...);
    return out;
  };
  a.data_type = tma_data_type_of<T>();
  a.rank = R;
  a.global_address = raw_pointer(gmem.data());
  a.l2_promotion = l2_promotion;
  a.oob_fill = oob_fill;

  long long ext[5] = {}, str[5] = {}, boxe[5] = {}, step[5] = {};
  detail::static_for(
      [&](auto i) {
        ext[i] = static_cast<long long>(shape<i>(gmem.layout()));
        str[i] = static_cast<long long>(stride<i>(gmem.layout()));
      },
      std::make_index_sequence<R>{});
  for (int i = 0; i < R; ++i) boxe[i] = 1;
  detail::static_for([&](auto i) { boxe[i] = static_cast<long long>(size<i>(box)); }, std::make_index_sequence<BR>{});

  // The swizzle.
  using Bits = detail::tma_swizzle_bits<typename Parts::swizzle>;
  if constexpr (!std::is_void_v<typename Parts::swizzle>) {
    constexpr int want_m = E == 1 ? 4 : E == 2 ? 3 : E == 4 ? 2 : 1;
    if (Bits::b > 3 || (Bits::b > 0 && (Bits::m != want_m || Bits::s != 3)))
      return refuse("the box layout's Sw<", Bits::b, ",", Bits::m, ",", Bits::s,
                                             "> is not a TMA swizzle for ", E, "-byte elements (Sw<B,", want_m,
                                             ",3>, B = 1, 2, 3 for the 32-, 64-, 128-byte swizzle)");
  }
  a.swizzle = TmaSwizzle(Bits::b > 3 ? 0 : Bits::b);

  // Rules on the global tensor.
  auto const address = reinterpret_cast<std::uintptr_t>(a.global_address);
  if (address % 16 != 0)
    return refuse("the global tensor's base address must be 16-byte aligned (it is ",
                                           address % 16, " past a multiple of 16)");
  for (int i = 0; i < R; ++i) {
    if (ext[i] < 1 || ext[i] > (1LL << 32))
      return refuse("global mode ", i, " has extent ", ext[i], "; TMA takes 1 to 2^32");
    if (boxe[i] < 1 || boxe[i] > 256)
      return refuse("box mode ", i, " has extent ", boxe[i], "; a TMA box takes 1 to 256");
    if (str[i] == 0 && ext[i] > 1)
      return refuse("global mode ", i, " has stride 0 over extent ", ext[i],
                                             "; TMA cannot broadcast: give the mode extent 1 and repeat its coordinate");
    if (str[i] < 0)
      return refuse("global mode ", i, " has a negative stride; TMA strides are positive");
  }

  // Dimension 0: the mode of stride 1 (one that the box spans, if several).
  int inner = -1;
  for (int i = 0; i < R; ++i)
    if (str[i] == 1 && (inner < 0 || (boxe[inner] == 1 && boxe[i] > 1))) inner = i;
  if (inner < 0)
    return refuse("no mode of the global tensor has stride 1; TMA's innermost dimension is "
                                           "contiguous");

  // The box's shared-memory step along each mode (unswizzled).
  long long const origin_c[BR] = {};
  long long const origin = detail::box_offset<Box, BR>(box, origin_c, std::make_index_sequence<BR>{});
  for (int i = 0; i < BR; ++i) {
    if (boxe[i] == 1) continue;
    long long c[BR] = {};
    c[i] = 1;
    step[i] = detail::box_offset<Box, BR>(box, c, std::make_index_sequence<BR>{}) - origin;
  }
  if (inner < BR && boxe[inner] > 1 && step[inner] != 1)
    return refuse("box mode ", inner, " (the global tensor's stride-1 mode) has shared-memory "
                                           "stride ", step[inner], "; TMA writes the innermost dimension contiguously "
                                           "(it cannot transpose: use an MN-major/K-major box matching the tensor)");

  // The dimension order: inner, then the spanned modes by increasing shared-memory step, then the rest.
  int order[5] = {}, n = 0;
  order[n++] = inner;
  bool used[5] = {};
  used[inner] = true;
  for (;;) {
    int best = -1;
    for (int i = 0; i < R; ++i)
      if (!used[i] && boxe[i] > 1 && (best < 0 || step[i] < step[best])) best = i;
    if (best < 0) break;
    used[best] = true;
    order[n++] = best;
  }
  for (int i = 0; i < R; ++i)
    if (!used[i]) order[n++] = i;

  // Box extents, strides, and the pitch TMA would write each dimension at.
  long long pitch[5] = {}, p = 1;
  for (int d = 0; d < R; ++d) {
    int const m = order[d];
    a.mode_of_dim[d] = m;
    a.global_dim[d] = std::uint64_t(ext[m]);
    a.box_dim[d] = std::uint32_t(boxe[m]);
    a.element_strides[d] = 1;
    pitch[d] = p;
    p *= boxe[m];
    if (d > 0) {
      long long bytes = str[m] * E;
      if (ext[m] == 1) {  // never stepped: the compact stride, rounded up to 16 bytes
        long long const compact = d == 1 ? ext[order[0]] * E : (long long)a.global_strides[d - 2] * ext[order[d - 1]];
        bytes = (compact + 15) / 16 * 16;
      }
      if (bytes % 16 != 0)
        return refuse("global mode ", m, " has a byte stride of ", bytes,
                                               "; TMA strides must be multiples of 16 bytes");
      if (bytes >= (1LL << 40))
        return refuse("global mode ", m, " has a byte stride of ", bytes,
                                               "; TMA strides must be below 2^40 bytes");
      a.global_strides[d - 1] = std::uint64_t(bytes);
    }
  }
  if (p * E > kTmaMaxBoxBytes)
    return refuse("the box is ", p * E, " bytes; shared memory holds at most ", kTmaMaxBoxBytes);
  a.box_bytes = std::uint32_t(p * E);
  long long const inner_bytes = boxe[inner] * E;
  if (inner_bytes % 16 != 0)
    return refuse("the box's inner extent is ", inner_bytes,
                                           " bytes; TMA boxes are whole 16-byte units along the innermost dimension");
  if (Bits::b > 0 && inner_bytes != (16LL << Bits::b))
    return refuse("the box's inner extent is ", inner_bytes, " bytes but its swizzle spans ",
                                           16 << Bits::b, "; a swizzled box is one swizzle row wide (split the tile "
                                           "into boxes of that width)");

  // Every element where TMA puts it. A flat box layout is linear in its coordinates, as TMA's
  // dense order is, so the two agree on every element exactly when they agree on each spanned
  // mode's unit step: checked in R steps, whatever the box's extents (a run-time box costs a
  // launch nothing). A hierarchical one is walked element by element; the walk depends only on
  // the box layout and the dimension order, so for a static box layout it runs once per order and
  // process (it visits thousands of elements per tensor map, ~100 us for a 128 x 64 box).
  if constexpr (decltype(depth(box.shape()))::value <= 1) {
    for (int d = 0; d < R; ++d) {
      int const m = order[d];
      if (m >= BR || boxe[m] == 1 || step[m] == pitch[d]) continue;
      std::ostringstream crd;
      for (int i = 0; i < BR; ++i) crd << (i ? "," : "(") << (i == m ? 1 : 0);
      crd << ")";
      return refuse("box element ", crd.str(), " is at shared-memory offset ", step[m], " but TMA writes it at ",
                    pitch[d], " (the box must be dense, in the order of its strides)");
    }
  } else {
    [[maybe_unused]] std::atomic<bool>* walked = nullptr;
    if constexpr (is_static_v<Box>) {
      static std::atomic<bool> dense_in_order[5 * 5 * 5 * 5 * 5];  // by the order's digits, base 5
      int key = 0;
      for (int d = R - 1; d >= 0; --d) key = key * 5 + order[d];
      walked = &dense_in_order[key];
      if (walked->load(std::memory_order_acquire)) return out;
    }
    long long c[BR] = {};
    for (long long idx = 0; idx < p; ++idx) {
      long long rest = idx, dense = 0;
      for (int d = 0; d < R; ++d) {
        int const m = order[d];
        long long const v = rest % boxe[m];
        rest /= boxe[m];
        if (m < BR) c[m] = v;
        dense += v * pitch[d];
      }
      long long const got = detail::box_offset<Box, BR>(box, c, std::make_index_sequence<BR>{}) - origin;
      if (got != dense) {
        std::ostringstream crd;
        for (int i = 0; i < BR; ++i) crd << (i ? "," : "(") << c[i];
        crd << ")";
        return refuse("box element ", crd.str(), " is at shared-memory offset ", got, " but TMA writes it at ", dense,
                      " (the box must be dense, in the order of its strides)");
      }
    }
    if constexpr (is_static_v<Box>) walked->store(true, std::memory_order_release);
  }
  return out;
}

}  // namespace tessel
