// tessel::attention_forward, the host API, judged by FlashAttention-3's rule against the exact
// (fp32) and low-precision references of tessel/reference/attention_device.hpp.
//
// Every run: random Q, K, V; O and LSE poisoned with NaN first; the kernel passes when
// max |O - O_exact| <= 2 max |O_low - O_exact| + floor (the same for LSE), a NaN where the exact
// reference is finite fails, a row that sees no key must give O = 0 and LSE = -inf, and the first
// bad (b, i, h, d) is reported. Covered: both dtypes; MHA, GQA and MQA; no mask, causal
// (bottom-right and top-left), sliding windows on either or both sides, softcap; every supported
// head-dim pair; odd lengths on both sides (1 x 1 up to 1023 x 1024, S_q > S_k and S_q < S_k) and
// 4224 x 4224; variable-length batches with empty sequences; non-packed strides ([B, H, S, D]
// memory order, padded rows) with nothing written outside O and LSE; LSE null; S_k = 0; fully
// masked rows; twenty runs bit for bit equal; each registry entry by name; on Hopper the D128 sweep
// once more through the sm_80 kernel (the fallback the library picks for what TMA cannot load). The judge itself is
// checked against planted errors. The argument-error and registry tests need no GPU. Tests named
// *Small* are the compute-sanitizer subset (scripts/gpu-check.sh sanitize); each sweep prints how
// much of its bound the largest error used.
#include "gpu/gemm_test_support.hpp"  // DeviceMem
#include "gpu/gpu_test.hpp"

#include <tessel/attention/attention.hpp>
#include <tessel/reference/attention_device.hpp>
#include <tessel/reference/gemm_device.hpp>
#include <tessel/reference/numeric.hpp>
#include <tessel/runtime/device.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace tessel;

namespace {

// ---- problems ---------------------------------------------------------------------------------------

struct Heads {
  std::int64_t h, hkv;
  char const* name;
};
constexpr Heads kHeads[] = {{3, 3, "MHA"}, {6, 2, "GQA"}, {4, 1, "MQA"}};

struct Mask {
  char const* name;
  bool causal;
  MaskAlign align;
  std::int64_t left, right;
  float softcap;
  float scale;  // 0: 1 / sqrt(D)
};
constexpr MaskAlign kBr = MaskAlign::bottom_right, kTl = MaskAlign::top_left;
constexpr Mask kMasks[] = {
    {"none", false, kBr, -1, -1, 0.0f, 0.0f},
    {"causal", true, kBr, -1, -1, 0.0f, 0.0f},
    {"causal top-left", true, kTl, -1, -1, 0.0f, 0.0f},
    {"window (17,5)", false, kBr, 17, 5, 0.0f, 0.0f},
    {"window (-1,8)", false, kBr, -1, 8, 0.0f, 0.0f},
    {"window (32,-1)", false, kBr, 32, -1, 0.0f, 0.0f},
    {"softcap 30", false, kBr, -1, -1, 30.0f, 0.0f},
    {"softcap 30, scale 1", false, kBr, -1, -1, 30.0f, 1.0f},  // scores past the cap
    {"causal, window_left 64, softcap 30, top-left", true, kTl, 64, -1, 30.0f, 0.0f},
    {"sharp (scale 1)", false, kBr, -1, -1, 0.0f, 1.0f},  // a nearly one-hot softmax
    {"causal, negative scale -1", true, kBr, -1, -1, 0.0f, -1.0f},  // the softmax of -s: its max is s's minimum
};

struct Lengths {
  std::int64_t q, k;
};
constexpr Lengths kLengths[] = {{1, 1}, {1, 239}, {239, 1}, {113, 203}, {799, 3}, {1023, 1024}};

struct HeadDims {
  int d, dv;
};

void apply(AttentionArguments& a, Mask const& m) {
  a.causal = m.causal, a.align = m.align, a.window_left = m.left, a.window_right = m.right;
  a.softcap = m.softcap, a.softmax_scale = m.scale;
}

std::string describe(AttentionArguments const& a, char const* mask = nullptr) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s B%lld S_q %lld S_k %lld H %lld/%lld D %d/%d%s%s%s%s", to_string(a.dtype),
                (long long)a.batch, (long long)a.seqlen_q, (long long)a.seqlen_k, (long long)a.heads,
                (long long)a.kv_heads, a.head_dim, attention_head_dim_v(a), attention_is_varlen(a) ? " varlen" : "",
                a.lse ? "" : " no LSE", mask ? ", " : "", mask ? mask : "");
  return buf;
}

// Elements spanned by an operand of `batches` x `rows` x `heads` x `cols` with these strides
// (at least 1, so an empty operand still gets a buffer).
std::size_t span(std::int64_t batches, std::int64_t bs, std::int64_t rows, std::int64_t rs, std::int64_t heads,
                 std::int64_t hs, std::int64_t cols) {
  if (batches == 0 || rows == 0 || heads == 0 || cols == 0) return 1;
  return std::size_t((batches - 1) * bs + (rows - 1) * rs + (heads - 1) * hs + cols);
}

