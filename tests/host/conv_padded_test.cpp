// The padded route without a GPU: its pure rules (tessel/conv/conv_padded.hpp) -- the candidate
// widths, which tensors are staged and where in the workspace, the inner problem, the workspace
// rule and its refusal -- and what the host API reports for the problems that take it
// (conv_kernel_name answers without a GPU, as for an sm_80-class one; on a GPU these tests hold
// too). Expected numbers come from the tensor sizes, not from the library.
#include <tessel/conv/conv.hpp>
#include <tessel/conv/conv_padded.hpp>
#include <tessel/conv/conv_validate.hpp>
#include <tessel/runtime/device.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using namespace tessel;
using conv::Operator;

namespace {

using P = ConvPaddedPiece;

alignas(256) unsigned char storage[4096];

// A packed 2-D problem with 256-byte aligned (fake) pointers: x, the filters, y, out the pass's
// output; the pointers are never dereferenced here.
ConvArguments problem(Operator op, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k,
                      std::int64_t r, std::int64_t s, std::array<std::int64_t, 2> pad = {0, 0},
                      std::array<std::int64_t, 2> stride = {1, 1}, DType t = DType::bf16) {
  ConvArguments a = make_packed_conv2d(op, n, h, w, c, k, r, s, pad, stride, {1, 1}, 1, t);
  a.x.ptr = storage, a.filter.ptr = storage + 1024, a.y.ptr = storage + 2048;
  a.out = op == Operator::kFprop ? storage + 2048 : op == Operator::kDgrad ? storage : storage + 1024;
  return a;
}

ConvArguments stem(Operator op) { return problem(op, 128, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}); }

std::size_t up256(std::size_t b) { return (b + 255) / 256 * 256; }

}  // namespace

// Best first: the sm_90a widths (fprop and stride-1 dgrad on an sm_90 GPU, where the reduction's
// channels rounded to 8 are at least 32), then c and k rounded up to 8.
TEST(ConvPaddedWidths, CandidatesFollowTheKernelsThatTakeThem) {
  ConvPaddedWidths w[2];
  // The stem: c 3 -> 8 is below 32 (64 would be 8x the MMA work): the sm_80 widths only.
  ASSERT_EQ(conv_padded_candidates(stem(Operator::kFprop), true, w), 1);
  EXPECT_EQ(w[0].c, 8);
  EXPECT_EQ(w[0].k, 64);
  EXPECT_FALSE(w[0].sm90);
  // C 33 -> K 65 fprop on an sm_90 GPU: c 40 -> 64, k 65 -> 128 (a multiple of the tile widths).
  ConvArguments const odd = problem(Operator::kFprop, 64, 57, 57, 33, 65, 3, 3, {1, 1});
  ASSERT_EQ(conv_padded_candidates(odd, true, w), 2);
  EXPECT_EQ(w[0].c, 64);
  EXPECT_EQ(w[0].k, 128);
  EXPECT_TRUE(w[0].sm90);
  EXPECT_EQ(w[1].c, 40);
  EXPECT_EQ(w[1].k, 72);
  EXPECT_FALSE(w[1].sm90);
  // Elsewhere, and for wgrad, the sm_80 widths alone.
  ASSERT_EQ(conv_padded_candidates(odd, false, w), 1);
  EXPECT_EQ(w[0].c, 40);
  EXPECT_EQ(w[0].k, 72);
  ASSERT_EQ(conv_padded_candidates(problem(Operator::kWgrad, 64, 57, 57, 33, 65, 3, 3, {1, 1}), true, w), 1);
  // dgrad in forward terms: the reduction runs over k (72 stays), its output holds c (33 -> 64).
  ASSERT_EQ(conv_padded_candidates(problem(Operator::kDgrad, 64, 57, 57, 33, 65, 3, 3, {1, 1}), true, w), 2);
  EXPECT_EQ(w[0].c, 64);
  EXPECT_EQ(w[0].k, 72);
  EXPECT_TRUE(w[0].sm90);
  // Strided dgrad has no sm_90a kernel.
  EXPECT_EQ(conv_padded_candidates(problem(Operator::kDgrad, 2, 16, 16, 33, 65, 3, 3, {1, 1}, {2, 2}), true, w), 1);
  // An aligned output channel count of at least 64 is kept (no copy out); one below 64 is raised.
  ASSERT_EQ(conv_padded_candidates(problem(Operator::kFprop, 2, 9, 9, 33, 72, 3, 3), true, w), 2);
  EXPECT_EQ(w[0].c, 64);
  EXPECT_EQ(w[0].k, 72);
  ASSERT_EQ(conv_padded_candidates(problem(Operator::kFprop, 2, 9, 9, 32, 7, 3, 3), true, w), 2);
  EXPECT_EQ(w[0].c, 64);
  EXPECT_EQ(w[0].k, 64);
}

