// tessel::convolution, the host API, judged against the fp64 reference of
// tessel/reference/conv_device.hpp.
//
// Every run: inputs uniform(-1,1) (never zeros), the output buffer poisoned with NaN first, the
// whole output judged elementwise (|D - R| <= tol * S, tol from the sum's length; a NaN where the
// reference is finite fails) with the first bad coordinate reported, and nothing written between
// the output's elements (padded strides stay NaN). Covered, for fprop, dgrad and wgrad and both
// dtypes: N = 1, H = W = 1, padding larger than the filter, strides larger than the filter,
// dilation, asymmetric filters and strides, every channel count 1..9 and odd ones (C = 33,
// K = 65), groups and depthwise, 3-D, the epilogue (alpha, residual, bias, ReLU/GELU/SiLU),
// non-packed strides, empty sums and alpha = 0 (no input read), NaN and Inf in the inputs. The
// judge is checked against planted errors. The argument-error and registry tests need no GPU;
// tests named *Small* are the compute-sanitizer subset.
#include "conv_sm90_pick_cases.hpp"
#include "gpu/gemm_test_support.hpp"  // DeviceMem
#include "gpu/gpu_test.hpp"

#include <tessel/conv/conv.hpp>
#include <tessel/reference/conv_device.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/numeric.hpp>
#include <tessel/runtime/device.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace tessel;
using conv::Operator;

namespace {

constexpr Operator kOps[] = {Operator::kFprop, Operator::kDgrad, Operator::kWgrad};
constexpr DType kDtypes[] = {DType::bf16, DType::f16};

std::string describe(ConvArguments const& a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s %s n%lld %lldx%lldx%lld c%lld->k%lld %lldx%lldx%lld pad %lld,%lld,%lld stride %lld,%lld,%lld "
                "dil %lld,%lld,%lld g%lld",
                conv::to_string(a.op), to_string(a.dtype), (long long)a.n, (long long)a.d, (long long)a.h, (long long)a.w,
                (long long)a.c, (long long)a.k, (long long)a.t, (long long)a.r, (long long)a.s, (long long)a.pad_d,
                (long long)a.pad_h, (long long)a.pad_w, (long long)a.stride_d, (long long)a.stride_h,
                (long long)a.stride_w, (long long)a.dilation_d, (long long)a.dilation_h, (long long)a.dilation_w,
                (long long)a.groups);
  return buf;
}

// The element offsets of the pass's output tensor (to find writes between them).
std::vector<std::int64_t> output_offsets(ConvArguments const& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  std::int64_t const cg = a.c / a.groups;
  std::int64_t ext[4], st[4], ch;
  if (a.op == Operator::kFprop) {
    std::int64_t const x[4] = {a.n, e.z, e.p, e.q}, s[4] = {a.y.stride_n, a.y.stride_d, a.y.stride_h, a.y.stride_w};
    std::memcpy(ext, x, sizeof ext), std::memcpy(st, s, sizeof st), ch = a.k;
  } else if (a.op == Operator::kDgrad) {
    std::int64_t const x[4] = {a.n, a.d, a.h, a.w}, s[4] = {a.x.stride_n, a.x.stride_d, a.x.stride_h, a.x.stride_w};
    std::memcpy(ext, x, sizeof ext), std::memcpy(st, s, sizeof st), ch = a.c;
  } else {
    std::int64_t const x[4] = {a.k, a.t, a.r, a.s}, s[4] = {a.filter.stride_k, a.r * a.s * cg, a.s * cg, cg};
    std::memcpy(ext, x, sizeof ext), std::memcpy(st, s, sizeof st), ch = cg;
  }
  std::vector<std::int64_t> out;
  for (std::int64_t i0 = 0; i0 < ext[0]; ++i0)
    for (std::int64_t i1 = 0; i1 < ext[1]; ++i1)
      for (std::int64_t i2 = 0; i2 < ext[2]; ++i2)
        for (std::int64_t i3 = 0; i3 < ext[3]; ++i3)
          for (std::int64_t c = 0; c < ch; ++c) out.push_back(i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3] + c);
  return out;
}

// The buffers of one problem: x, the filters, y, the residual (out's span) and the bias, with
// the pointers written into the arguments; inputs uniform(-1,1), out poisoned with NaN.
struct Buffers {
  std::unique_ptr<DeviceMem> x, w, y, residual, bias;
  std::int64_t n_out = 0;
};

Buffers make_buffers(ConvArguments& a, bool residual, bool bias, std::uint64_t seed = 7) {
  std::size_t const el = size_of(a.dtype);
  std::int64_t const nx = conv_tensor_span(a, ConvOperand::x), nw = conv_tensor_span(a, ConvOperand::filter),
                     ny = conv_tensor_span(a, ConvOperand::y);
  ConvOperand const role = conv_output_operand(a.op);
  Buffers b;
  b.n_out = role == ConvOperand::x ? nx : role == ConvOperand::y ? ny : nw;
  // One element more each, so that an empty tensor still has an address.
  b.x = std::make_unique<DeviceMem>(std::size_t(nx + 1) * el);
  b.w = std::make_unique<DeviceMem>(std::size_t(nw + 1) * el);
  b.y = std::make_unique<DeviceMem>(std::size_t(ny + 1) * el);
  b.residual = std::make_unique<DeviceMem>(residual ? std::size_t(b.n_out + 1) * el : 0);
  std::int64_t const n_bias = a.op == Operator::kFprop ? a.k : a.c;
  b.bias = std::make_unique<DeviceMem>(bias ? std::size_t(n_bias + 1) * sizeof(float) : 0);
  EXPECT_TRUE(reference::fill_uniform_device(b.x->p, a.dtype, nx, seed + 1).ok());
  EXPECT_TRUE(reference::fill_uniform_device(b.w->p, a.dtype, nw, seed + 2).ok());
  EXPECT_TRUE(reference::fill_uniform_device(b.y->p, a.dtype, ny, seed + 3).ok());
  if (residual) { EXPECT_TRUE(reference::fill_uniform_device(b.residual->p, a.dtype, b.n_out, seed + 4).ok()); }
  if (bias) { EXPECT_TRUE(reference::fill_uniform_device(b.bias->p, DType::f32, n_bias, seed + 5).ok()); }
  a.x.ptr = b.x->p, a.filter.ptr = b.w->p, a.y.ptr = b.y->p;
  a.out = role == ConvOperand::x ? b.x->p : role == ConvOperand::y ? b.y->p : b.w->p;
  a.residual = residual ? b.residual->p : nullptr;
  a.bias = bias ? static_cast<float const*>(b.bias->p) : nullptr;
  EXPECT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
  return b;
}

// The judge's verdict on a.out, after the reference of a.
reference::ConvCheck judge(ConvArguments const& a) {
  std::int64_t const n = reference::conv_output_elements(a);
  DeviceMem r(std::size_t(n + 1) * sizeof(double)), s(std::size_t(n + 1) * sizeof(double));
  reference::ConvCheck check;
  Status st = reference::conv_device(a, static_cast<double*>(r.p), static_cast<double*>(s.p));
  EXPECT_TRUE(st.ok()) << st.reason;
  st = reference::check_conv(a, static_cast<double const*>(r.p), static_cast<double const*>(s.p), reference::conv_tolerance(a),
                             &check);
  EXPECT_TRUE(st.ok()) << st.reason;
  return check;
}

// Whether every element of out's buffer that is not one of its elements is still NaN.
void expect_nothing_written_outside(ConvArguments const& a, std::int64_t n_out) {
  std::vector<std::uint16_t> host(std::size_t(n_out) + 1);
  ASSERT_EQ(cudaMemcpy(host.data(), a.out, std::size_t(n_out) * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<char> is_elem(std::size_t(n_out), 0);
  for (std::int64_t off : output_offsets(a)) is_elem[std::size_t(off)] = 1;
  for (std::int64_t i = 0; i < n_out; ++i) {
    if (is_elem[std::size_t(i)]) continue;
    float const v = a.dtype == DType::bf16 ? reference::bf16_to_float(host[std::size_t(i)]) : reference::f16_to_float(host[std::size_t(i)]);
    ASSERT_TRUE(std::isnan(v)) << "element offset " << i << " lies between out's elements and was written: " << v;
  }
}

// One problem through tessel::convolution: random inputs, poisoned output, the judge, and the
// padding between output elements untouched.
void run_case(ConvArguments a, bool residual = false, bool bias = false) {
  SCOPED_TRACE(describe(a));
  Buffers b = make_buffers(a, residual, bias);
  Status const s = convolution(a);
  ASSERT_TRUE(s.ok()) << s.reason;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  reference::ConvCheck const check = judge(a);
  EXPECT_TRUE(check.passed()) << check.describe();
  if (!conv_output_is_empty(a)) expect_nothing_written_outside(a, b.n_out);
}

ConvArguments conv2d(Operator op, DType t, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k,
                     std::int64_t r, std::int64_t s, std::array<std::int64_t, 2> pad = {0, 0},
                     std::array<std::int64_t, 2> stride = {1, 1}, std::array<std::int64_t, 2> dil = {1, 1},
                     std::int64_t groups = 1) {
  return make_packed_conv2d(op, n, h, w, c, k, r, s, pad, stride, dil, groups, t);
}

}  // namespace

// ---- the API without a GPU ----------------------------------------------------------------------------

TEST(ConvApi, RefusesBadArgumentsBeforeAnyCudaCall) {
  alignas(16) static unsigned char storage[64];
  ConvArguments a = make_packed_conv2d(Operator::kFprop, 2, 8, 8, 6, 9, 3, 3, {1, 1});
  a.x.ptr = a.filter.ptr = storage;
  a.out = storage;
  a.groups = 4;  // does not divide c = 6
  Status s = convolution(a);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("c:", 0), 0u) << s.reason;
  EXPECT_EQ(can_implement(a).code, StatusCode::invalid_argument);
  char const* name = nullptr;
  EXPECT_EQ(conv_kernel_name(a, &name).code, StatusCode::invalid_argument);
  EXPECT_EQ(name, nullptr);
  a.groups = 1, a.pad_h = -1;
  EXPECT_EQ(convolution(a).reason.rfind("pad_h:", 0), 0u);
}

TEST(ConvApi, EmptyOutputSucceedsWithoutTouchingAnything) {
  for (Operator op : kOps) {
    ConvArguments a = make_packed_conv2d(op, 0, 8, 8, 16, 16, 3, 3, {1, 1});
    if (op == Operator::kWgrad) a.k = 0;  // wgrad's dw is empty when k (or c) is 0
    EXPECT_TRUE(convolution(a).ok()) << conv::to_string(op);  // every pointer null
    char const* name = nullptr;
    ASSERT_TRUE(conv_kernel_name(a, &name).ok());
    EXPECT_STREQ(name, "none");
  }
}

TEST(ConvApi, RegistryNamesAreNonEmptyAndUnique) {
  std::set<std::string> names;
  ASSERT_GT(conv_kernel_count(), 0);
  for (int i = 0; i < conv_kernel_count(); ++i) {
    ConvKernelInfo const k = conv_kernel_info(i);
    EXPECT_GT(std::strlen(k.name), 0u);
    EXPECT_GT(std::strlen(k.description), 0u) << k.name;
    std::string const kernel = std::string(k.name).rfind("padded:", 0) == 0 ? std::string(k.name).substr(7) : k.name;
    EXPECT_EQ(k.min_sm, kernel.rfind("sm90_", 0) == 0 ? 90 : 80) << k.name;  // a padded entry: its inner kernel's
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate " << k.name;
  }
  EXPECT_STREQ(conv_kernel_info(conv_kernel_count()).name, "");
}