// The device buffers of one problem: Q, K, V random (Q in [-2, 2), K and V in [-1, 1)), O and LSE
// NaN. With `cu_q`/`cu_k` (host copies of cu_seqlens), the problem is variable-length.
struct Problem {
  AttentionArguments a;
  std::int64_t rows_total = 0, keys_total = 0;  // packed rows of Q / K
  std::size_t nq = 0, nk = 0, nv = 0, no = 0, nlse = 0;
  std::unique_ptr<DeviceMem> q, k, v, o, lse, cu_q, cu_k;

  Problem(AttentionArguments args, std::uint64_t seed, bool with_lse = true, std::vector<std::int32_t> const& cuq = {},
          std::vector<std::int32_t> const& cuk = {})
      : a(args) {
    bool const varlen = !cuq.empty();
    rows_total = varlen ? cuq.back() : a.batch * a.seqlen_q;
    keys_total = varlen ? cuk.back() : a.batch * a.seqlen_k;
    std::int64_t const bq = varlen ? 1 : a.batch, sq = varlen ? rows_total : a.seqlen_q;
    std::int64_t const sk = varlen ? keys_total : a.seqlen_k;
    int const dv = attention_head_dim_v(a);
    nq = span(bq, a.q.batch_stride, sq, a.q.row_stride, a.heads, a.q.head_stride, a.head_dim);
    nk = span(bq, a.k.batch_stride, sk, a.k.row_stride, a.kv_heads, a.k.head_stride, a.head_dim);
    nv = span(bq, a.v.batch_stride, sk, a.v.row_stride, a.kv_heads, a.v.head_stride, dv);
    no = span(bq, a.o_batch_stride, sq, a.o_row_stride, a.heads, a.o_head_stride, dv);
    nlse = span(bq, a.lse_batch_stride, a.heads, a.lse_head_stride, 1, 0, sq);
    std::size_t const eb = size_of(a.dtype);
    q = std::make_unique<DeviceMem>(nq * eb);
    k = std::make_unique<DeviceMem>(nk * eb);
    v = std::make_unique<DeviceMem>(nv * eb);
    o = std::make_unique<DeviceMem>(no * eb);
    lse = std::make_unique<DeviceMem>(nlse * sizeof(float));
    EXPECT_TRUE(q->p && k->p && v->p && o->p && lse->p) << "cudaMalloc failed";
    EXPECT_TRUE(reference::fill_uniform_device(q->p, a.dtype, std::int64_t(nq), seed * 4 + 1, -2.0f, 2.0f).ok());
    EXPECT_TRUE(reference::fill_uniform_device(k->p, a.dtype, std::int64_t(nk), seed * 4 + 2).ok());
    EXPECT_TRUE(reference::fill_uniform_device(v->p, a.dtype, std::int64_t(nv), seed * 4 + 3).ok());
    poison();
    a.q.ptr = q->p, a.k.ptr = k->p, a.v.ptr = v->p, a.o = o->p;
    a.lse = with_lse ? static_cast<float*>(lse->p) : nullptr;
    if (varlen) {
      cu_q = std::make_unique<DeviceMem>(cuq.size() * sizeof(std::int32_t));
      cu_k = std::make_unique<DeviceMem>(cuk.size() * sizeof(std::int32_t));
      EXPECT_EQ(cudaMemcpy(cu_q->p, cuq.data(), cuq.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(cu_k->p, cuk.data(), cuk.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
      a.cu_seqlens_q = static_cast<std::int32_t const*>(cu_q->p);
      a.cu_seqlens_k = static_cast<std::int32_t const*>(cu_k->p);
    }
  }

  // O and LSE (the whole buffers, gaps included) back to NaN.
  void poison() {
    EXPECT_TRUE(reference::fill_constant_device(o->p, a.dtype, std::int64_t(no), NAN).ok());
    EXPECT_TRUE(reference::fill_constant_device(lse->p, DType::f32, std::int64_t(nlse), NAN).ok());
  }

  // The whole O buffer as floats (gaps included).
  std::vector<float> o_host() const {
    std::vector<std::uint16_t> raw(no);
    EXPECT_EQ(cudaMemcpy(raw.data(), o->p, no * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> out(no);
    for (std::size_t i = 0; i < no; ++i)
      out[i] = a.dtype == DType::bf16 ? reference::bf16_to_float(raw[i]) : reference::f16_to_float(raw[i]);
    return out;
  }
  std::vector<float> lse_host() const {
    std::vector<float> out(nlse);
    EXPECT_EQ(cudaMemcpy(out.data(), lse->p, nlse * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

// The two references of a problem (fp32, packed as attention_device writes them).
struct References {
  std::unique_ptr<DeviceMem> o_exact, lse_exact, o_low, lse_low;
  explicit References(Problem const& p) {
    std::size_t const no = std::size_t(p.rows_total * p.a.heads * attention_head_dim_v(p.a)) + 1;
    std::size_t const nl = std::size_t(p.rows_total * p.a.heads) + 1;
    o_exact = std::make_unique<DeviceMem>(no * 4), o_low = std::make_unique<DeviceMem>(no * 4);
    lse_exact = std::make_unique<DeviceMem>(nl * 4), lse_low = std::make_unique<DeviceMem>(nl * 4);
    using reference::AttentionPrecision;
    Status s = reference::attention_device(p.a, AttentionPrecision::exact, f(o_exact), f(lse_exact));
    EXPECT_TRUE(s.ok()) << s.reason;
    s = reference::attention_device(p.a, AttentionPrecision::low, f(o_low), f(lse_low));
    EXPECT_TRUE(s.ok()) << s.reason;
  }
  static float* f(std::unique_ptr<DeviceMem> const& m) { return static_cast<float*>(m->p); }

  reference::AttentionCheck judge(AttentionArguments const& a) const {
    reference::AttentionCheck c;
    Status s = reference::check_attention(a, f(o_exact), f(lse_exact), f(o_low), f(lse_low), &c);
    EXPECT_TRUE(s.ok()) << s.reason;
    return c;
  }
};

// The largest share of its bound an error used, over the cases a test ran (for the log).
struct Margin {
  int cases = 0;
  double worst = 0;  // max over cases of max_err / bound, O and LSE
  std::string where;

  void add(reference::AttentionCheck const& c, std::string const& what) {
    ++cases;
    for (double r : {c.max_err_o / c.bound_o, c.bound_lse > 0 ? c.max_err_lse / c.bound_lse : 0.0})
      if (r > worst) worst = r, where = what;
  }
  void print(char const* test) const {
    std::printf("  %s: %d cases, the largest error is %.2f of its bound (%s)\n", test, cases, worst, where.c_str());
  }
};

// attention_forward on the problem, judged; false (with the failure recorded) when it fails.
bool run_and_check(Problem& p, std::string const& what, Margin* margin = nullptr) {
  Status s = attention_forward(p.a, nullptr);
  EXPECT_TRUE(s.ok()) << what << ": " << s.reason;
  if (!s.ok()) return false;
  cudaError_t const err = cudaDeviceSynchronize();
  EXPECT_EQ(err, cudaSuccess) << what << ": " << cudaGetErrorString(err);
  if (err != cudaSuccess) return false;
  References const refs(p);
  reference::AttentionCheck const c = refs.judge(p.a);
  EXPECT_TRUE(c.pass) << what << ": " << c.what << (c.nan ? " (NaN/inf where the reference is finite)" : "");
  if (margin) margin->add(c, what);
  return c.pass;
}

// cu_seqlens of these lengths: 0, l0, l0 + l1, ...
std::vector<std::int32_t> prefix_sums(std::vector<std::int32_t> const& lengths) {
  std::vector<std::int32_t> cu{0};
  for (std::int32_t l : lengths) cu.push_back(cu.back() + l);
  return cu;
}

AttentionArguments packed(DType t, std::int64_t b, Lengths len, Heads h, HeadDims hd) {
  return make_packed_attention(b, len.q, len.k, h.h, h.hkv, hd.d, hd.dv, t);
}

// The sweep of masks x lengths x head configurations for one head-dim pair; stops at the first
// failing case of each (mask, heads) so one bug does not print hundreds of lines.
// arch: "" for the library's choice, or "sm80" to run the sm_80 kernel by name (on Hopper the
// choice is the sm_90a kernel; the sm_80 one is its fallback).
void sweep(HeadDims hd, std::vector<Mask> const& masks, std::vector<Lengths> const& lengths, std::vector<Heads> const& heads,
           std::string const& arch = "") {
  std::uint64_t seed = 1;
  Margin margin;
  for (DType t : {DType::bf16, DType::f16})
    for (Heads const& h : heads)
      for (Mask const& m : masks)
        for (Lengths len : lengths) {
          AttentionArguments a = packed(t, 2, len, h, hd);
          apply(a, m);
          std::string kernel = arch + "_attention_" + (t == DType::bf16 ? "bf16" : "f16") + "_d" + std::to_string(hd.d);
          if (hd.dv != hd.d) kernel += 'x' + std::to_string(hd.dv);
          if (!arch.empty()) a.kernel = kernel.c_str();
          Problem p(a, seed++);
          if (!run_and_check(p, describe(p.a, m.name) + " (" + h.name + ")", &margin)) break;
        }
  std::string const name = "D " + std::to_string(hd.d) + "/" + std::to_string(hd.dv) + (arch.empty() ? "" : " " + arch);
  margin.print(name.c_str());
  if (!::testing::Test::HasFailure()) {
    EXPECT_EQ(margin.cases, int(2 * heads.size() * masks.size() * lengths.size())) << name << ": cases not run";
  }
}

}  // namespace

// ---- argument errors and the registry: no GPU needed ------------------------------------------------

TEST(AttentionApi, RefusesBadArgumentsBeforeAnyCudaCall) {
  alignas(16) static unsigned char fake[64];
  AttentionArguments a = make_packed_attention(2, 64, 64, 4, 2, 80);
  a.q.ptr = a.k.ptr = a.v.ptr = fake;
  a.o = fake;
  Status s = attention_forward(a);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_EQ(s.reason.rfind("head_dim:", 0), 0u) << s.reason;
  EXPECT_EQ(can_implement(a).code, StatusCode::invalid_argument);
  a = make_packed_attention(2, 64, 64, 4, 2, 128);
  a.q.ptr = a.k.ptr = a.v.ptr = fake;  // o null
  EXPECT_EQ(attention_forward(a).reason.rfind("o:", 0), 0u);
}

TEST(AttentionApi, NothingToWriteSucceedsWithoutTouchingAnything) {
  // Null pointers everywhere: nothing is read or written.
  for (AttentionArguments a : {make_packed_attention(0, 64, 64, 4, 2, 128), make_packed_attention(2, 0, 64, 4, 2, 128),
                               make_packed_attention(2, 64, 64, 0, 0, 128)}) {
    Status s = attention_forward(a);
    EXPECT_TRUE(s.ok()) << describe(a) << ": " << s.reason;
  }
}

TEST(AttentionApi, RegistryNamesAreNonEmptyAndUnique) {
  int const n = attention_kernel_count();
  ASSERT_GT(n, 0);
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    AttentionKernelInfo const k = attention_kernel_info(i);
    ASSERT_NE(k.name, nullptr) << "entry " << i;
    EXPECT_GT(std::strlen(k.name), 0u) << "entry " << i;
    EXPECT_TRUE(k.description != nullptr && k.description[0] != '\0') << k.name;
    EXPECT_GE(k.min_sm, 80) << k.name;
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate name " << k.name;
  }
}

TEST(AttentionApi, UnknownKernelNameIsRefused) {
  alignas(16) static unsigned char fake[64];
  AttentionArguments a = make_packed_attention(1, 64, 64, 4, 2, 128);
  a.q.ptr = a.k.ptr = a.v.ptr = fake;
  a.o = fake;
  a.kernel = "no_such_kernel";
  Status s = can_implement(a);
  if (s.code == StatusCode::no_device) GTEST_SKIP() << s.reason;
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code, StatusCode::cuda_error) << s.reason;
}

// ---- on the GPU ---------------------------------------------------------------------------------------

// A refused call leaves O and LSE as they were (and launches nothing).
TEST(AttentionApi, RefusedCallTouchesNoMemory) {
  TESSEL_REQUIRE_GPU();
  AttentionArguments a = make_packed_attention(2, 64, 64, 4, 2, 128);
  Problem p(a, 3);
  p.a.head_dim = 80, p.a.head_dim_v = 80;  // unsupported; the buffers are large enough either way
  EXPECT_EQ(attention_forward(p.a).code, StatusCode::invalid_argument);
  TESSEL_CUDA_OK(cudaDeviceSynchronize());
  for (float x : p.o_host()) ASSERT_TRUE(std::isnan(x)) << "O was written by a refused call";
  for (float x : p.lse_host()) ASSERT_TRUE(std::isnan(x)) << "LSE was written by a refused call";
}

TEST(AttentionApi, CanImplementEverySupportedHeadDimPair) {
  TESSEL_REQUIRE_GPU();
  alignas(16) static unsigned char fake[64];
  for (DType t : {DType::bf16, DType::f16})
    for (AttentionHeadDims hd : kAttentionHeadDims) {
      AttentionArguments a = make_packed_attention(1, 64, 64, 4, 2, hd.d, hd.d_v, t);
      a.q.ptr = a.k.ptr = a.v.ptr = fake;
      a.o = fake;
      Status s = can_implement(a);
      EXPECT_TRUE(s.ok()) << describe(a) << ": " << s.reason;
    }
}

// The judge cannot be fooled: the exact reference rounded to the dtype passes; one element off by
// a little more than the bound, a NaN, a finite LSE where every key is masked, each fail at their
// coordinate.
TEST(AttentionJudge, CatchesPlantedErrors) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16}) {
    AttentionArguments a = make_packed_attention(2, 300, 100, 4, 2, 64, 0, t);
    a.causal = true;  // bottom-right: rows 0..199 of each sequence see no key
    Problem p(a, 11);
    References const refs(p);
    // O and LSE from the exact reference: O rounded to t, LSE as is (moved to a's [B, H, S_q] layout).
    std::int64_t const rows = p.rows_total, sq = a.seqlen_q;
    std::size_t const no = std::size_t(rows * a.heads * 64), nl = std::size_t(rows * a.heads);
    std::vector<float> o(no), lse_ref(nl);
    TESSEL_CUDA_OK(cudaMemcpy(o.data(), refs.o_exact->p, no * 4, cudaMemcpyDeviceToHost));
    TESSEL_CUDA_OK(cudaMemcpy(lse_ref.data(), refs.lse_exact->p, nl * 4, cudaMemcpyDeviceToHost));
    std::vector<std::uint16_t> o_raw(no);
    for (std::size_t i = 0; i < no; ++i)
      o_raw[i] = t == DType::bf16 ? reference::float_to_bf16(o[i]) : reference::float_to_f16(o[i]);
    std::vector<float> lse(p.nlse, NAN);
    auto lse_index = [&](std::int64_t h, std::int64_t row) {
      return std::size_t((row / sq) * a.lse_batch_stride + h * a.lse_head_stride + row % sq);
    };
    for (std::int64_t h = 0; h < a.heads; ++h)
      for (std::int64_t row = 0; row < rows; ++row) lse[lse_index(h, row)] = lse_ref[std::size_t(h * rows + row)];
    auto upload = [&] {
      ASSERT_EQ(cudaMemcpy(p.o->p, o_raw.data(), no * 2, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(p.lse->p, lse.data(), p.nlse * 4, cudaMemcpyHostToDevice), cudaSuccess);
    };
    upload();
    reference::AttentionCheck c = refs.judge(p.a);
    EXPECT_TRUE(c.pass) << to_string(t) << ": the rounded exact reference fails: " << c.what;
    ASSERT_EQ(lse[lse_index(0, 0)], -INFINITY) << "row 0 of sequence 0 sees no key";
    ASSERT_NE(lse[lse_index(0, 250)], -INFINITY);

    // (row 250, head 1, col 7): packed O index, and its value pushed past the bound.
    std::size_t const at = (std::size_t(250) * 4 + 1) * 64 + 7;
    std::uint16_t const keep = o_raw[at];
    float const bumped = o[at] + float(2 * c.bound_o + 0.01);
    o_raw[at] = t == DType::bf16 ? reference::float_to_bf16(bumped) : reference::float_to_f16(bumped);
    upload();
    c = refs.judge(p.a);
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.bad_row, 250);
    EXPECT_EQ(c.bad_head, 1);
    EXPECT_EQ(c.bad_col, 7);
    EXPECT_FALSE(c.nan);
    o_raw[at] = t == DType::bf16 ? 0x7fc0 : 0x7e00;  // a quiet NaN
    upload();
    c = refs.judge(p.a);
    EXPECT_FALSE(c.pass);
    EXPECT_TRUE(c.nan) << c.what;
    EXPECT_EQ(c.bad_row, 250);
    o_raw[at] = keep;

    // A row that sees no key: O must stay 0 ...
    std::size_t const masked = (std::size_t(5) * 4 + 2) * 64 + 3;  // row 5, head 2, col 3
    o_raw[masked] = t == DType::bf16 ? reference::float_to_bf16(0.5f) : reference::float_to_f16(0.5f);
    upload();
    c = refs.judge(p.a);
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.bad_row, 5);
    EXPECT_EQ(c.bad_head, 2);
    o_raw[masked] = 0;
    // ... and its LSE -inf (head 3, packed row 310 = sequence 1, i 10).
    ASSERT_EQ(lse[lse_index(3, 310)], -INFINITY);
    lse[lse_index(3, 310)] = -1e30f;
    upload();
    c = refs.judge(p.a);
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.bad_row, 310);
    EXPECT_EQ(c.bad_head, 3);
    EXPECT_EQ(c.bad_col, -1);
    EXPECT_NE(std::string(c.what).find("LSE[b 1, h 3, i 10]"), std::string::npos) << c.what;
    lse[lse_index(3, 310)] = -INFINITY;
    // A finite row's LSE off by more than the bound.
    lse[lse_index(3, rows - 1)] += float(2 * c.bound_lse + 0.01);
    upload();
    c = refs.judge(p.a);
    EXPECT_FALSE(c.pass);
    EXPECT_EQ(c.bad_col, -1);
    EXPECT_EQ(c.bad_head, 3);
    EXPECT_EQ(c.bad_row, rows - 1);
  }
}

// ---- small ragged problems: the compute-sanitizer sweep (scripts/gpu-check.sh runs *Small*) --------

TEST(AttentionSmall, EveryHeadDimPairRagged) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16})
    for (AttentionHeadDims hd : kAttentionHeadDims) {
      AttentionArguments a = make_packed_attention(2, 65, 97, 4, 2, hd.d, hd.d_v, t);
      a.causal = true, a.window_left = 40;
      Problem p(a, 91);
      run_and_check(p, describe(p.a, "causal, window_left 40"));
    }
}