// The header's worked example: the stem's x and filters staged, y (k = 64) in place.
TEST(ConvPaddedLayout, StemWorkedExample) {
  ConvPaddedLayout const l = conv_padded_layout(stem(Operator::kFprop), {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::x));
  EXPECT_TRUE(l.is_staged(P::filter));
  EXPECT_FALSE(l.is_staged(P::y));
  EXPECT_FALSE(l.is_staged(P::residual));
  EXPECT_FALSE(l.is_staged(P::bias));
  EXPECT_EQ(l.bytes[int(P::x)], 128u * 224 * 224 * 8 * 2);  // 102760448
  EXPECT_EQ(l.bytes[int(P::filter)], 64u * 49 * 8 * 2);     // 50176
  EXPECT_EQ(l.offset_of(P::x), 0u);
  EXPECT_EQ(l.offset_of(P::filter), 102760448u);
  EXPECT_EQ(l.total, 102810624u);
}

// A staged output brings its residual (beta != 0) and, where its channels grow, its bias; every
// piece starts at a multiple of 256 bytes, in the order x, filter, y, residual, bias.
TEST(ConvPaddedLayout, StagedOutputResidualBiasAndAlignment) {
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
    ConvArguments a = problem(op, 2, 9, 11, 5, 7, 3, 3, {1, 1}, {1, 1}, DType::f16);
    a.beta = 0.5f, a.residual = storage + 3072;
    if (op != Operator::kWgrad) a.bias = reinterpret_cast<float const*>(storage + 3072);
    SCOPED_TRACE(conv::to_string(op));
    ConvPaddedLayout const l = conv_padded_layout(a, {8, 8, false});
    for (P p : {P::x, P::filter, P::y, P::residual}) EXPECT_TRUE(l.is_staged(p)) << int(p);
    EXPECT_EQ(l.is_staged(P::bias), op != Operator::kWgrad);
    std::size_t const x = 2u * 9 * 11 * 8 * 2, w = 8u * 9 * 8 * 2, y = 2u * 9 * 11 * 8 * 2;
    std::size_t const out = op == Operator::kFprop ? y : op == Operator::kDgrad ? x : w;
    EXPECT_EQ(l.bytes[int(P::x)], x);
    EXPECT_EQ(l.bytes[int(P::filter)], w);
    EXPECT_EQ(l.bytes[int(P::y)], y);
    EXPECT_EQ(l.bytes[int(P::residual)], out);
    std::size_t at = 0;
    for (int i = 0; i < kConvPaddedPieces; ++i) {
      if (!l.staged[i]) continue;
      EXPECT_EQ(l.offset[i], at) << i;
      EXPECT_EQ(l.offset[i] % 256, 0u) << i;
      at += up256(l.bytes[i]);
    }
    EXPECT_EQ(l.total, at);
    if (op != Operator::kWgrad) {
      EXPECT_EQ(l.bytes[int(P::bias)], 8u * sizeof(float));
    }
  }
}

// A tensor whose channels do not change is used in place unless the aligned kernels cannot read it
// there: a stride that is no multiple of 8, an address not 16-byte aligned (the output's residual
// too). A staged output of unchanged channels keeps the caller's bias.
TEST(ConvPaddedLayout, InPlaceUnlessMisaligned) {
  ConvArguments a = problem(Operator::kFprop, 2, 9, 9, 8, 64, 3, 3, {1, 1});
  EXPECT_FALSE(conv_padded_layout(a, {8, 64, false}).is_staged(P::x));
  a.x.stride_w = 12, a.x.stride_h = 12 * 9, a.x.stride_n = 12 * 81;  // channel slices, rows 24 bytes apart
  ConvPaddedLayout l = conv_padded_layout(a, {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::x));
  EXPECT_FALSE(l.is_staged(P::filter));
  EXPECT_FALSE(l.is_staged(P::y));
  a = problem(Operator::kFprop, 1, 9, 9, 8, 64, 3, 3, {1, 1});
  a.x.stride_n = 3;  // an extent of 1 takes any stride
  EXPECT_FALSE(conv_padded_layout(a, {8, 64, false}).is_staged(P::x));
  a.out = storage + 2048 + 8, a.bias = reinterpret_cast<float const*>(storage);  // out 8-byte aligned only
  l = conv_padded_layout(a, {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::y));
  EXPECT_FALSE(l.is_staged(P::bias));
  a.out = storage + 2048, a.beta = 1.0f, a.residual = storage + 3072 + 2;
  l = conv_padded_layout(a, {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::y));
  EXPECT_TRUE(l.is_staged(P::residual));
  a.filter.stride_k = 9 * 8 + 4;  // filters 8 bytes apart from a 16-byte boundary
  EXPECT_TRUE(conv_padded_layout(a, {8, 64, false}).is_staged(P::filter));
}