// A named kernel must exist, and must be the one the library runs for the problem.
TEST(ConvApi, NamedKernels) {
  alignas(16) static unsigned char storage[64];
  ConvArguments a = make_packed_conv2d(Operator::kFprop, 1, 8, 8, 16, 16, 3, 3, {1, 1});
  a.x.ptr = a.filter.ptr = storage;
  a.out = storage;
  char const* picked = nullptr;
  ASSERT_TRUE(conv_kernel_name(a, &picked).ok());
  std::string const mine = picked;
  a.kernel = "no_such_kernel";
  Status s = conv_kernel_name(a, &picked);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("kernel:", 0), 0u) << s.reason;
  a.kernel = mine.c_str();
  EXPECT_TRUE(conv_kernel_name(a, &picked).ok());
  for (int i = 0; i < conv_kernel_count(); ++i) {
    if (mine == conv_kernel_info(i).name) continue;
    a.kernel = conv_kernel_info(i).name;
    s = conv_kernel_name(a, &picked);
    EXPECT_EQ(s.code, StatusCode::invalid_argument) << a.kernel;
    EXPECT_NE(s.reason.find(mine), std::string::npos) << s.reason;
  }
}

// ---- the API on a GPU ---------------------------------------------------------------------------------

// A refused call launches nothing: the poisoned output stays NaN and no CUDA error is left.
TEST(ConvApi, RefusedCallTouchesNoMemory) {
  TESSEL_REQUIRE_GPU();
  ConvArguments a = conv2d(Operator::kFprop, DType::bf16, 2, 8, 8, 8, 8, 3, 3, {1, 1});
  Buffers b = make_buffers(a, false, false);
  a.stride_h = 0;
  EXPECT_EQ(convolution(a).code, StatusCode::invalid_argument);
  a.stride_h = 1;
  a.x.stride_w = 4;  // overlapping pixels
  EXPECT_EQ(convolution(a).code, StatusCode::invalid_argument);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<std::uint16_t> host(std::size_t(b.n_out));
  ASSERT_EQ(cudaMemcpy(host.data(), a.out, host.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::uint16_t v : host) ASSERT_TRUE(std::isnan(reference::bf16_to_float(v)));
}

TEST(ConvApi, CanImplementWhatItRuns) {
  TESSEL_REQUIRE_GPU();
  ConvArguments a = conv2d(Operator::kWgrad, DType::f16, 2, 8, 8, 8, 8, 3, 3, {1, 1});
  Buffers b = make_buffers(a, false, false);
  EXPECT_TRUE(can_implement(a).ok()) << can_implement(a).reason;
}

// Empty sums and alpha = 0: out = act(beta * residual + bias), the inputs not read (NaN there
// must not reach out).
TEST(ConvSmall, EpilogueWithoutASum) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps) {
    for (DType t : kDtypes) {
      ConvArguments a = conv2d(op, t, 2, 5, 6, 8, 8, 3, 3, {1, 1});
      a.alpha = 0.0f, a.beta = 0.75f, a.activation = ConvActivation::silu;
      SCOPED_TRACE(describe(a));
      Buffers b = make_buffers(a, true, op != Operator::kWgrad);
      for (void const* in : {a.x.ptr, a.filter.ptr, a.y.ptr})  // poison every input but out
        if (in != a.out) {
          ASSERT_TRUE(reference::fill_constant_device(const_cast<void*>(in), t, 8, NAN).ok());
        }
      ASSERT_TRUE(convolution(a).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      reference::ConvCheck const check = judge(a);
      EXPECT_TRUE(check.passed()) << check.describe();
    }
  }
  // The empty sums: fprop c = 0, dgrad k = 0, wgrad n = 0.
  ConvArguments f = conv2d(Operator::kFprop, DType::bf16, 2, 5, 6, 0, 8, 3, 3, {1, 1});
  f.beta = 1.0f, f.activation = ConvActivation::relu;
  run_case(f, true, true);
  ConvArguments d = conv2d(Operator::kDgrad, DType::bf16, 2, 5, 6, 8, 0, 3, 3, {1, 1});
  run_case(d, false, true);
  ConvArguments w = conv2d(Operator::kWgrad, DType::f16, 0, 5, 6, 8, 8, 3, 3, {1, 1});
  w.beta = -1.0f;
  run_case(w, true, false);
}

TEST(ConvSmall, EveryChannelCountOneToNine) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (std::int64_t c = 1; c <= 9; ++c) {
      std::int64_t const k = 10 - c;  // 9..1: every K too
      run_case(conv2d(op, c % 2 ? DType::bf16 : DType::f16, 2, 7, 6, c, k, 3, 3, {1, 1}));
    }
}

TEST(ConvSmall, RaggedGeometry) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps) {
    for (DType t : kDtypes) {
      run_case(conv2d(op, t, 1, 1, 1, 8, 16, 1, 1));                          // N = 1, H = W = 1, 1x1
      run_case(conv2d(op, t, 1, 1, 1, 16, 8, 3, 3, {1, 1}));                  // H = W = 1, 3x3 padded
      run_case(conv2d(op, t, 2, 5, 4, 8, 8, 3, 3, {4, 5}));                   // pad larger than the filter
      run_case(conv2d(op, t, 2, 13, 11, 8, 16, 2, 2, {0, 0}, {3, 5}));        // stride larger than the filter
      run_case(conv2d(op, t, 2, 12, 12, 16, 8, 1, 1, {0, 0}, {2, 2}));        // strided 1x1 (stride-2 dgrad)
      run_case(conv2d(op, t, 2, 15, 14, 8, 8, 3, 3, {2, 3}, {1, 1}, {2, 3})); // dilation
      run_case(conv2d(op, t, 2, 23, 21, 3, 64, 7, 5, {3, 2}, {2, 2}));        // stem-like: C = 3, 7x5 stride 2
    }
  }
}

TEST(ConvSmall, OddChannels) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      run_case(conv2d(op, t, 2, 19, 17, 33, 65, 3, 3, {1, 1}));  // C = 33, K = 65
      run_case(conv2d(op, t, 1, 9, 9, 65, 33, 3, 3, {1, 1}, {2, 2}));
    }
}

TEST(ConvSmall, GroupsAndDepthwise) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      run_case(conv2d(op, t, 2, 9, 8, 8, 12, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2));
      run_case(conv2d(op, t, 2, 9, 8, 12, 20, 3, 3, {1, 1}, {2, 1}, {1, 1}, 4));    // 3 -> 5 channels per group
      run_case(conv2d(op, t, 2, 8, 8, 64, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 32));
      run_case(conv2d(op, t, 2, 10, 9, 24, 24, 3, 3, {1, 1}, {1, 1}, {1, 1}, 24));   // depthwise
      run_case(conv2d(op, t, 2, 14, 14, 256, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 256));
      run_case(conv2d(op, t, 1, 9, 9, 16, 32, 5, 5, {2, 2}, {2, 2}, {1, 1}, 16));   // depthwise, multiplier 2
    }
}

TEST(ConvSmall, ThreeDimensional) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      run_case(make_packed_conv3d(op, 2, 5, 6, 7, 16, 24, 3, 3, 3, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, 1, t));
      run_case(make_packed_conv3d(op, 1, 6, 7, 5, 9, 7, 2, 3, 2, {0, 1, 2}, {2, 1, 1}, {2, 1, 2}, 1, t));
      run_case(make_packed_conv3d(op, 1, 4, 5, 5, 8, 8, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 8, t));  // depthwise
    }
}

TEST(ConvSmall, Epilogue) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (ConvActivation act : {ConvActivation::none, ConvActivation::relu, ConvActivation::gelu, ConvActivation::silu}) {
      ConvArguments a = conv2d(op, act == ConvActivation::gelu ? DType::f16 : DType::bf16, 2, 9, 10, 24, 40, 3, 3, {1, 1});
      a.alpha = 1.5f, a.beta = -0.5f, a.activation = act;
      run_case(a, true, op != Operator::kWgrad);
      a.beta = 0.0f;  // bias and activation alone
      run_case(a, false, op != Operator::kWgrad);
    }
}

// Channel slices of wider tensors, padded rows and images, spaced filters: the channels stay
// contiguous, nothing else is packed; nothing may be written between out's elements.
TEST(ConvLayouts, NonPackedStrides) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (std::int64_t c : {8, 33}) {
      ConvArguments a = conv2d(op, DType::bf16, 2, 9, 7, c, 16, 3, 3, {1, 1}, {1, 1}, {1, 1}, c == 8 ? 2 : 1);
      ConvOutputExtents const e = conv_output_extents(a);
      a.x.stride_w = c + 8, a.x.stride_h = a.x.stride_w * a.w + 16, a.x.stride_n = a.x.stride_h * a.h + 24;
      a.y.stride_w = a.k + 8, a.y.stride_h = a.y.stride_w * e.q + 8, a.y.stride_n = a.y.stride_h * e.p + 40;
      a.filter.stride_k += 8;
      run_case(a, true, false);
    }
}

namespace {

// a (buffers set) with a NaN at element 37 of its activations (x, or dy for dgrad) and an infinity
// at element inf_at, judged: NaN and the infinity reach exactly the outputs whose sums hold them.
void expect_nan_and_inf_propagate(ConvArguments const& a, std::int64_t inf_at) {
  void* act = const_cast<void*>(a.op == Operator::kDgrad ? a.y.ptr : a.x.ptr);
  std::uint16_t const nan = a.dtype == DType::bf16 ? 0x7fc0 : 0x7e00, inf = a.dtype == DType::bf16 ? 0x7f80 : 0x7c00;
  ASSERT_EQ(cudaMemcpy(static_cast<std::uint16_t*>(act) + 37, &nan, 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(static_cast<std::uint16_t*>(act) + inf_at, &inf, 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(convolution(a).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  reference::ConvCheck const check = judge(a);
  EXPECT_TRUE(check.passed()) << check.describe();
}

}  // namespace

// NaN and Inf in the activations (x for fprop and wgrad, dy for dgrad) reach exactly the outputs
// whose sums hold them: the reference decides which, and the judge needs NaN for NaN and the same
// infinity for an infinity. The filters stay finite (a zero-filled padding tap times an infinite
// weight is NaN in an implicit GEMM, and no term in the definition).
TEST(ConvSmall, NanAndInfPropagate) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      ConvArguments a = conv2d(op, t, 2, 9, 8, 16, 24, 3, 3, {1, 1});
      SCOPED_TRACE(describe(a));
      Buffers b = make_buffers(a, false, false);
      expect_nan_and_inf_propagate(a, 16 * 60 + 5);
    }
}

// The judge is not fooled: a correct result passes; one element moved past the tolerance, or made
// NaN, fails at that coordinate.
TEST(ConvJudge, CatchesPlantedErrors) {
  TESSEL_REQUIRE_GPU();
  ConvArguments a = conv2d(Operator::kFprop, DType::bf16, 1, 4, 4, 8, 4, 3, 3, {1, 1});
  Buffers b = make_buffers(a, false, false);
  ASSERT_TRUE(convolution(a).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(judge(a).passed());
  // y[n 0, z 0, p 2, q 1, k 3]: offset (2*4 + 1)*4 + 3 = 39.
  std::uint16_t v = 0;
  auto* y = static_cast<std::uint16_t*>(a.out);
  ASSERT_EQ(cudaMemcpy(&v, y + 39, 2, cudaMemcpyDeviceToHost), cudaSuccess);
  std::uint16_t const moved = reference::float_to_bf16(reference::bf16_to_float(v) + 0.25f);
  ASSERT_EQ(cudaMemcpy(y + 39, &moved, 2, cudaMemcpyHostToDevice), cudaSuccess);
  reference::ConvCheck c = judge(a);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.first_bad, "y[n 0, z 0, p 2, q 1, k 3]") << c.describe();
  std::uint16_t const nan = 0x7fc0;
  ASSERT_EQ(cudaMemcpy(y + 39, &nan, 2, cudaMemcpyHostToDevice), cudaSuccess);
  c = judge(a);
  EXPECT_FALSE(c.passed());
  EXPECT_TRUE(std::isinf(c.max_rel_err));
}

// The layer shapes at a small batch: the paths the benchmarks take, verified.
TEST(ConvLayers, BenchShapesAtBatchTwo) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps) {
    run_case(conv2d(op, DType::bf16, 2, 56, 56, 64, 64, 3, 3, {1, 1}));
    run_case(conv2d(op, DType::bf16, 2, 56, 56, 256, 64, 1, 1));
    run_case(conv2d(op, DType::bf16, 2, 28, 28, 512, 1024, 1, 1, {0, 0}, {2, 2}));
    run_case(conv2d(op, DType::bf16, 2, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}));
    run_case(conv2d(op, DType::bf16, 2, 57, 57, 33, 65, 3, 3, {1, 1}));
    run_case(conv2d(op, DType::f16, 1, 64, 64, 320, 320, 3, 3, {1, 1}));
    run_case(make_packed_conv3d(op, 1, 8, 28, 28, 64, 64, 3, 3, 3, {1, 1, 1}));
    run_case(conv2d(op, DType::bf16, 2, 28, 28, 512, 512, 3, 3, {1, 1}, {1, 1}, {1, 1}, 512));
  }
}