TEST(AttentionSmall, VariableLengthWithEmptySequences) {
  TESSEL_REQUIRE_GPU();
  std::vector<std::int32_t> const cu_q = prefix_sums({0, 17, 70, 1, 0}), cu_k = prefix_sums({3, 0, 70, 40, 0});
  for (DType t : {DType::bf16, DType::f16}) {
    AttentionArguments a = make_packed_attention(std::int64_t(cu_q.size()) - 1, 70, 70, 4, 2, 128, 0, t);
    a.lse_head_stride = cu_q.back();
    a.causal = true;
    Problem p(a, 93, true, cu_q, cu_k);
    run_and_check(p, describe(p.a, "causal"));
  }
}

// ---- the sweeps -----------------------------------------------------------------------------------------

// Every mask and length pair for D = 128 and 64, both dtypes, MHA, GQA and MQA.
TEST(AttentionSweep, MasksAndLengthsD128) {
  TESSEL_REQUIRE_GPU();
  sweep({128, 128}, {std::begin(kMasks), std::end(kMasks)}, {std::begin(kLengths), std::end(kLengths)},
        {std::begin(kHeads), std::end(kHeads)});
}

TEST(AttentionSweep, Sm80KernelMasksAndLengthsD128) {
  TESSEL_REQUIRE_GPU();
  sweep({128, 128}, {std::begin(kMasks), std::end(kMasks)}, {std::begin(kLengths), std::end(kLengths)},
        {std::begin(kHeads), std::end(kHeads)}, "sm80");
}