// The inner problem: the padded widths, staged tensors packed at their pieces, the others as given;
// the epilogue passed through with the staged residual and bias; valid, with no name or workspace.
TEST(ConvPaddedInner, StagedTensorsPackedAtTheirPieces) {
  ConvArguments a = problem(Operator::kDgrad, 2, 10, 12, 3, 64, 7, 7, {3, 3}, {2, 2});
  a.alpha = 1.5f, a.beta = -0.5f, a.residual = storage + 3072, a.bias = reinterpret_cast<float const*>(storage + 3072);
  a.activation = ConvActivation::relu, a.kernel = "auto";
  ConvPaddedLayout const l = conv_padded_layout(a, {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::x));  // dx: 3 -> 8 channels
  EXPECT_TRUE(l.is_staged(P::filter));
  EXPECT_FALSE(l.is_staged(P::y));  // dy: k = 64, in place
  std::uintptr_t const base = kConvPaddedPlaceholder;
  ConvArguments const in = conv_padded_inner(a, l, base);
  EXPECT_EQ(in.c, 8);
  EXPECT_EQ(in.k, 64);
  EXPECT_EQ(in.out, reinterpret_cast<void*>(base + l.offset_of(P::x)));
  EXPECT_EQ(in.x.stride_w, 8);
  EXPECT_EQ(in.x.stride_h, 12 * 8);
  EXPECT_EQ(in.x.stride_n, 10 * 12 * 8);
  EXPECT_EQ(in.filter.ptr, reinterpret_cast<void const*>(base + l.offset_of(P::filter)));
  EXPECT_EQ(in.filter.stride_k, 49 * 8);
  EXPECT_EQ(in.y.ptr, a.y.ptr);
  EXPECT_EQ(in.y.stride_n, a.y.stride_n);
  EXPECT_EQ(in.residual, reinterpret_cast<void const*>(base + l.offset_of(P::residual)));
  EXPECT_EQ(in.bias, reinterpret_cast<float const*>(base + l.offset_of(P::bias)));
  EXPECT_EQ(in.alpha, 1.5f);
  EXPECT_EQ(in.beta, -0.5f);
  EXPECT_EQ(in.activation, ConvActivation::relu);
  EXPECT_EQ(in.kernel, nullptr);
  EXPECT_EQ(in.workspace, nullptr);
  Status const s = conv_validate(in);
  EXPECT_TRUE(s.ok()) << s.reason;
  // Out in place (fprop, k = 64 unchanged): the caller's out, residual and bias.
  ConvArguments f = problem(Operator::kFprop, 2, 10, 12, 3, 64, 7, 7, {3, 3}, {2, 2});
  f.beta = 1.0f, f.residual = storage + 3072, f.bias = reinterpret_cast<float const*>(storage + 3072);
  ConvArguments const fin = conv_padded_inner(f, conv_padded_layout(f, {8, 64, false}), base);
  EXPECT_EQ(fin.out, f.out);
  EXPECT_EQ(fin.residual, f.residual);
  EXPECT_EQ(fin.bias, f.bias);
}

// A caller's workspace must hold the pieces and the inner call's scratch; the refusal names both.
TEST(ConvPaddedWorkspace, TooSmallIsRefusedWithTheBytesNeeded) {
  ConvPaddedLayout const l = conv_padded_layout(stem(Operator::kWgrad), {8, 64, false});
  EXPECT_TRUE(l.is_staged(P::x) && l.is_staged(P::filter) && !l.is_staged(P::y));  // dy: k = 64 in place
  std::size_t const inner = 4096;
  EXPECT_TRUE(conv_padded_workspace_check(l, inner, l.total + inner).ok());
  Status const s = conv_padded_workspace_check(l, inner, l.total + inner - 1);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("workspace_bytes: " + std::to_string(l.total + inner - 1) + " is below the " +
                               std::to_string(l.total + inner) + " bytes",
                           0),
            0u)
      << s.reason;
  EXPECT_NE(s.reason.find("c = 8, k = 64"), std::string::npos) << s.reason;
}

// ---- the host API (tessel::kernels; no GPU needed to name the kernel) ----------------------------