// ---- the small-channel kernels ---------------------------------------------------------------------------

namespace {

// The kernel conv_kernel_name reports for a (its pointers as make_buffers sets them).
std::string picked_kernel(ConvArguments a) {
  alignas(16) static unsigned char placeholder[64];
  a.x.ptr = a.filter.ptr = a.y.ptr = placeholder;
  a.out = placeholder;
  if (a.beta != 0.0f) a.residual = placeholder;
  char const* name = nullptr;
  Status const s = conv_kernel_name(a, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return s.ok() ? std::string(name) : std::string();
}

// a through tessel::convolution, after checking that the small-channel kernel of its pass runs it.
void run_smallc(ConvArguments a, bool residual = false, bool bias = false) {
  std::string const want = std::string("sm80_conv_") + conv::to_string(a.op) + "_" + (a.dtype == DType::bf16 ? "bf16" : "fp16") + "_smallc";
  EXPECT_EQ(picked_kernel(a), want) << describe(a);
  run_case(a, residual, bias);
}

}  // namespace

// fprop with C <= 4: tiles of 256 pixels that span rows and images (P*Q below and above 256),
// every C, output channels that fill one block of 64, part of one, and several; filters of 1 to
// 49 taps (k-steps with taps past R*S), strides and dilations, padding wider than the filter.
TEST(ConvSmallC, FpropSweep) {
  TESSEL_REQUIRE_GPU();
  for (DType t : kDtypes) {
    for (std::int64_t c = 1; c <= 4; ++c) {
      run_smallc(conv2d(Operator::kFprop, t, 2, 37, 29, c, 64, 7, 7, {3, 3}, {2, 2}));
      run_smallc(conv2d(Operator::kFprop, t, 3, 9, 11, c, 17, 3, 3, {1, 1}));          // 99 pixels an image
      run_smallc(conv2d(Operator::kFprop, t, 1, 40, 23, c, 130, 5, 3, {2, 1}, {1, 2}, {2, 1}));
    }
    run_smallc(conv2d(Operator::kFprop, t, 5, 4, 5, 3, 8, 1, 1, {1, 1}));               // one tap
    run_smallc(conv2d(Operator::kFprop, t, 2, 13, 11, 3, 72, 2, 2, {0, 0}, {3, 5}));    // stride past the filter
    run_smallc(conv2d(Operator::kFprop, t, 2, 5, 4, 3, 1, 3, 3, {4, 5}));               // pad past the filter, K = 1
    run_smallc(conv2d(Operator::kFprop, t, 1, 300, 7, 3, 24, 3, 3, {1, 1}));            // a tile of 36 rows
    run_smallc(conv2d(Operator::kFprop, t, 2, 66, 70, 3, 64, 7, 7, {3, 3}, {2, 2}));
  }
}

// dgrad with C <= 8, K <= 64: every C, K from 8 to 64, strides 1 to 3 (every column phase), dilation,
// images wider than 64 and taller than 16 columns and rows (several blocks, ragged last ones).
TEST(ConvSmallC, DgradSweep) {
  TESSEL_REQUIRE_GPU();
  for (DType t : kDtypes) {
    for (std::int64_t c = 1; c <= 8; ++c) run_smallc(conv2d(Operator::kDgrad, t, 2, 37, 70, c, c % 2 ? 64 : 24, 7, 7, {3, 3}, {2, 2}));
    run_smallc(conv2d(Operator::kDgrad, t, 2, 19, 131, 3, 16, 3, 3, {1, 1}, {2, 1}));    // stride 1 across: 4 M tiles a row
    run_smallc(conv2d(Operator::kDgrad, t, 1, 25, 40, 3, 8, 5, 4, {2, 1}, {3, 3}));       // stride 3, one k-step
    run_smallc(conv2d(Operator::kDgrad, t, 2, 17, 33, 4, 32, 3, 3, {2, 2}, {2, 1}, {2, 3}));
    run_smallc(conv2d(Operator::kDgrad, t, 2, 13, 11, 3, 40, 2, 2, {0, 0}, {3, 5}));     // stride past the filter
    run_smallc(conv2d(Operator::kDgrad, t, 3, 1, 1, 2, 8, 3, 3, {1, 1}, {2, 2}));        // H = W = 1
  }
}

// wgrad with C <= 4, K <= 64: every C (1 to 4 filter-row tiles, 1 to 4 warp groups), K from 8 to
// 64, strides 1 to 3, dilation down, Q below, at and above a k-step of 16, an odd number of output
// rows (a stage with one live row), fewer rows than CTAs, x rows that 16-byte copies take (W*C a
// multiple of 8) with and without a tail past the last whole chunk, and rows they cannot.
TEST(ConvSmallC, WgradSweep) {
  TESSEL_REQUIRE_GPU();
  for (DType t : kDtypes) {
    for (std::int64_t c = 1; c <= 4; ++c) {
      run_smallc(conv2d(Operator::kWgrad, t, 2, 37, 70, c, c % 2 ? 64 : 24, 7, 7, {3, 3}, {2, 2}));
      run_smallc(conv2d(Operator::kWgrad, t, 3, 20, 64, c, 16, 3, 3, {1, 1}));          // W*C a multiple of 8 for even C
    }
    run_smallc(conv2d(Operator::kWgrad, t, 2, 19, 131, 3, 16, 3, 3, {1, 1}, {2, 1}));    // Q = 131: 9 k-steps, the last ragged
    run_smallc(conv2d(Operator::kWgrad, t, 1, 25, 40, 3, 8, 5, 4, {2, 1}, {3, 3}));       // stride 3, K = 8
    run_smallc(conv2d(Operator::kWgrad, t, 2, 17, 32, 4, 32, 3, 3, {2, 1}, {2, 1}, {3, 1}));  // dilation down
    run_smallc(conv2d(Operator::kWgrad, t, 2, 13, 11, 3, 40, 2, 2, {0, 0}, {3, 5}));     // stride past the filter
    run_smallc(conv2d(Operator::kWgrad, t, 2, 50, 20, 3, 16, 3, 3, {1, 1}, {7, 2}));     // stride 7 down: rows shared, the last fit
    run_smallc(conv2d(Operator::kWgrad, t, 2, 50, 20, 3, 16, 3, 3, {1, 1}, {9, 2}));     // stride 9 down: rows not shared
    run_smallc(conv2d(Operator::kWgrad, t, 2, 5, 4, 3, 56, 3, 3, {4, 5}));               // pad past the filter
    run_smallc(conv2d(Operator::kWgrad, t, 3, 1, 1, 2, 8, 3, 3, {1, 1}, {2, 2}));        // H = W = 1
    run_smallc(conv2d(Operator::kWgrad, t, 1, 9, 16, 4, 64, 1, 3, {0, 1}));              // one filter row, 9 rows
    run_smallc(conv2d(Operator::kWgrad, t, 4, 66, 224, 3, 64, 7, 7, {3, 3}, {2, 2}));    // the stem's rows
  }
}

// The epilogue (alpha, residual, bias, each activation; wgrad has no bias) and non-packed tensors
// (odd strides: out written one channel at a time; wgrad's x keeps its pixels C apart, its rows odd)
// through the three kernels.
TEST(ConvSmallC, EpilogueAndStrides) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad})
    for (ConvActivation act : {ConvActivation::none, ConvActivation::relu, ConvActivation::gelu, ConvActivation::silu}) {
      ConvArguments a = conv2d(op, act == ConvActivation::gelu ? DType::f16 : DType::bf16, 2, 21, 19, 3, 32, 7, 7, {3, 3}, {2, 2});
      a.alpha = 1.5f, a.beta = -0.5f, a.activation = act;
      run_smallc(a, true, op != Operator::kWgrad);
    }
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
    ConvArguments a = conv2d(op, DType::bf16, 2, 21, 19, 3, 32, 7, 7, {3, 3}, {2, 2});
    ConvOutputExtents const e = conv_output_extents(a);
    a.x.stride_w = op == Operator::kWgrad ? 3 : 5, a.x.stride_h = a.x.stride_w * a.w + 3, a.x.stride_n = a.x.stride_h * a.h + 1;
    a.y.stride_w = a.k + 8, a.y.stride_h = a.y.stride_w * e.q + 8, a.y.stride_n = a.y.stride_h * e.p + 40;
    a.filter.stride_k += 3;
    run_smallc(a, true, false);
  }
}

// NaN and Inf in x (fprop, wgrad) or dy (dgrad) reach exactly the outputs whose sums hold them.
TEST(ConvSmallC, NanAndInfPropagate) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kFprop, Operator::kDgrad, Operator::kWgrad}) {
    ConvArguments a = conv2d(op, DType::bf16, 2, 23, 21, 3, 64, 7, 7, {3, 3}, {2, 2});
    EXPECT_NE(picked_kernel(a).find("_smallc"), std::string::npos);
    SCOPED_TRACE(describe(a));
    Buffers b = make_buffers(a, false, false);
    expect_nan_and_inf_propagate(a, op == Operator::kDgrad ? 64 * 40 + 9 : 3 * 200 + 2);
  }
}

// Where the small-channel kernels stop: 3-D, groups, C = 5 in fprop and wgrad, K = 72 or 12 in
// dgrad and wgrad, a dgrad whose dy block outgrows kSmallcMaxSmem (stride 1 both ways: 19 x 67 dy
// pixels), a wgrad dilated across, with x's pixels apart, R > 7 or S*C > 32 -- each goes to another
// kernel; dy pixels that 16-byte loads cannot take go to the padded route.
TEST(ConvSmallC, OtherProblemsGoElsewhere) {
  for (DType t : kDtypes) {
    EXPECT_EQ(picked_kernel(conv2d(Operator::kFprop, t, 2, 32, 32, 5, 64, 3, 3, {1, 1})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kDgrad, t, 2, 32, 32, 3, 72, 3, 3, {1, 1})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kDgrad, t, 2, 32, 32, 3, 12, 3, 3, {1, 1})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kFprop, t, 2, 32, 32, 4, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2)).find("smallc"),
              std::string::npos);
    EXPECT_EQ(picked_kernel(make_packed_conv3d(Operator::kFprop, 1, 4, 9, 9, 3, 16, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, t))
                  .find("smallc"),
              std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kDgrad, t, 2, 32, 32, 3, 16, 3, 3, {1, 1})).find("smallc"), std::string::npos);
    ConvArguments rows = conv2d(Operator::kDgrad, t, 2, 32, 32, 3, 64, 3, 3, {1, 1}, {2, 2});
    ConvOutputExtents const e = conv_output_extents(rows);
    rows.y.stride_w = 68, rows.y.stride_h = 68 * e.q + 4, rows.y.stride_n = rows.y.stride_h * e.p;  // pixels 4 elements apart
    EXPECT_EQ(picked_kernel(rows).rfind("padded:", 0), 0u);  // onto an aligned copy of dy (which the kernel then takes)
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 5, 64, 7, 7, {3, 3}, {2, 2})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 72, 7, 7, {3, 3}, {2, 2})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 12, 7, 7, {3, 3}, {2, 2})).find("smallc"), std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 64, 3, 3, {1, 1}, {1, 1}, {1, 2})).find("smallc"),
              std::string::npos);
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 64, 9, 3, {4, 1})).find("smallc"), std::string::npos);  // R > 7
    EXPECT_EQ(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 4, 64, 3, 9, {1, 4})).find("smallc"), std::string::npos);  // S*C > 32
    ConvArguments apart = conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 64, 7, 7, {3, 3}, {2, 2});
    apart.x.stride_w = 4, apart.x.stride_h = 4 * 32, apart.x.stride_n = 4 * 32 * 32;
    EXPECT_EQ(picked_kernel(apart).find("smallc"), std::string::npos);
    EXPECT_NE(picked_kernel(conv2d(Operator::kWgrad, t, 2, 32, 32, 3, 64, 7, 7, {3, 3}, {2, 2})).find("smallc"), std::string::npos);
  }
}