TEST(AttentionSweep, MasksAndLengthsD64) {
  TESSEL_REQUIRE_GPU();
  sweep({64, 64}, {std::begin(kMasks), std::end(kMasks)}, {std::begin(kLengths), std::end(kLengths)},
        {std::begin(kHeads), std::end(kHeads)});
}

// The other head dims: every mask and length pair, GQA and MQA.
TEST(AttentionSweep, OtherHeadDims) {
  TESSEL_REQUIRE_GPU();
  for (HeadDims hd : {HeadDims{96, 96}, HeadDims{192, 192}, HeadDims{256, 256}, HeadDims{192, 128}})
    sweep(hd, {std::begin(kMasks), std::end(kMasks)}, {std::begin(kLengths), std::end(kLengths)}, {kHeads[1], kHeads[2]});
}

TEST(AttentionLarge, Causal4224D128) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16}) {
    AttentionArguments a = make_packed_attention(1, 4224, 4224, 8, 2, 128, 0, t);
    a.causal = true;
    Problem p(a, 17);
    Margin margin;
    run_and_check(p, describe(p.a, "causal"), &margin);
    margin.print(to_string(t));
  }
}

// D = 64 runs 192-row tiles on three consumer warpgroups, each issuing GEMMs
// only for the key blocks its 64 rows see: ragged lengths leave the last tile with warpgroups whose
// rows lie past S_q, a causal mask gives the tile's warpgroups different last blocks, and a left
// window different first ones.
TEST(AttentionLarge, ThreeWarpgroupTilesD64) {
  TESSEL_REQUIRE_GPU();
  for (Lengths const len : {Lengths{1601, 1601}, Lengths{1537, 2000}, Lengths{2000, 1537}})
    for (Mask const& m : {kMasks[0], kMasks[1], kMasks[2], kMasks[3], kMasks[5], kMasks[8]}) {
      AttentionArguments a = make_packed_attention(1, len.q, len.k, 4, 2, 64, 0, DType::bf16);
      apply(a, m);
      Problem p(a, 23);
      run_and_check(p, describe(p.a, m.name));
    }
}