namespace {

std::string name_of(ConvArguments const& a) {
  char const* name = nullptr;
  Status const s = conv_kernel_name(a, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return s.ok() ? name : "";
}

}  // namespace

// The stem's wgrad with C = 5 (past the small-channel kernel) runs the aligned sm_80 kernel on
// c' = 8 on every GPU (its c is too small for the sm_90a widths); naming the element-wise kernel
// still runs it; naming the inner kernel alone is refused with the padded name. The stem itself
// (C = 3) runs the small-channel kernels unpadded in every pass, and a padded name is refused for
// them with that kernel's name.
TEST(ConvPaddedRoute, TheStemReportsThePaddedRoute) {
  for (DType t : {DType::bf16, DType::f16}) {
    std::string const dt = t == DType::bf16 ? "_bf16" : "_fp16";
    ConvArguments a = problem(Operator::kWgrad, 128, 224, 224, 5, 64, 7, 7, {3, 3}, {2, 2}, t);
    std::string const inner = "sm80_conv_wgrad" + dt + "_128x128x32";
    EXPECT_EQ(name_of(a), "padded:" + inner);
    std::string const align1 = inner + "_align1";
    a.kernel = align1.c_str();
    EXPECT_EQ(name_of(a), align1);
    a.kernel = inner.c_str();
    char const* name = nullptr;
    Status const s = conv_kernel_name(a, &name);
    EXPECT_EQ(s.code, StatusCode::invalid_argument);
    EXPECT_NE(s.reason.find("padded:" + inner), std::string::npos) << s.reason;
    std::string const padded = "padded:" + inner;
    a.kernel = padded.c_str();
    EXPECT_EQ(name_of(a), padded);

    for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
      ConvArguments b = problem(op, 128, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}, t);
      std::string const smallc = std::string("sm80_conv_") + conv::to_string(op) + dt + "_smallc";
      EXPECT_EQ(name_of(b), smallc);
      std::string const old = std::string("padded:sm80_conv_") + conv::to_string(op) + dt + "_128x128x32";
      b.kernel = old.c_str();
      Status const r = conv_kernel_name(b, &name);
      EXPECT_EQ(r.code, StatusCode::invalid_argument);
      EXPECT_NE(r.reason.find(smallc), std::string::npos) << r.reason;
    }
  }
}

// C 33 -> K 65 takes the padded route on any GPU; groups > 1 and the problems the aligned kernels
// read in place do not.
TEST(ConvPaddedRoute, WhoTakesIt) {
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
    SCOPED_TRACE(conv::to_string(op));
    EXPECT_EQ(name_of(problem(op, 64, 57, 57, 33, 65, 3, 3, {1, 1})).rfind("padded:", 0), 0u);
    EXPECT_EQ(name_of(problem(op, 2, 9, 9, 9, 1, 3, 3, {1, 1})).rfind("padded:", 0), 0u);
    EXPECT_EQ(name_of(problem(op, 2, 16, 16, 64, 64, 3, 3, {1, 1})).find("padded:"), std::string::npos);
    ConvArguments g = make_packed_conv2d(op, 2, 9, 8, 12, 20, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4);  // 3 -> 5 per group
    g.x.ptr = storage, g.filter.ptr = storage + 1024, g.y.ptr = storage + 2048;
    g.out = op == Operator::kFprop ? storage + 2048 : op == Operator::kDgrad ? storage : storage + 1024;
    EXPECT_EQ(name_of(g).find("padded:"), std::string::npos) << name_of(g);
  }
  // The sm_80 widths may be named on any GPU (on an sm_90 one the route picks the sm_90a widths).
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    ConvArguments a = problem(op, 64, 57, 57, 33, 65, 3, 3, {1, 1});
    std::string const sm80 = std::string("padded:sm80_conv_") + conv::to_string(op) + "_bf16_128x128x32";
    a.kernel = sm80.c_str();
    EXPECT_EQ(name_of(a), sm80);
  }
  if (!no_device_reason().empty()) {  // no GPU: the answers of an sm_80-class one
    EXPECT_EQ(name_of(problem(Operator::kFprop, 64, 57, 57, 33, 65, 3, 3, {1, 1})), "padded:sm80_conv_fprop_bf16_128x128x32");
    std::size_t bytes = 0;
    EXPECT_EQ(conv_workspace_size(stem(Operator::kFprop), &bytes).code, StatusCode::no_device);
  }
}

// The registry lists the padded route for its small- and odd-channel probes, each entry on the
// architecture of its inner kernel.
TEST(ConvPaddedRoute, RegistryEntries) {
  int padded = 0;
  for (int i = 0; i < conv_kernel_count(); ++i) {
    ConvKernelInfo const k = conv_kernel_info(i);
    std::string const name = k.name;
    if (name.rfind("padded:", 0) != 0) continue;
    ++padded;
    EXPECT_EQ(k.min_sm, name.rfind("padded:sm90_", 0) == 0 ? 90 : 80) << name;
    EXPECT_EQ(name.find("_align1"), std::string::npos) << name;
  }
  EXPECT_GE(padded, 6);  // C 33 -> K 65's three passes in two dtypes at least
  EXPECT_TRUE(can_implement(stem(Operator::kFprop)).ok() || !no_device_reason().empty());
}