// ---- 1x1 convolutions through the GEMM API ------------------------------------------------------------

namespace {

bool takes_gemm_route(ConvArguments const& a) {
  char const* name = nullptr;
  Status const s = conv_kernel_name(a, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return s.ok() && std::string(name).rfind("gemm:", 0) == 0;
}

// The name conv_kernel_name gives a (buffers set).
std::string kernel_of(ConvArguments const& a) {
  char const* name = nullptr;
  Status const s = conv_kernel_name(a, &name);
  EXPECT_TRUE(s.ok()) << s.reason;
  return s.ok() ? name : "";
}

}  // namespace

// 1x1, stride 1, no padding, groups 1, evenly strided rows, no bias or activation: the GEMM API
// runs it (conv_kernel_name says "gemm:<kernel>"); alpha, beta and the residual are its alpha,
// beta and C. Ragged pixel counts, odd channels, one pixel, 3-D, dilation, channel slices of
// wider tensors (nothing written between out's rows).
TEST(ConvGemmRoute, OneByOneRunsThroughTheGemm) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      std::vector<ConvArguments> cases = {
          conv2d(op, t, 2, 7, 9, 24, 40, 1, 1),                                  // M = 126
          conv2d(op, t, 1, 1, 1, 16, 8, 1, 1),                                   // one pixel
          conv2d(op, t, 2, 9, 8, 33, 65, 1, 1),                                  // odd channels
          conv2d(op, t, 2, 10, 6, 64, 32, 1, 1, {0, 0}, {1, 1}, {2, 3}),         // dilation (one tap: none)
          make_packed_conv3d(op, 2, 3, 5, 4, 16, 24, 1, 1, 1, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1, t),
      };
      ConvArguments slices = conv2d(op, t, 2, 6, 5, 16, 24, 1, 1);  // channel slices: row steps c+8, k+8
      slices.x.stride_w = 24, slices.x.stride_h = 24 * 5, slices.x.stride_d = slices.x.stride_n = 24 * 30;
      slices.y.stride_w = 32, slices.y.stride_h = 32 * 5, slices.y.stride_d = slices.y.stride_n = 32 * 30;
      slices.filter.stride_k = 24;
      cases.push_back(slices);
      for (ConvArguments a : cases) {
        SCOPED_TRACE(describe(a));
        run_case(a);
        a.alpha = -1.25f, a.beta = 0.5f;
        run_case(a, /*residual=*/true);
        Buffers b = make_buffers(a, true, false);
        EXPECT_TRUE(takes_gemm_route(a)) << kernel_of(a);
      }
    }
}

// What is not one plain GEMM runs on the convolution kernels, and passes: padded pixel rows (an odd
// stride between rows), a bias or an activation (fused there), stride 2 (wgrad; a strided fprop
// or dgrad is ConvGemmRoute.StridedOneByOneRunsOnTheGrid's), groups.
TEST(ConvGemmRoute, FallsBackWhereItIsNoPlainGemm) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      bool const bias = op != Operator::kWgrad;  // wgrad takes none
      ConvArguments padded = conv2d(op, t, 2, 7, 6, 16, 24, 1, 1);
      padded.x.stride_h = 16 * 6 + 8, padded.x.stride_n = padded.x.stride_h * 7 + 24;  // rows of x padded
      ConvArguments epilogue = conv2d(op, t, 2, 7, 6, 16, 24, 1, 1);
      epilogue.activation = ConvActivation::relu;
      ConvArguments strided = conv2d(op, t, 2, 8, 8, 16, 24, 1, 1, {0, 0}, {2, 2});
      ConvArguments grouped = conv2d(op, t, 2, 7, 6, 16, 24, 1, 1, {0, 0}, {1, 1}, {1, 1}, 2);
      struct Case {
        ConvArguments a;
        bool bias;
      };
      for (Case c : {Case{padded, false}, Case{epilogue, bias}, Case{strided, false}, Case{grouped, false}}) {
        if (op != Operator::kWgrad && c.a.stride_h == 2) continue;
        SCOPED_TRACE(describe(c.a));
        c.a.alpha = 1.5f, c.a.beta = 0.5f;
        ConvArguments named = c.a;
        Buffers b = make_buffers(named, true, c.bias);
        EXPECT_FALSE(takes_gemm_route(named)) << kernel_of(named);
        run_case(c.a, /*residual=*/true, c.bias);
      }
    }
}

// A 1x1 fprop or dgrad at a stride, unpadded: one batched GEMM on the grid of x pixels the filter
// reaches (conv_strided_as_grid_gemm) -- for dgrad after zeros (or beta * residual) over dx --
// wherever the rows of y and of the grid follow one step; elsewhere (an odd height with several
// images, 3-D strides in depth) the kernels, as before. Both orientations of the GEMM (M the rows
// of y, or a row's pixels), and the three paths of dgrad's first pass (dx poisoned first): zeros
// off the grid alone (packed dx, no residual, the grid reaching h and w's ends), the memset (h 7
// at stride 2), and the epilogue kernel (a residual; a channel slice of a wider dx).
TEST(ConvGemmRoute, StridedOneByOneRunsOnTheGrid) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kDgrad, Operator::kFprop})
    for (DType t : kDtypes) {
      struct Case {
        ConvArguments a;
        bool grid;
      };
      ConvArguments slice = conv2d(op, t, 2, 8, 6, 16, 24, 1, 1, {0, 0}, {2, 2});  // x rows c + 8 apart
      slice.x.stride_w = 24, slice.x.stride_h = 24 * 6, slice.x.stride_d = slice.x.stride_n = 24 * 48;
      std::vector<Case> cases = {
          {conv2d(op, t, 2, 8, 8, 16, 24, 1, 1, {0, 0}, {2, 2}), true},
          {conv2d(op, t, 3, 28, 28, 64, 96, 1, 1, {0, 0}, {2, 2}), true},  // 42 rows of 14: m = 42, 14 batches
          {conv2d(op, t, 2, 9, 10, 40, 72, 1, 1, {0, 0}, {3, 2}), true},   // strides 3 and 2
          {conv2d(op, t, 1, 7, 7, 32, 16, 1, 1, {0, 0}, {2, 2}), true},    // one image: h 7 is fine
          {conv2d(op, t, 2, 7, 7, 32, 16, 1, 1, {0, 0}, {2, 2}), false},   // images 7 rows apart, not 8
          {conv2d(op, t, 1, 2, 64, 16, 24, 1, 1, {0, 0}, {2, 2}), true},   // one row of 32: m = 32
          {conv2d(op, t, 1, 4, 80, 24, 40, 1, 1, {0, 0}, {2, 2}), true},   // 2 rows of 40: m = 40, 2 batches
          {slice, true},
          {make_packed_conv3d(op, 2, 4, 6, 6, 16, 32, 1, 1, 1, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}, 1, t), false},
      };
      for (Case c : cases) {
        SCOPED_TRACE(describe(c.a));
        run_case(c.a);
        ConvArguments r = c.a;
        r.alpha = -1.25f, r.beta = 0.5f;
        run_case(r, /*residual=*/true);
        Buffers b = make_buffers(r, true, false);
        EXPECT_EQ(takes_gemm_route(r), c.grid) << kernel_of(r);
      }
    }
}

// The sm_80 kernel may be named for a problem the GEMM takes (A/B measurements); another GEMM
// kernel may not.
TEST(ConvGemmRoute, NamedKernels) {
  TESSEL_REQUIRE_GPU();
  ConvArguments a = conv2d(Operator::kFprop, DType::bf16, 2, 7, 9, 24, 40, 1, 1);
  Buffers b = make_buffers(a, false, false);
  std::string const picked = kernel_of(a);
  ASSERT_EQ(picked.rfind("gemm:", 0), 0u) << picked;
  a.kernel = picked.c_str();
  EXPECT_EQ(kernel_of(a), picked);
  a.kernel = "sm80_conv_fprop_bf16_128x128x32";
  EXPECT_EQ(kernel_of(a), "sm80_conv_fprop_bf16_128x128x32");
  run_case(a);
  a.kernel = "gemm:no_such_kernel";
  char const* name = nullptr;
  EXPECT_EQ(conv_kernel_name(a, &name).code, StatusCode::invalid_argument);
}

// ---- wgrad with its reduction split ---------------------------------------------------------------------