// The persistent kernels (the automatic choice without a mask; named here, under masks too) with
// more tiles than the GPU has SMs: a CTA walks several tiles, Q double buffered, the K/V ring and
// the ping-pong token carried from tile to tile. S_q > S_k under bottom-right masks leaves whole
// tiles without keys (O = 0 and LSE = -inf, no loads, no turns) between tiles with keys; windows
// give tiles different block counts; ragged lengths leave warpgroups of the last tile no rows; a
// softcap and a sharp softmax without a mask, as the automatic choice runs them.
TEST(AttentionLarge, ManyTilesPerCta) {
  TESSEL_REQUIRE_SM90();
  struct Kernel {
    char const* name;
    int d;
  };
  for (Kernel const k :
       {Kernel{"sm90_attention_bf16_d128_k128_persistent", 128}, Kernel{"sm90_attention_bf16_d64_persistent", 64}})
    for (Lengths const len : {Lengths{1100, 700}, Lengths{700, 1100}, Lengths{1023, 1024}})
      for (Mask const& m : {kMasks[0], kMasks[1], kMasks[2], kMasks[3], kMasks[5], kMasks[6], kMasks[9]}) {
        AttentionArguments a = make_packed_attention(2, len.q, len.k, 40, 8, k.d, 0, DType::bf16);
        apply(a, m);
        a.kernel = k.name;
        Problem p(a, 29);
        run_and_check(p, std::string(k.name) + ": " + describe(p.a, m.name));
      }
}