namespace {

std::vector<std::uint16_t> download(void const* p, std::int64_t n) {
  std::vector<std::uint16_t> h(static_cast<std::size_t>(n));
  EXPECT_EQ(cudaMemcpy(h.data(), p, std::size_t(n) * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// A split problem run again with the caller's workspace of `bytes` gives `first`'s bits; one byte
// less is refused, naming workspace_bytes.
void expect_caller_workspace(ConvArguments a, std::int64_t n_out, std::size_t bytes, std::vector<std::uint16_t> const& first) {
  DeviceMem ws(bytes);
  a.workspace = ws.p, a.workspace_bytes = bytes;
  ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, n_out, NAN).ok());
  ASSERT_TRUE(convolution(a).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(download(a.out, n_out) == first) << "the run with the caller's workspace differs";
  a.workspace_bytes = bytes - 1;
  Status const s = convolution(a);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("workspace_bytes:", 0), 0u) << s.reason;
}

}  // namespace

// Problems the rule splits on any GPU with more than a few SMs (few tiles, a sum of 100+ k-tiles):
// the result passes the fp64 judge, is the same bits on a second run from the pool and on a third
// with the caller's workspace, and a too-small workspace is refused.
TEST(ConvWgradSplit, CorrectAndBitwiseDeterministic) {
  TESSEL_REQUIRE_GPU();
  std::vector<ConvArguments> cases = {
      conv2d(Operator::kWgrad, DType::bf16, 2, 56, 56, 64, 64, 3, 3, {1, 1}),  // 5 tiles, 196 k-tiles
      conv2d(Operator::kWgrad, DType::f16, 1, 57, 57, 33, 65, 3, 3, {1, 1}),   // odd channels: the padded route
      make_packed_conv3d(Operator::kWgrad, 1, 8, 28, 28, 32, 16, 3, 3, 3, {1, 1, 1}),
      conv2d(Operator::kWgrad, DType::bf16, 2, 64, 64, 3, 64, 7, 7, {3, 3}, {2, 2}),  // stem-like: the small-channel kernel
  };
  for (ConvArguments a : cases) {
    SCOPED_TRACE(describe(a));
    a.alpha = 0.75f, a.beta = -0.5f;
    Buffers b = make_buffers(a, true, false);
    std::size_t bytes = 0;
    ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
    EXPECT_GT(bytes, 0u) << "the rule did not split " << kernel_of(a);
    ASSERT_TRUE(convolution(a).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    reference::ConvCheck const check = judge(a);
    EXPECT_TRUE(check.passed()) << check.describe();
    expect_nothing_written_outside(a, b.n_out);
    std::vector<std::uint16_t> const first = download(a.out, b.n_out);

    ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
    ASSERT_TRUE(convolution(a).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(download(a.out, b.n_out) == first) << "a second run differs";

    expect_caller_workspace(a, b.n_out, bytes, first);
  }
}

// A problem with enough tiles, and every pass but wgrad, takes no workspace.
TEST(ConvWgradSplit, NoWorkspaceWithoutASplit) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    ConvArguments a = conv2d(op, DType::bf16, 2, 56, 56, 64, 64, 3, 3, {1, 1});
    Buffers b = make_buffers(a, false, false);
    std::size_t bytes = 1;
    ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
    EXPECT_EQ(bytes, 0u) << conv::to_string(op);
  }
  ConvArguments a = conv2d(Operator::kWgrad, DType::bf16, 1, 8, 8, 16, 16, 3, 3, {1, 1});  // 2 k-tiles
  Buffers b = make_buffers(a, false, false);
  std::size_t bytes = 1;
  ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
  EXPECT_EQ(bytes, 0u);
}

// A 1x1 wgrad at a stride, unpadded: one batched GEMM whose batches are fp32 K slices of dw (one
// per column of the grid, or per row where rows are fewer), summed in order
// (conv_strided_wgrad_as_gemm_slices), wherever at most 32 slices of 1024 pixels or more cover
// the sum; elsewhere the kernels. The fp64 judge with a residual, the same bits on a second run, and
// the caller's workspace (its exact size; one byte less refused).
TEST(ConvGemmRoute, StridedWgradSumsGemmSlices) {
  TESSEL_REQUIRE_GPU();
  for (DType t : kDtypes) {
    struct Case {
      ConvArguments a;
      bool gemm;
    };
    std::vector<Case> cases = {
        {conv2d(Operator::kWgrad, t, 16, 128, 8, 16, 24, 1, 1, {0, 0}, {2, 2}), true},   // 1024 rows, 4 slices
        {conv2d(Operator::kWgrad, t, 40, 56, 56, 16, 24, 1, 1, {0, 0}, {2, 2}), true},   // 1120 rows, 28 slices
        {conv2d(Operator::kWgrad, t, 1, 2, 2048, 40, 72, 1, 1, {0, 0}, {2, 2}), true},   // one row of 1024: 1 slice
        {conv2d(Operator::kWgrad, t, 12, 258, 10, 24, 40, 1, 1, {0, 0}, {3, 2}), true},  // strides 3 and 2
        {conv2d(Operator::kWgrad, t, 2, 8, 8, 16, 24, 1, 1, {0, 0}, {2, 2}), false},     // 8 rows: the kernels
        {conv2d(Operator::kWgrad, t, 1, 80, 2048, 16, 24, 1, 1, {0, 0}, {2, 2}), false}, // 40 rows of 1024: 40 slices
    };
    for (Case c : cases) {
      ConvArguments a = c.a;
      SCOPED_TRACE(describe(a));
      run_case(a);
      a.alpha = -1.25f, a.beta = 0.5f;
      Buffers b = make_buffers(a, true, false);
      EXPECT_EQ(takes_gemm_route(a), c.gemm) << kernel_of(a);
      ASSERT_TRUE(convolution(a).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      reference::ConvCheck const check = judge(a);
      EXPECT_TRUE(check.passed()) << check.describe();
      if (!c.gemm) continue;
      std::vector<std::uint16_t> const first = download(a.out, b.n_out);
      ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
      ASSERT_TRUE(convolution(a).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_TRUE(download(a.out, b.n_out) == first) << "a second run differs";
      std::size_t bytes = 0;
      ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
      EXPECT_GE(bytes, std::size_t(a.k * a.c * 4));
      expect_caller_workspace(a, b.n_out, bytes, first);
    }
  }
}

// ---- depthwise dgrad and wgrad: the direct kernels ------------------------------------------------

namespace {

// A depthwise problem (groups = c = k) of op.
ConvArguments depthwise(Operator op, DType t, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t r,
                        std::int64_t s, std::array<std::int64_t, 2> pad = {0, 0}, std::array<std::int64_t, 2> stride = {1, 1},
                        std::array<std::int64_t, 2> dil = {1, 1}) {
  return make_packed_conv2d(op, n, h, w, c, c, r, s, pad, stride, dil, c, t);
}

// x's and y's pixel rows 3 elements apart more than packed: no stride is a multiple of 8, so the
// direct kernels read one channel per thread whatever C is.
void unpack_rows(ConvArguments& a) {
  ConvOutputExtents const e = conv_output_extents(a);
  a.x.stride_w = a.c + 3, a.x.stride_h = a.x.stride_w * a.w, a.x.stride_d = a.x.stride_n = a.x.stride_h * a.h;
  a.y.stride_w = a.k + 3, a.y.stride_h = a.y.stride_w * e.q, a.y.stride_d = a.y.stride_n = a.y.stride_h * e.p;
}

// The direct kernel's registry name for a depthwise dgrad or wgrad.
std::string depthwise_kernel(Operator op, DType t, bool vec8) {
  return std::string("sm80_conv_depthwise_") + conv::to_string(op) + (t == DType::bf16 ? "_bf16" : "_fp16") +
         (vec8 ? "_vec8" : "_vec1");
}

struct DepthwiseGeometry {
  char const* what;
  std::int64_t n, h, w, r, s;
  std::array<std::int64_t, 2> pad, stride, dil;
};

// clang-format off
DepthwiseGeometry const kDepthwiseGeometries[] = {
    {"N = 1, H = W = 1",           1, 1,  1,  3, 3, {1, 1}, {1, 1}, {1, 1}},
    {"odd H and W",                2, 7,  9,  3, 3, {1, 1}, {1, 1}, {1, 1}},
    {"pad larger than the filter", 2, 5,  6,  3, 3, {4, 5}, {1, 1}, {1, 1}},
    {"stride 2",                   2, 13, 12, 3, 3, {1, 1}, {2, 2}, {1, 1}},
    {"dilation 2",                 2, 11, 10, 3, 3, {2, 2}, {1, 1}, {2, 2}},
    {"5x3 stride (2,1) dil (1,2)", 1, 15, 14, 5, 3, {2, 1}, {2, 1}, {1, 2}},
    {"7x7 stride 2 (49 taps)",     1, 16, 15, 7, 7, {3, 3}, {2, 2}, {1, 1}},
};
// clang-format on

}  // namespace

// The sanitizer's subset: both passes, both dtypes, 1 and 8 channels per thread, stride 2 with
// padding, dilation with a residual and a bias.
TEST(ConvSmall, DepthwiseBackward) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kDgrad, Operator::kWgrad})
    for (DType t : kDtypes) {
      run_case(depthwise(op, t, 2, 9, 8, 3, 3, 3, {1, 1}, {2, 2}));
      run_case(depthwise(op, t, 2, 9, 8, 24, 3, 3, {1, 1}, {2, 2}));
      ConvArguments a = depthwise(op, t, 2, 11, 10, 72, 3, 3, {2, 2}, {1, 1}, {2, 2});
      a.alpha = 1.25f, a.beta = -0.5f;
      run_case(a, true, op == Operator::kDgrad);
    }
}

// Every geometry above with C = 1, 3, 8, 24, 72, both passes and dtypes, through the direct kernel
// the routing names (8 channels per thread where C is a multiple of 8, and then once more with
// unpacked rows: 1), alternately plain and with alpha, beta * residual (and a bias and ReLU for
// dgrad): judged against the fp64 reference, nothing written between out's elements.
TEST(ConvDepthwise, BackwardRaggedShapes) {
  TESSEL_REQUIRE_GPU();
  int i = 0;
  for (Operator op : {Operator::kDgrad, Operator::kWgrad})
    for (DType t : kDtypes)
      for (std::int64_t c : {1, 3, 8, 24, 72})
        for (DepthwiseGeometry const& g : kDepthwiseGeometries)
          for (bool packed : {true, false}) {
            if (!packed && c % 8 != 0) continue;  // (already the 1-channel kernel)
            ConvArguments a = depthwise(op, t, g.n, g.h, g.w, c, g.r, g.s, g.pad, g.stride, g.dil);
            if (!packed) unpack_rows(a);
            bool const epilogue = i++ % 2 == 1;
            bool const bias = epilogue && op == Operator::kDgrad;
            if (epilogue) {
              a.alpha = 0.75f, a.beta = -1.25f;
              if (op == Operator::kDgrad) a.activation = ConvActivation::relu;
            }
            SCOPED_TRACE(std::string(g.what) + (packed ? "" : ", unpacked rows"));
            {
              ConvArguments named = a;
              Buffers b = make_buffers(named, epilogue, bias);
              // (A 1x1 image's rows have no stride that matters: unpacked, it still takes 8 channels.)
              bool const rows_matter = g.h > 1 || g.w > 1;
              EXPECT_EQ(kernel_of(named), depthwise_kernel(op, t, (packed || !rows_matter) && c % 8 == 0)) << describe(a);
            }
            run_case(a, epilogue, bias);
          }
}

// The routing, without a GPU: a depthwise dgrad or wgrad (2-D, groups = c = k, up to 192 taps)
// goes to the direct kernel of its pass, 8 channels per thread where C and the strides of the
// tensors it loads (dgrad: dy; wgrad: x and dy) are multiples of 8 and their addresses 16-byte
// aligned, else 1; the kernel can be named, the other width cannot. A channel multiplier of 2, 3-D
// or a filter of more than 192 taps is no direct-kernel problem.
TEST(ConvDepthwise, BackwardRoutesToTheDirectKernels) {
  alignas(16) static unsigned char placeholder[64];
  auto const with_pointers = [&](ConvArguments a) {  // the choice reads only the pointers' alignment
    if (a.x.ptr == nullptr) a.x.ptr = placeholder;
    if (a.filter.ptr == nullptr) a.filter.ptr = placeholder;
    if (a.y.ptr == nullptr) a.y.ptr = placeholder;
    a.out = a.op == Operator::kDgrad ? const_cast<void*>(a.x.ptr) : const_cast<void*>(a.filter.ptr);
    return a;
  };
  auto const name_of = [&](ConvArguments const& a) {
    char const* name = nullptr;
    Status const s = conv_kernel_name(with_pointers(a), &name);
    EXPECT_TRUE(s.ok()) << s.reason;
    return s.ok() ? std::string(name) : std::string();
  };
  for (Operator op : {Operator::kDgrad, Operator::kWgrad})
    for (DType t : kDtypes) {
      SCOPED_TRACE(std::string(conv::to_string(op)) + " " + to_string(t));
      EXPECT_EQ(name_of(depthwise(op, t, 128, 28, 28, 256, 3, 3, {1, 1})), depthwise_kernel(op, t, true));
      EXPECT_EQ(name_of(depthwise(op, t, 2, 14, 14, 1024, 3, 3, {1, 1}, {2, 2})), depthwise_kernel(op, t, true));
      EXPECT_EQ(name_of(depthwise(op, t, 2, 9, 9, 33, 3, 3, {1, 1})), depthwise_kernel(op, t, false));
      EXPECT_EQ(name_of(depthwise(op, t, 2, 9, 9, 1, 3, 3, {1, 1})), depthwise_kernel(op, t, false));  // C = 1: groups 1
      ConvArguments rows = depthwise(op, t, 2, 9, 9, 24, 3, 3, {1, 1});
      unpack_rows(rows);
      EXPECT_EQ(name_of(rows), depthwise_kernel(op, t, false));
      ConvArguments x_rows = depthwise(op, t, 2, 9, 9, 24, 3, 3, {1, 1});  // only x's rows unpacked: dgrad does not load x
      x_rows.x.stride_w = 27, x_rows.x.stride_h = 27 * 9, x_rows.x.stride_d = x_rows.x.stride_n = 27 * 81;
      EXPECT_EQ(name_of(x_rows), depthwise_kernel(op, t, op == Operator::kDgrad));
      ConvArguments odd_ptr = depthwise(op, t, 2, 9, 9, 24, 3, 3, {1, 1});
      odd_ptr.y.ptr = placeholder + 2;  // dy 2-byte aligned only
      EXPECT_EQ(name_of(odd_ptr), depthwise_kernel(op, t, false));

      std::string const vec8 = depthwise_kernel(op, t, true), vec1 = depthwise_kernel(op, t, false);
      ConvArguments named = with_pointers(depthwise(op, t, 2, 9, 9, 24, 3, 3, {1, 1}));
      named.kernel = vec8.c_str();
      EXPECT_EQ(name_of(named), vec8);
      named.kernel = vec1.c_str();
      char const* picked = nullptr;
      Status const refused = conv_kernel_name(named, &picked);
      EXPECT_EQ(refused.code, StatusCode::invalid_argument);
      EXPECT_NE(refused.reason.find(vec8), std::string::npos) << refused.reason;

      EXPECT_EQ(name_of(make_packed_conv2d(op, 2, 9, 9, 16, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 16, t)).rfind("sm80_conv_depthwise", 0),
                std::string::npos);  // channel multiplier 2
      EXPECT_EQ(name_of(make_packed_conv3d(op, 1, 4, 5, 5, 8, 8, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 8, t))
                    .rfind("sm80_conv_depthwise", 0),
                std::string::npos);  // 3-D
      EXPECT_EQ(name_of(depthwise(op, t, 1, 20, 20, 8, 15, 15, {7, 7})).rfind("sm80_conv_depthwise", 0),
                std::string::npos);  // 225 taps
    }
  // The registry lists all eight, each with a probe.
  std::set<std::string> listed;
  for (int i = 0; i < conv_kernel_count(); ++i) listed.insert(conv_kernel_info(i).name);
  for (Operator op : {Operator::kDgrad, Operator::kWgrad})
    for (DType t : kDtypes)
      for (bool vec8 : {true, false}) EXPECT_EQ(listed.count(depthwise_kernel(op, t, vec8)), 1u) << depthwise_kernel(op, t, vec8);
}

// The depthwise wgrad's split over the batch's pixels (problems the rule splits on any GPU of 9 or
// more SMs): judged against the fp64 reference, the same bits on a second run from the pool and on
// a third from the caller's workspace, a too-small workspace refused; both widths, both dtypes,
// 49 taps (6 tap groups), a residual and an activation.
TEST(ConvDepthwise, WgradSplitBitwiseDeterministic) {
  TESSEL_REQUIRE_GPU();
  std::vector<ConvArguments> cases = {
      depthwise(Operator::kWgrad, DType::bf16, 8, 28, 28, 72, 3, 3, {1, 1}),            // vec8, 2 channel blocks
      depthwise(Operator::kWgrad, DType::f16, 4, 29, 27, 24, 3, 3, {1, 1}, {2, 2}),      // stride 2
      depthwise(Operator::kWgrad, DType::bf16, 4, 30, 30, 3, 3, 3, {2, 2}, {1, 1}, {2, 2}),  // vec1, dilation 2
      depthwise(Operator::kWgrad, DType::f16, 4, 32, 31, 16, 7, 7, {3, 3}),                // 49 taps
      depthwise(Operator::kWgrad, DType::bf16, 2, 64, 64, 256, 3, 3, {1, 1}),           // 4 channel blocks
  };
  ConvArguments unpacked = depthwise(Operator::kWgrad, DType::f16, 8, 28, 28, 24, 3, 3, {1, 1});
  unpack_rows(unpacked);  // vec1 at C = 24
  cases.push_back(unpacked);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ConvArguments a = cases[i];
    SCOPED_TRACE(describe(a));
    a.alpha = 0.75f, a.beta = -0.5f;
    if (i % 2 == 1) a.activation = ConvActivation::silu;
    Buffers b = make_buffers(a, true, false);
    EXPECT_EQ(kernel_of(a).rfind("sm80_conv_depthwise_wgrad_", 0), 0u) << kernel_of(a);
    std::size_t bytes = 0;
    ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
    EXPECT_GT(bytes, 0u) << "the rule did not split";
    EXPECT_EQ(bytes % (std::size_t(a.r * a.s * a.c) * sizeof(float)), 0u) << "slices x r*s x c floats";
    ASSERT_TRUE(convolution(a).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    reference::ConvCheck const check = judge(a);
    EXPECT_TRUE(check.passed()) << check.describe();
    expect_nothing_written_outside(a, b.n_out);
    std::vector<std::uint16_t> const first = download(a.out, b.n_out);

    for (int run = 0; run < 3; ++run) {
      ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
      ASSERT_TRUE(convolution(a).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_TRUE(download(a.out, b.n_out) == first) << "run " << run + 2 << " differs";
    }

    expect_caller_workspace(a, b.n_out, bytes, first);
  }
  // The depthwise dgrad takes no workspace.
  ConvArguments d = depthwise(Operator::kDgrad, DType::bf16, 8, 28, 28, 72, 3, 3, {1, 1});
  Buffers b = make_buffers(d, false, false);
  std::size_t bytes = 1;
  ASSERT_TRUE(conv_workspace_size(d, &bytes).ok());
  EXPECT_EQ(bytes, 0u);
}

// The sm_90a fprop kernels on an sm_90 GPU (elsewhere the sm_80 kernels run the same problems): K
// 64 and K 128 with a residual and a bias (the direct kernel), K 512 with an activation (the
// implicit GEMM, 128 pixels x 256 channels a tile: 66 pixel tiles, the last one partial, make 132
// cluster tiles, two full rounds); ragged M (a partial last tile), padding; fp16 too.
TEST(ConvSm90, EveryTileWidth) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16}) {
    run_case(conv2d(Operator::kFprop, t, 3, 13, 11, 64, 64, 3, 3, {1, 1}), true, true);
    run_case(conv2d(Operator::kFprop, t, 2, 15, 17, 72, 136, 3, 3, {2, 1}, {2, 1}));
    ConvArguments wide = conv2d(Operator::kFprop, t, 75, 15, 15, 64, 512, 3, 3, {1, 1});
    wide.activation = ConvActivation::relu;
    run_case(wide, true, true);
    alignas(16) static unsigned char placeholder[16];  // the choice reads only the pointers' alignment
    wide.x.ptr = wide.filter.ptr = placeholder;
    wide.out = placeholder;
    char const* name = nullptr;
    Status const named = conv_kernel_name(wide, &name);
    ASSERT_TRUE(named.ok()) << named.reason;
    std::optional<DeviceInfo> const dev = query_device(0);
    if (dev && dev->cc_major == 9 && dev->cc_minor == 0) { EXPECT_NE(std::string(name).find("128x256x64_c2"), std::string::npos) << name; }
  }
}

// The sm_90a kernels' activation tile through TMA im2col: the bounding box and traversal strides
// per dimension (rectangular filters, unequal pads, strides and dilations), a tile that wraps
// across image rows and into the next image, 3-D, one-pixel-high images, channels past a 64-block;
// and problems the tensor map cannot express (a traversal stride of 9, a 3-D pad past 16), which
// the kernel gathers by cp.async instead. The same problems as stride-1 data gradients run through
// the sm_90a dgrad kernels (flipped, transposed filters; the strided ones through sm_80).
TEST(ConvSm90, Im2colGeometry) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    for (DType t : {DType::bf16, DType::f16}) {
      run_case(conv2d(op, t, 2, 11, 19, 64, 64, 3, 5, {1, 2}, {2, 3}, {2, 1}), true, true);
      run_case(conv2d(op, t, 2, 13, 12, 64, 72, 3, 5, {1, 2}, {1, 1}, {2, 1}), true, true);
      run_case(conv2d(op, t, 3, 1, 37, 72, 64, 1, 3, {0, 1}));
      run_case(conv2d(op, t, 2, 9, 7, 136, 128, 2, 2, {0, 0}, {1, 1}, {3, 2}));
      run_case(conv2d(op, t, 1, 40, 41, 64, 64, 3, 3, {1, 1}, {9, 9}));
      run_case(conv2d(op, t, 2, 12, 10, 64, 200, 3, 3, {3, 0}));  // dgrad: a pad past (filter - 1): sm_80
      run_case(make_packed_conv3d(op, 2, 5, 6, 7, 64, 64, 3, 3, 3, {1, 1, 1}, {1, 2, 2}, {1, 1, 1}, 1, t));
      run_case(make_packed_conv3d(op, 2, 5, 6, 7, 64, 80, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 2, 1}, 1, t), true, true);
      run_case(make_packed_conv3d(op, 1, 6, 7, 5, 64, 72, 2, 3, 2, {0, 1, 2}, {2, 1, 1}, {2, 1, 2}, 1, t));
      run_case(make_packed_conv3d(op, 1, 3, 4, 4, 64, 64, 1, 1, 3, {17, 0, 1}));
    }
  }
}

// The implicit GEMM (the sm_90a GEMM kernel with an im2col operand, the choice for fprop and
// stride-1 dgrad without a bias), each problem through every variant by name -- the pixels as A in
// tiles 256 channels wide, and as B (D written transposed) in tiles of 128 and 64 channels: K and
// the GEMM-K's channel blocks ragged (72 channels:
// a half-empty second block), few output tiles with a long sum (the GEMM's split-K and split tail),
// 3-D, padded output rows (ldd > K), alpha and a residual, an activation, fp16; each problem also
// through the direct sm_90a kernel by name, both judged against the fp64 reference. A bias, or
// pixels not evenly strided, keep the problem on the direct kernel.
TEST(ConvSm90, ImplicitGemm) {
  TESSEL_REQUIRE_GPU();
  std::optional<DeviceInfo> const dev = query_device(0);
  if (!dev || dev->cc_major != 9 || dev->cc_minor != 0) GTEST_SKIP() << "the sm_90a kernels run on compute capability 9.0";
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    for (DType t : {DType::bf16, DType::f16}) {
      std::vector<ConvArguments> cases = {
          conv2d(op, t, 3, 13, 11, 64, 64, 3, 3, {1, 1}),
          conv2d(op, t, 2, 15, 17, 72, 136, 3, 3, {2, 1}, {1, 1}, {2, 1}),
          conv2d(op, t, 4, 28, 28, 128, 320, 3, 3, {1, 1}),
          conv2d(op, t, 2, 7, 7, 512, 512, 3, 3, {1, 1}),  // 1 pixel tile, 72 k-tiles: split
          conv2d(op, t, 1, 40, 41, 64, 256, 1, 3, {0, 1}),
          make_packed_conv3d(op, 2, 5, 6, 7, 64, 80, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 2, 1}, 1, t),
      };
      if (op == Operator::kFprop) cases.push_back(conv2d(op, t, 2, 11, 19, 64, 64, 3, 5, {1, 2}, {2, 3}, {2, 1}));
      ConvArguments padded = conv2d(op, t, 2, 9, 10, 64, 96, 3, 3, {1, 1});
      if (op == Operator::kFprop) {
        ConvOutputExtents const e = conv_output_extents(padded);
        padded.y.stride_w = padded.k + 24, padded.y.stride_h = padded.y.stride_w * e.q, padded.y.stride_n = padded.y.stride_h * e.p;
      } else {
        padded.x.stride_w = padded.c + 24, padded.x.stride_h = padded.x.stride_w * padded.w,
        padded.x.stride_n = padded.x.stride_h * padded.h;
      }
      cases.push_back(padded);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        ConvArguments a = cases[i];
        a.alpha = i % 2 == 0 ? 1.0f : 0.75f;
        a.beta = i % 3 == 1 ? 0.5f : 0.0f;
        a.activation = i % 3 == 2 ? ConvActivation::gelu : ConvActivation::none;
        SCOPED_TRACE(describe(a));
        Buffers b = make_buffers(a, a.beta != 0.0f, false);
        std::string const picked = kernel_of(a);
        EXPECT_EQ(picked.rfind(op == Operator::kFprop ? "sm90_conv_fprop_" : "sm90_conv_dgrad_", 0), 0u) << picked;
        EXPECT_TRUE(picked.ends_with("_c1") || picked.ends_with("_c2")) << picked;
        run_case(a, a.beta != 0.0f, false);
        if (a.beta == 0.0f && a.activation == ConvActivation::none) {  // a lean build's case: the general build too
          ConvArguments general = a;
          general.options.lean_builds = false;
          run_case(general, false, false);
        }
        // Every implicit-GEMM kernel by name: the pixels as A, and as B in all three tiles.
        for (char const* tile : {"128x256x64_c2", "256x128x64_c1", "256x64x64_c1", "192x128x64_c1"}) {
          std::string const name = std::string(op == Operator::kFprop ? "sm90_conv_fprop_" : "sm90_conv_dgrad_") +
                                   (t == DType::bf16 ? "bf16_" : "fp16_") + tile;
          ConvArguments named = a;
          named.kernel = name.c_str();
          EXPECT_EQ(kernel_of(named), name);
          if (name != picked) run_case(named, a.beta != 0.0f, false);
        }
        int direct_kernels = 0;  // the direct kernel of the width its own rule picks
        for (char const* width : {"128x256x64", "128x128x64", "128x64x64"}) {
          std::string const direct = std::string(op == Operator::kFprop ? "sm90_conv_fprop_" : "sm90_conv_dgrad_") +
                                     (t == DType::bf16 ? "bf16_" : "fp16_") + width;
          ConvArguments named = a;
          named.kernel = direct.c_str();
          char const* name = nullptr;
          if (!conv_kernel_name(named, &name).ok()) continue;  // (another width: refused)
          EXPECT_EQ(std::string(name), direct);
          ++direct_kernels;
          run_case(named, a.beta != 0.0f, false);
        }
        EXPECT_EQ(direct_kernels, 1);
      }
      ConvArguments with_bias = conv2d(op, t, 2, 9, 10, 64, 64, 3, 3, {1, 1});
      Buffers b = make_buffers(with_bias, false, true);
      std::string const direct = kernel_of(with_bias);
      EXPECT_TRUE(direct.rfind("sm90_conv_", 0) == 0 && !direct.ends_with("_c1") && !direct.ends_with("_c2")) << direct;
    }
  }
}