// Packed sequences of lengths {0, 17, 130, 1, 0, 257} (queries) against {3, 0, 130, 64, 0, 257}
// (keys): empty sequences on both sides, a sequence with queries and no keys (O = 0, LSE = -inf);
// every mask; padded rows for D = 192 x 128.
TEST(AttentionVarlen, EmptySequences) {
  TESSEL_REQUIRE_GPU();
  std::vector<std::int32_t> const cu_q = prefix_sums({0, 17, 130, 1, 0, 257}), cu_k = prefix_sums({3, 0, 130, 64, 0, 257});
  std::int64_t const b = std::int64_t(cu_q.size()) - 1;
  std::uint64_t seed = 100;
  Margin margin;
  for (DType t : {DType::bf16, DType::f16})
    for (HeadDims hd : {HeadDims{128, 128}, HeadDims{64, 64}, HeadDims{192, 128}})
      for (Mask const& m : kMasks) {
        // Packed Q [total_q, H, D]: make_packed_attention's row and head strides, batch strides unused.
        AttentionArguments a = make_packed_attention(b, 257, 257, 6, 2, hd.d, hd.dv, t);
        a.lse_head_stride = cu_q.back() + 3;  // LSE [H, total_q], rows padded
        if (hd.d != hd.dv) {                  // padded rows of Q, V and O
          a.q.row_stride += 16, a.v.row_stride += 8, a.o_row_stride += 8;
        }
        apply(a, m);
        Problem p(a, seed++, true, cu_q, cu_k);
        if (!run_and_check(p, describe(p.a, m.name), &margin)) break;
      }
  margin.print("variable length");
}