// The weight gradient as the implicit GEMM dw = dy^T x im2col(x) (im2col B, its sum over pixels
// in K slices): 64 filters (the one-consumer 64 x 192 tiles) and more, ragged K, padding, stride,
// dilation, 3-D, few pixels, a 1x1 stride-2 layer, alpha and a residual; judged against the fp64
// reference, and the same bits on a second run; every wgrad kernel by name on four of them.
// Channels not a multiple of 64 stay on sm_80.
TEST(ConvSm90, WgradImplicitGemm) {
  TESSEL_REQUIRE_GPU();
  std::optional<DeviceInfo> const dev = query_device(0);
  if (!dev || dev->cc_major != 9 || dev->cc_minor != 0) GTEST_SKIP() << "the sm_90a kernels run on compute capability 9.0";
  for (DType t : {DType::bf16, DType::f16}) {
    std::vector<ConvArguments> cases = {
        conv2d(Operator::kWgrad, t, 3, 13, 11, 64, 64, 3, 3, {1, 1}),
        conv2d(Operator::kWgrad, t, 2, 15, 17, 64, 136, 3, 3, {2, 1}, {1, 1}, {2, 1}),
        conv2d(Operator::kWgrad, t, 4, 28, 28, 128, 320, 3, 3, {1, 1}),
        conv2d(Operator::kWgrad, t, 2, 7, 7, 512, 512, 3, 3, {1, 1}),
        conv2d(Operator::kWgrad, t, 2, 16, 16, 64, 128, 3, 3, {1, 1}, {2, 2}),
        conv2d(Operator::kWgrad, t, 2, 14, 14, 128, 64, 1, 1, {0, 0}, {2, 2}),
        // 320 and 192 channels: a 192-column tile starts mid-tap and crosses into the next one.
        conv2d(Operator::kWgrad, t, 1, 9, 11, 320, 128, 3, 3, {1, 1}),
        conv2d(Operator::kWgrad, t, 2, 10, 12, 192, 64, 3, 3, {1, 1}),
        // 30 output pixels an image: each k-tile of 64 pixels carries into the images after it.
        conv2d(Operator::kWgrad, t, 40, 5, 6, 64, 64, 3, 3, {1, 1}),
        // 196 k-tiles on 3 tiles: 12 K slices, each unit's pixel walk starting mid-image.
        conv2d(Operator::kWgrad, t, 16, 28, 28, 64, 64, 3, 3, {1, 1}),
        make_packed_conv3d(Operator::kWgrad, 2, 5, 6, 7, 64, 80, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 2, 1}, 1, t),
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
      ConvArguments a = cases[i];
      a.alpha = i % 2 == 0 ? 1.0f : 0.75f;
      a.beta = i % 3 == 1 ? 0.5f : 0.0f;
      SCOPED_TRACE(describe(a));
      Buffers b = make_buffers(a, a.beta != 0.0f, false);
      std::string const picked = kernel_of(a);
      EXPECT_EQ(picked.rfind("sm90_conv_wgrad_", 0), 0u) << picked;
      ASSERT_TRUE(convolution(a).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      reference::ConvCheck const check = judge(a);
      EXPECT_TRUE(check.passed()) << check.describe();
      std::int64_t const n = reference::conv_output_elements(a);
      std::vector<std::uint16_t> const first = download(a.out, n);
      EXPECT_TRUE(reference::fill_constant_device(a.out, a.dtype, n, NAN).ok());
      ASSERT_TRUE(convolution(a).ok());
      EXPECT_EQ(download(a.out, n), first);
      if (i == 1 || i == 6 || i == 9 || i == 10) {
        for (char const* tile : {"128x192x64_c1", "128x192x64_c1x2", "64x192x64_c1"}) {
          std::string const name = std::string("sm90_conv_wgrad_") + (t == DType::bf16 ? "bf16_" : "fp16_") + tile;
          ConvArguments named = a;
          named.kernel = name.c_str();
          EXPECT_EQ(kernel_of(named), name);
          if (name != picked) run_case(named, a.beta != 0.0f, false);
        }
      }
    }
    ConvArguments odd = conv2d(Operator::kWgrad, t, 2, 9, 10, 72, 64, 3, 3, {1, 1});
    Buffers b = make_buffers(odd, false, false);
    EXPECT_EQ(kernel_of(odd).rfind("sm80_", 0), 0u) << kernel_of(odd);
  }
}

// ConvOptions::wgrad_slices: the weight gradient's sum over pixels in as many slices as asked --
// on the implicit GEMM (sm_90a, or sm_80 elsewhere), on the sm_80 kernel (72 channels) and on the
// GEMM (a 1x1 layer) -- each judged against the fp64 reference; on the convolution kernels, more
// slices take more partials in the workspace (one slice none).
TEST(ConvWgrad, SlicesAsAsked) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16}) {
    ConvArguments const bases[] = {conv2d(Operator::kWgrad, t, 16, 28, 28, 64, 64, 3, 3, {1, 1}),
                                   conv2d(Operator::kWgrad, t, 2, 9, 10, 72, 64, 3, 3, {1, 1}),
                                   conv2d(Operator::kWgrad, t, 8, 14, 14, 128, 64, 1, 1, {0, 0})};
    for (int i = 0; i < 3; ++i) {
      std::size_t bytes[2] = {1, 0};
      for (int slices : {1, 3, 13}) {
        ConvArguments a = bases[i];
        a.options.wgrad_slices = slices;
        run_case(a);
        if (i < 2 && slices != 3) {
          Buffers b = make_buffers(a, false, false);
          ASSERT_TRUE(conv_workspace_size(a, &bytes[slices == 13]).ok());
        }
      }
      if (i < 2) {
        EXPECT_EQ(bytes[0], 0u) << describe(bases[i]);
        EXPECT_GT(bytes[1], 0u) << describe(bases[i]);
      }
    }
  }
}

// Which kernel the library picks on an H100/H200 (tests/conv_sm90_pick_cases.hpp, whose rules the
// host test checks without a GPU): through conv_kernel_name on the device.
TEST(ConvSm90, TilePicks) {
  TESSEL_REQUIRE_GPU();
  std::optional<DeviceInfo> const dev = query_device(0);
  if (!dev || dev->cc_major != 9 || dev->cc_minor != 0) GTEST_SKIP() << "the sm_90a kernels run on compute capability 9.0";
  alignas(16) static unsigned char placeholder[16];  // the choice reads only the pointers' alignment
  for (test::ConvSm90PickCase const& c : test::kConvSm90PickCases) {
    ConvArguments const a = test::conv_sm90_pick_problem(c, placeholder);
    char const* name = nullptr;
    Status const named = conv_kernel_name(a, &name);
    ASSERT_TRUE(named.ok()) << named.reason;
    EXPECT_EQ(std::string(name).rfind(c.expect, 0), 0u) << name << " for " << describe(a);
  }
}

// The halo-window fprop (3x3, C = K = 64): one-pixel images, widths 2 to 62 (its 64-position
// rows), heights off its 4-row tiles, an image's last tile partial, padded pixels in x and y and
// filter rows past 576 elements, alpha, beta with a residual, a bias, each activation, fp16;
// judged against the fp64 reference with the output poisoned (run_case), so a write past y's
// pixels or into its padding fails. The grid is at most one CTA an SM, so 134 and 300 tiles (n 67
// at 8 rows, n 100 at 12) give CTAs one, two and three tiles, which leave its loop by each of its
// two exits. Problems outside its rules (63 pixels wide, K 72, stride 2) do not list it: naming it is
// refused.
TEST(ConvSm90, HaloWindow) {
  TESSEL_REQUIRE_GPU();
  std::optional<DeviceInfo> const dev = query_device(0);
  if (!dev || dev->cc_major != 9 || dev->cc_minor != 0) GTEST_SKIP() << "the sm_90a kernels run on compute capability 9.0";
  for (DType t : {DType::bf16, DType::f16}) {
    std::string const name = std::string("sm90_conv_fprop_") + (t == DType::bf16 ? "bf16" : "fp16") + "_halo_64x256";
    std::vector<ConvArguments> cases = {
        conv2d(Operator::kFprop, t, 3, 13, 11, 64, 64, 3, 3, {1, 1}), conv2d(Operator::kFprop, t, 2, 62, 62, 64, 64, 3, 3, {1, 1}),
        conv2d(Operator::kFprop, t, 1, 1, 1, 64, 64, 3, 3, {1, 1}),   conv2d(Operator::kFprop, t, 4, 5, 2, 64, 64, 3, 3, {1, 1}),
        conv2d(Operator::kFprop, t, 1, 30, 61, 64, 64, 3, 3, {1, 1}), conv2d(Operator::kFprop, t, 9, 56, 56, 64, 64, 3, 3, {1, 1}),
        conv2d(Operator::kFprop, t, 67, 8, 3, 64, 64, 3, 3, {1, 1}),  conv2d(Operator::kFprop, t, 100, 12, 5, 64, 64, 3, 3, {1, 1}),
    };
    ConvArguments strided = conv2d(Operator::kFprop, t, 5, 13, 30, 64, 64, 3, 3, {1, 1});
    strided.x.stride_w = 72, strided.x.stride_h = 72 * 30, strided.x.stride_n = 72 * 30 * 13;
    strided.y.stride_w = 80, strided.y.stride_h = 80 * 30, strided.y.stride_n = 80 * 30 * 13;
    strided.filter.stride_k = 584;
    cases.push_back(strided);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      ConvArguments a = cases[i];
      a.alpha = i % 2 == 0 ? 1.0f : -0.75f;
      a.kernel = name.c_str();  // run_case fails where the name is refused
      run_case(a);
    }
    // The fused terms, on a ragged problem and on padded strides (the residual read with y's strides).
    for (ConvActivation act : {ConvActivation::none, ConvActivation::relu, ConvActivation::gelu, ConvActivation::silu}) {
      for (ConvArguments a : {conv2d(Operator::kFprop, t, 3, 13, 11, 64, 64, 3, 3, {1, 1}), strided}) {
        a.alpha = 1.5f, a.beta = -0.5f, a.activation = act;
        a.kernel = name.c_str();  // run_case fails where the name is refused
        run_case(a, /*residual=*/true, /*bias=*/true);
        a.beta = 0.0f;  // bias and activation alone
        run_case(a, /*residual=*/false, /*bias=*/true);
      }
    }
    alignas(16) static unsigned char placeholder[16];  // naming reads only the pointers' alignment
    std::vector<ConvArguments> refused = {conv2d(Operator::kFprop, t, 2, 9, 63, 64, 64, 3, 3, {1, 1}),
                                          conv2d(Operator::kFprop, t, 2, 9, 10, 64, 72, 3, 3, {1, 1}),
                                          conv2d(Operator::kFprop, t, 2, 9, 10, 64, 64, 3, 3, {1, 1}, {2, 2})};
    for (ConvArguments a : refused) {
      a.x.ptr = a.filter.ptr = placeholder;
      a.out = placeholder;
      a.kernel = name.c_str();
      char const* picked = nullptr;
      EXPECT_FALSE(conv_kernel_name(a, &picked).ok()) << describe(a);
    }
  }
}