// Q, K and O in [B, H, S, D] memory order (head stride > row stride), V with padded rows, LSE with
// padded rows; nothing outside O's and LSE's elements is written.
TEST(AttentionLayouts, NonPackedStrides) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16})
    for (Mask const& m : {kMasks[0], kMasks[1], kMasks[4]}) {
      std::int64_t const b = 2, sq = 150, sk = 222, h = 6, hkv = 2;
      int const d = 128, dv = 128;
      AttentionArguments a = make_packed_attention(b, sq, sk, h, hkv, d, dv, t);
      a.q = {nullptr, h * sq * d, d, sq * d};
      a.k = {nullptr, hkv * sk * d, d, sk * d};
      a.v = {nullptr, sk * (hkv * dv + 24), hkv * dv + 24, dv};
      a.o_batch_stride = h * sq * (dv + 8), a.o_row_stride = dv + 8, a.o_head_stride = sq * (dv + 8);
      a.lse_head_stride = sq + 5, a.lse_batch_stride = h * (sq + 5) + 3;
      apply(a, m);
      Problem p(a, 31);
      if (!run_and_check(p, describe(p.a, m.name) + " [B,H,S,D] strides")) continue;
      // Every element outside O (the 8 padding columns of each row) and outside LSE is still NaN.
      std::vector<float> const o = p.o_host();
      std::vector<float> const lse = p.lse_host();
      std::int64_t written_o = 0, written_lse = 0;
      for (std::size_t i = 0; i < o.size(); ++i) written_o += !std::isnan(o[i]);
      for (std::size_t i = 0; i < lse.size(); ++i) written_lse += !std::isnan(lse[i]);
      EXPECT_EQ(written_o, b * sq * h * dv) << describe(p.a, m.name) << ": elements written outside O";
      for (std::int64_t bb = 0; bb < b; ++bb)
        for (std::int64_t hh = 0; hh < h; ++hh)
          for (std::int64_t i = 0; i < sq; ++i) {
            std::size_t const pad = std::size_t(bb * a.o_batch_stride + hh * a.o_head_stride + i * a.o_row_stride + dv);
            if (pad < o.size()) {
              ASSERT_TRUE(std::isnan(o[pad])) << "O's padding written at b " << bb << " h " << hh << " i " << i;
            }
          }
      EXPECT_EQ(written_lse, b * h * sq) << describe(p.a, m.name) << ": elements written outside LSE";
    }
}

TEST(AttentionLse, NullLseWritesOnlyO) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16})
    for (Mask const& m : {kMasks[0], kMasks[1]}) {
      AttentionArguments a = make_packed_attention(2, 113, 203, 6, 2, 128, 0, t);
      apply(a, m);
      Problem p(a, 41, /*with_lse=*/false);
      run_and_check(p, describe(p.a, m.name));
      for (float x : p.lse_host()) ASSERT_TRUE(std::isnan(x)) << "LSE written although a.lse is null";
    }
}

// S_k = 0: every row sees no key, O = 0 and LSE = -inf; K and V are not read (null).
TEST(AttentionEdge, NoKeysGivesZeroAndMinusInfinity) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16})
    for (HeadDims hd : {HeadDims{128, 128}, HeadDims{192, 128}}) {
      AttentionArguments a = make_packed_attention(2, 77, 0, 6, 2, hd.d, hd.dv, t);
      Problem p(a, 51);
      p.a.k.ptr = nullptr, p.a.v.ptr = nullptr;
      ASSERT_TRUE(run_and_check(p, describe(p.a, "S_k = 0")));
      for (float x : p.o_host()) ASSERT_EQ(x, 0.0f) << describe(p.a) << ": O must be 0 where no key is seen";
      for (float x : p.lse_host()) ASSERT_EQ(x, -INFINITY) << describe(p.a) << ": LSE must be -inf where no key is seen";
    }
}