// ---- the padded route: small and odd channel counts on the aligned kernels ---------------------------
//
// A groups-1 problem the sm_80 selection would read element by element runs on copies with its
// channels padded (tessel/conv/conv_padded.hpp): conv_kernel_name says "padded:<inner kernel>".

namespace {

// C and K the padded route takes (C == K == 1 excepted: the depthwise kernels take that one).
constexpr std::int64_t kPaddedC[] = {1, 3, 5, 33};
constexpr std::int64_t kPaddedK[] = {1, 7, 65};

// A ragged 3x3 problem (H 9, W 11, pad 1) at stride 1 or 2.
ConvArguments padded_case(Operator op, DType t, std::int64_t c, std::int64_t k, std::int64_t stride) {
  return conv2d(op, t, 2, 9, 11, c, k, 3, 3, {1, 1}, {stride, stride});
}

}  // namespace

// Every pass and dtype, C in {1, 3, 5, 33}, K in {1, 7, 65}, stride 1 and 2, judged against the
// fp64 reference with the output NaN-poisoned first: once with alpha and beta times a residual,
// once with a bias (fprop, dgrad) and ReLU. On an sm_90 GPU the C = 33 fprop and the K = 65
// stride-1 dgrad problems run the sm_90a kernels on their padded copies.
TEST(ConvPadded, SmallAndOddChannelsAgainstTheReference) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes)
      for (std::int64_t c : kPaddedC)
        for (std::int64_t k : kPaddedK)
          for (std::int64_t stride : {1, 2}) {
            ConvArguments a = padded_case(op, t, c, k, stride);
            a.alpha = 1.25f, a.beta = -0.5f;
            run_case(a, /*residual=*/true, /*bias=*/false);
            a.alpha = 1.0f, a.beta = 0.0f, a.activation = ConvActivation::relu;
            run_case(a, /*residual=*/false, /*bias=*/op != Operator::kWgrad);
          }
}

// The same problems report the padded route, with an aligned inner kernel, except fprop with C <= 4
// (the small-channel kernel's).
TEST(ConvPadded, ThoseProblemsReportThePaddedRoute) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes)
      for (std::int64_t c : kPaddedC)
        for (std::int64_t k : kPaddedK)
          for (std::int64_t stride : {1, 2}) {
            if (c == 1 && k == 1) continue;
            ConvArguments a = padded_case(op, t, c, k, stride);
            SCOPED_TRACE(describe(a));
            Buffers b = make_buffers(a, false, false);
            std::string const name = kernel_of(a);
            if (op == Operator::kFprop && c <= 4) {  // the small-channel kernel takes it unpadded
              EXPECT_EQ(name, std::string("sm80_conv_fprop_") + (t == DType::bf16 ? "bf16" : "fp16") + "_smallc");
              continue;
            }
            EXPECT_EQ(name.rfind("padded:", 0), 0u) << name;
            EXPECT_EQ(name.find("_align1"), std::string::npos) << name;
            bool const sm90_widths = compute_capability() == 90 && (op == Operator::kFprop ? c == 33 : op == Operator::kDgrad && stride == 1 && k == 65);
            if (sm90_widths) { EXPECT_EQ(name.rfind("padded:sm90_", 0), 0u) << name; }
          }
}

// The benchmark's lines at batch 2 (the stem: 7x7 stride 2, C 3 -> K 64 at 224x224; 3x3 C 33 -> K 65
// at 57x57) through the padded route -- the stem's fprop and dgrad through the small-channel kernels
// -- with the epilogue: fprop bias + ReLU, dgrad alpha, beta and bias, wgrad alpha and beta.
TEST(ConvPadded, BenchLinesAtBatchTwo) {
  TESSEL_REQUIRE_GPU();
  for (DType t : kDtypes)
    for (ConvArguments a : {conv2d(Operator::kFprop, t, 2, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}),
                            conv2d(Operator::kDgrad, t, 2, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}),
                            conv2d(Operator::kWgrad, t, 2, 224, 224, 3, 64, 7, 7, {3, 3}, {2, 2}),
                            conv2d(Operator::kFprop, t, 2, 57, 57, 33, 65, 3, 3, {1, 1}),
                            conv2d(Operator::kDgrad, t, 2, 57, 57, 33, 65, 3, 3, {1, 1}),
                            conv2d(Operator::kWgrad, t, 2, 57, 57, 33, 65, 3, 3, {1, 1})}) {
      {
        Buffers b = make_buffers(a, false, false);
        if (a.c == 3)
          EXPECT_NE(kernel_of(a).find("_smallc"), std::string::npos) << kernel_of(a);
        else
          EXPECT_EQ(kernel_of(a).rfind("padded:", 0), 0u) << kernel_of(a);
      }
      bool const bias = a.op != Operator::kWgrad;
      if (a.op == Operator::kFprop) {
        a.activation = ConvActivation::relu;
        run_case(a, false, bias);
      } else {
        a.alpha = 0.75f, a.beta = 0.5f;
        run_case(a, true, bias);
      }
    }
}

// The workspace: conv_workspace_size holds the padded copies (and the inner kernel's scratch); a
// run from the pool and a run from the caller's workspace of exactly that size give the same bits;
// one byte less is refused before anything runs (out stays NaN) with the bytes needed.
TEST(ConvPadded, WorkspaceFromThePoolOrTheCaller) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps) {
    ConvArguments a = conv2d(op, DType::bf16, 2, 20, 18, 5, 7, 3, 3, {1, 1}, {2, 2});
    SCOPED_TRACE(describe(a));
    a.beta = 0.25f;
    Buffers b = make_buffers(a, true, op != Operator::kWgrad);
    ASSERT_EQ(kernel_of(a).rfind("padded:", 0), 0u) << kernel_of(a);
    EXPECT_TRUE(can_implement(a).ok());
    std::size_t bytes = 0;
    ASSERT_TRUE(conv_workspace_size(a, &bytes).ok());
    // At least x' (2*20*18*8) and w' (8*9*8) in 16-bit elements, each piece a multiple of 256 bytes.
    EXPECT_GE(bytes, std::size_t(2 * 20 * 18 * 8 * 2 + 8 * 9 * 8 * 2));
    EXPECT_EQ(bytes % 256, 0u);
    ASSERT_TRUE(convolution(a).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    reference::ConvCheck const check = judge(a);
    EXPECT_TRUE(check.passed()) << check.describe();
    std::vector<std::uint16_t> const first = download(a.out, b.n_out);

    DeviceMem ws(bytes);
    a.workspace = ws.p, a.workspace_bytes = bytes;
    ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
    ASSERT_TRUE(convolution(a).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(download(a.out, b.n_out) == first) << "the run with the caller's workspace differs";

    ASSERT_TRUE(reference::fill_constant_device(a.out, a.dtype, b.n_out, NAN).ok());
    a.workspace_bytes = bytes - 1;
    Status const s = convolution(a);
    EXPECT_EQ(s.code, StatusCode::invalid_argument);
    EXPECT_EQ(s.reason.rfind("workspace_bytes:", 0), 0u) << s.reason;
    EXPECT_NE(s.reason.find(std::to_string(bytes)), std::string::npos) << s.reason;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (std::uint16_t v : download(a.out, b.n_out)) ASSERT_TRUE(std::isnan(reference::bf16_to_float(v)));
  }
}

// Naming the element-wise kernel still runs it (A/B measurements); naming the padded route runs it,
// and so does naming the sm_80 widths' padded kernel where the route would pick the sm_90a widths.
TEST(ConvPadded, NamedKernels) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps) {
    ConvArguments a = conv2d(op, DType::f16, 2, 9, 11, 5, 7, 3, 3, {1, 1});
    ConvArguments probe = a;
    Buffers b = make_buffers(probe, false, false);
    std::string const padded = kernel_of(probe);
    ASSERT_EQ(padded.rfind("padded:", 0), 0u) << padded;
    std::string const align1 = padded.substr(7) + "_align1";
    a.kernel = align1.c_str();
    run_case(a);
    probe.kernel = align1.c_str();
    EXPECT_EQ(kernel_of(probe), align1);
    a.kernel = padded.c_str();
    run_case(a);
  }
  // The sm_80 widths by name on any GPU (on an sm_90 one the route picks the sm_90a widths).
  for (Operator op : {Operator::kFprop, Operator::kDgrad}) {
    ConvArguments a = conv2d(op, DType::bf16, 2, 13, 12, 33, 65, 3, 3, {1, 1});
    std::string const sm80 = std::string("padded:sm80_conv_") + conv::to_string(op) + "_bf16_128x128x32";
    a.kernel = sm80.c_str();
    ConvArguments probe = a;
    Buffers b = make_buffers(probe, false, false);
    EXPECT_EQ(kernel_of(probe), sm80);
    a.beta = 0.5f;
    run_case(a, true, true);
  }
}

// Tensors the aligned kernels cannot read in place though their channels need no padding (a
// channel slice whose pixels are 12 elements apart), and outputs written through padded strides:
// nothing is written between out's elements (run_case checks), every pass.
TEST(ConvPadded, NonPackedAndMisalignedStrides) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (std::int64_t c : {8, 5}) {
      ConvArguments a = conv2d(op, DType::bf16, 2, 9, 7, c, 16, 3, 3, {1, 1});
      ConvOutputExtents const e = conv_output_extents(a);
      a.x.stride_w = c + 4, a.x.stride_h = a.x.stride_w * a.w + 3, a.x.stride_n = a.x.stride_h * a.h + 5;
      a.y.stride_w = a.k + 3, a.y.stride_h = a.y.stride_w * e.q + 1, a.y.stride_n = a.y.stride_h * e.p + 7;
      a.filter.stride_k += 5;
      ConvArguments probe = a;
      Buffers b = make_buffers(probe, false, false);
      EXPECT_EQ(kernel_of(probe).rfind("padded:", 0), 0u) << kernel_of(probe);
      a.alpha = 0.5f, a.beta = 1.0f;
      run_case(a, true, op != Operator::kWgrad);
    }
}

// Padding is exact with NaN and Inf in the activations: the zero channels and filters meet them only
// in outputs the copy out drops, so they reach exactly the outputs whose sums hold them.
TEST(ConvPadded, NanAndInfPropagate) {
  TESSEL_REQUIRE_GPU();
  for (Operator op : kOps)
    for (DType t : kDtypes) {
      ConvArguments a = conv2d(op, t, 2, 9, 8, 5, 7, 3, 3, {1, 1});
      SCOPED_TRACE(describe(a));
      Buffers b = make_buffers(a, false, false);
      ASSERT_EQ(kernel_of(a).rfind("padded:", 0), 0u) << kernel_of(a);
      expect_nan_and_inf_propagate(a, 5 * 60 + 3);
    }
}