// Rows that see no key although S_k > 0: causal bottom-right with S_q > S_k (the first S_q - S_k
// rows), and a top-left window (3, 3) with S_q > S_k + 3 (rows past S_k + 3).
TEST(AttentionEdge, FullyMaskedRowsGiveZeroAndMinusInfinity) {
  TESSEL_REQUIRE_GPU();
  struct Case {
    Mask mask;
    std::int64_t sq, sk;
    std::int64_t first_blind, last_blind;  // rows [first, last) see no key
  };
  Case const cases[] = {{kMasks[1], 300, 100, 0, 200},
                        {{"top-left window (3,3)", false, kTl, 3, 3, 0.0f, 0.0f}, 200, 64, 67, 200}};
  for (DType t : {DType::bf16, DType::f16})
    for (Case const& c : cases) {
      AttentionArguments a = make_packed_attention(2, c.sq, c.sk, 4, 2, 128, 0, t);
      apply(a, c.mask);
      Problem p(a, 61);
      run_and_check(p, describe(p.a, c.mask.name));
      std::vector<float> const o = p.o_host(), lse = p.lse_host();
      for (std::size_t i = 0; i < o.size(); ++i) ASSERT_FALSE(std::isnan(o[i])) << describe(p.a, c.mask.name) << ": NaN in O";
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t h = 0; h < 4; ++h)
          for (std::int64_t i = c.first_blind; i < c.last_blind; ++i) {
            ASSERT_EQ(lse[std::size_t(b * a.lse_batch_stride + h * a.lse_head_stride + i)], -INFINITY)
                << describe(p.a, c.mask.name) << ": b " << b << " h " << h << " i " << i;
            for (int col = 0; col < 128; ++col)
              ASSERT_EQ(o[std::size_t(b * a.o_batch_stride + i * a.o_row_stride + h * a.o_head_stride + col)], 0.0f)
                  << describe(p.a, c.mask.name) << ": b " << b << " h " << h << " i " << i << " d " << col;
          }
    }
}

// Twenty runs of one mid-size problem give the same O and LSE, bit for bit.
TEST(AttentionDeterminism, TwentyRunsBitForBit) {
  TESSEL_REQUIRE_GPU();
  for (DType t : {DType::bf16, DType::f16}) {
    AttentionArguments a = make_packed_attention(2, 1000, 1100, 6, 2, 128, 0, t);
    a.causal = true;
    Problem p(a, 71);
    ASSERT_TRUE(run_and_check(p, describe(p.a, "causal")));
    std::size_t const ob = p.no * size_of(t), lb = p.nlse * 4;
    std::vector<unsigned char> o0(ob), l0(lb), o1(ob), l1(lb);
    TESSEL_CUDA_OK(cudaMemcpy(o0.data(), p.o->p, ob, cudaMemcpyDeviceToHost));
    TESSEL_CUDA_OK(cudaMemcpy(l0.data(), p.lse->p, lb, cudaMemcpyDeviceToHost));
    for (int run = 1; run < 20; ++run) {
      p.poison();
      ASSERT_TRUE(attention_forward(p.a).ok());
      TESSEL_CUDA_OK(cudaMemcpy(o1.data(), p.o->p, ob, cudaMemcpyDeviceToHost));
      TESSEL_CUDA_OK(cudaMemcpy(l1.data(), p.lse->p, lb, cudaMemcpyDeviceToHost));
      ASSERT_EQ(std::memcmp(o0.data(), o1.data(), ob), 0) << to_string(t) << ": O differs in run " << run;
      ASSERT_EQ(std::memcmp(l0.data(), l1.data(), lb), 0) << to_string(t) << ": LSE differs in run " << run;
    }
  }
}

// Each registry entry by name (sm<NN>_attention_<dtype>_d<D>[x<D_v>][_...]) on a ragged GQA problem,
// where this GPU runs it.
TEST(AttentionApi, EveryRegistryEntryByName) {
  TESSEL_REQUIRE_GPU();
  std::optional<DeviceInfo> const dev = query_device(0);
  ASSERT_TRUE(dev.has_value());
  int const sm = dev->cc_major * 10 + dev->cc_minor;
  int ran = 0;
  for (int i = 0; i < attention_kernel_count(); ++i) {
    AttentionKernelInfo const k = attention_kernel_info(i);
    if (k.min_sm > sm) continue;
    int arch = 0, d = 0, dv = 0, used = 0;
    char dtype[8] = {};
    std::string const name = k.name;
    if (std::sscanf(name.c_str(), "sm%d_attention_%7[a-z0-9]_d%d%n", &arch, dtype, &d, &used) != 3) {
      ADD_FAILURE() << name << ": not of the form sm<NN>_attention_<dtype>_d<D>[x<D_v>]";
      continue;
    }
    dv = d;
    if (name.size() > std::size_t(used) && name[std::size_t(used)] == 'x') std::sscanf(name.c_str() + used + 1, "%d", &dv);
    std::optional<DType> const t = parse_dtype(dtype);
    ASSERT_TRUE(t.has_value()) << name;
    for (Mask const& m : {kMasks[0], kMasks[1], kMasks[3]}) {
      AttentionArguments a = make_packed_attention(2, 239, 203, 6, 2, d, dv, *t);
      apply(a, m);
      a.kernel = k.name;
      Problem p(a, 81 + std::uint64_t(i));
      run_and_check(p, name + ": " + describe(p.a, m.name));
    }
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no registry entry runs on sm_" << sm;
}
