// The attention-forward host API's argument rules (tessel/attention/attention_validate.hpp),
// checked without a GPU: every refusal with its StatusCode and a reason that starts with the
// argument's name; the accepted problems (every supported head-dim pair, both dtypes, MHA, GQA,
// MQA, variable length, zero lengths, any window); the no-op rule and the default softmax scale.
// The backward's rules (attention_backward_validate.hpp) too: the forward's on the problem, the
// same stride rules on dO, dQ, dK, dV, the pointers each length reads or writes, the workspace.
#include <tessel/attention/attention_arguments.hpp>
#include <tessel/attention/attention_backward_validate.hpp>
#include <tessel/attention/attention_validate.hpp>
#include <tessel/attention/kernel/attention_backward_params.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <limits>
#include <string>

using namespace tessel;

namespace {

// 16-byte aligned storage behind the dummy pointers (validation only: never dereferenced).
alignas(16) unsigned char g_storage[64];
void* dummy(int byte_offset = 0) { return g_storage + byte_offset; }
std::int32_t const* dummy_cu() { return reinterpret_cast<std::int32_t const*>(g_storage + 32); }

// A valid GQA problem (H = 4, H_kv = 2) with dummy pointers and LSE.
AttentionArguments valid(std::int64_t b = 2, std::int64_t sq = 33, std::int64_t sk = 65, int d = 128, int dv = 0,
                         DType t = DType::bf16) {
  AttentionArguments a = make_packed_attention(b, sq, sk, 4, 2, d, dv, t);
  a.q.ptr = a.k.ptr = a.v.ptr = dummy();
  a.o = dummy();
  a.lse = static_cast<float*>(dummy());
  return a;
}

AttentionArguments varlen(std::int64_t b = 3, std::int64_t max_sq = 40, std::int64_t max_sk = 50) {
  AttentionArguments a = valid(b, max_sq, max_sk);
  a.cu_seqlens_q = a.cu_seqlens_k = dummy_cu();
  return a;
}

void expect_ok(AttentionArguments const& a, std::string const& what = "") {
  Status s = attention_validate(a);
  EXPECT_TRUE(s.ok()) << what << ": " << s.reason;
}

void expect_refused(AttentionArguments const& a, std::string const& arg, std::string const& rule_words,
                    StatusCode code = StatusCode::invalid_argument) {
  Status s = attention_validate(a);
  ASSERT_FALSE(s.ok()) << "expected a refusal naming " << arg;
  EXPECT_EQ(s.code, code) << s.reason;
  EXPECT_EQ(s.reason.rfind(arg + ":", 0), 0u) << "reason must start with '" << arg << ":', got: " << s.reason;
  EXPECT_NE(s.reason.find(rule_words), std::string::npos) << "reason should say '" << rule_words << "': " << s.reason;
}

// The stride fields of Q, K, V and O by their argument names.
struct StrideField {
  char const* name;
  char const* what;  // the operand's letter in reasons
  std::int64_t& (*get)(AttentionArguments&);
  bool batch;
};
constexpr StrideField kStrides[] = {
    {"q.batch_stride", "Q", [](AttentionArguments& a) -> std::int64_t& { return a.q.batch_stride; }, true},
    {"q.row_stride", "Q", [](AttentionArguments& a) -> std::int64_t& { return a.q.row_stride; }, false},
    {"q.head_stride", "Q", [](AttentionArguments& a) -> std::int64_t& { return a.q.head_stride; }, false},
    {"k.batch_stride", "K", [](AttentionArguments& a) -> std::int64_t& { return a.k.batch_stride; }, true},
    {"k.row_stride", "K", [](AttentionArguments& a) -> std::int64_t& { return a.k.row_stride; }, false},
    {"k.head_stride", "K", [](AttentionArguments& a) -> std::int64_t& { return a.k.head_stride; }, false},
    {"v.batch_stride", "V", [](AttentionArguments& a) -> std::int64_t& { return a.v.batch_stride; }, true},
    {"v.row_stride", "V", [](AttentionArguments& a) -> std::int64_t& { return a.v.row_stride; }, false},
    {"v.head_stride", "V", [](AttentionArguments& a) -> std::int64_t& { return a.v.head_stride; }, false},
    {"o_batch_stride", "O", [](AttentionArguments& a) -> std::int64_t& { return a.o_batch_stride; }, true},
    {"o_row_stride", "O", [](AttentionArguments& a) -> std::int64_t& { return a.o_row_stride; }, false},
    {"o_head_stride", "O", [](AttentionArguments& a) -> std::int64_t& { return a.o_head_stride; }, false},
};

}  // namespace

// ---- accepted problems ----------------------------------------------------------------------------

TEST(AttentionValidate, AcceptsEverySupportedHeadDimPairInBothDtypes) {
  for (DType t : {DType::bf16, DType::f16})
    for (AttentionHeadDims hd : kAttentionHeadDims) {
      expect_ok(valid(2, 33, 65, hd.d, hd.d_v, t), std::to_string(hd.d) + "x" + std::to_string(hd.d_v));
      if (hd.d == hd.d_v) {  // head_dim_v 0 means head_dim
        AttentionArguments a = valid(2, 33, 65, hd.d, 0, t);
        a.head_dim_v = 0;
        expect_ok(a, std::to_string(hd.d) + " with head_dim_v 0");
      }
    }
  EXPECT_EQ(attention_head_dim_v(valid(1, 1, 1, 192, 128)), 128);
}

TEST(AttentionValidate, AcceptsMhaGqaAndMqa) {
  for (auto [h, hkv] : {std::pair<std::int64_t, std::int64_t>{4, 4}, {6, 2}, {32, 8}, {8, 1}, {1, 1}}) {
    AttentionArguments a = make_packed_attention(2, 17, 19, h, hkv, 64);
    a.q.ptr = a.k.ptr = a.v.ptr = dummy();
    a.o = dummy();
    expect_ok(a, "H " + std::to_string(h) + " H_kv " + std::to_string(hkv));
  }
}

TEST(AttentionValidate, AcceptsVariableLengthAndIgnoresItsBatchStrides) {
  expect_ok(varlen());
  AttentionArguments a = varlen();
  a.q.batch_stride = -3, a.k.batch_stride = 5, a.v.batch_stride = 1, a.o_batch_stride = -1, a.lse_batch_stride = -7;
  expect_ok(a, "batch strides are ignored with cu_seqlens");
  a = varlen(0, 40, 50);  // no sequences
  a.q.ptr = a.k.ptr = a.v.ptr = nullptr, a.o = nullptr;
  expect_ok(a, "B = 0, variable-length");
}

TEST(AttentionValidate, ZeroLengthsTouchNothingThatIsNull) {
  // B, H or S_q = 0: a no-op, every pointer may be null.
  for (int which = 0; which < 3; ++which) {
    AttentionArguments a = make_packed_attention(which == 0 ? 0 : 2, which == 1 ? 0 : 33, 65, which == 2 ? 0 : 4,
                                                 which == 2 ? 0 : 2, 128);
    EXPECT_TRUE(attention_is_noop(a));
    expect_ok(a, "no-op " + std::to_string(which));
  }
  // S_k = 0: O (and LSE) are written (O = 0, LSE = -inf) but Q, K, V are not read.
  AttentionArguments a = make_packed_attention(2, 33, 0, 4, 2, 128);
  a.o = dummy();
  EXPECT_FALSE(attention_is_noop(a));
  EXPECT_FALSE(attention_reads_qkv(a));
  expect_ok(a, "S_k = 0");
  a.o = nullptr;
  expect_refused(a, "o", "O is written");
}

TEST(AttentionValidate, AcceptsAnyWindowAndBothAlignments) {
  for (std::int64_t wl : {-1LL, -100LL, 0LL, 17LL, 1LL << 40})
    for (std::int64_t wr : {-1LL, -5LL, 0LL, 8LL, 1LL << 40})
      for (MaskAlign al : {MaskAlign::bottom_right, MaskAlign::top_left}) {
        AttentionArguments a = valid();
        a.window_left = wl, a.window_right = wr, a.align = al;
        expect_ok(a, "window " + std::to_string(wl) + "," + std::to_string(wr));
      }
  AttentionArguments a = valid();
  a.causal = true;
  for (std::int64_t wr : {-1LL, 0LL}) {
    a.window_right = wr;
    expect_ok(a, "causal with window_right " + std::to_string(wr));
  }
  a.window_left = 32;
  expect_ok(a, "causal with a left window");
}

TEST(AttentionValidate, AcceptsAnyFiniteScaleAndNonNegativeSoftcap) {
  for (float s : {0.0f, 0.125f, -0.5f, 1e-30f, 1e30f}) {
    AttentionArguments a = valid();
    a.softmax_scale = s;
    expect_ok(a, "softmax_scale");
  }
  for (float c : {0.0f, 30.0f, 1e-3f}) {
    AttentionArguments a = valid();
    a.softcap = c;
    expect_ok(a, "softcap");
  }
}

TEST(AttentionValidate, AcceptsNonPackedStridesAndNullLse) {
  // Q as [B, H, S, D] in memory: head_stride > row_stride.
  AttentionArguments a = valid(2, 33, 65, 128);
  a.q.head_stride = 33 * 128, a.q.row_stride = 128, a.q.batch_stride = 4 * 33 * 128;
  a.o_row_stride = 4 * 128 + 64;  // padded rows
  a.lse = nullptr;
  a.lse_head_stride = 0, a.lse_batch_stride = 0;
  expect_ok(a);
  a.k.batch_stride = 0, a.v.batch_stride = 0;  // every batch reads the same K and V
  expect_ok(a, "broadcast K and V");
}

// ---- refusals -------------------------------------------------------------------------------------

TEST(AttentionValidate, NegativeSizes) {
  struct Case {
    char const* name;
    std::int64_t AttentionArguments::*field;
  };
  for (Case c : {Case{"batch", &AttentionArguments::batch}, Case{"seqlen_q", &AttentionArguments::seqlen_q},
                 Case{"seqlen_k", &AttentionArguments::seqlen_k}, Case{"heads", &AttentionArguments::heads},
                 Case{"kv_heads", &AttentionArguments::kv_heads}}) {
    AttentionArguments a = valid();
    a.*c.field = -1;
    expect_refused(a, c.name, "is negative");
  }
}

TEST(AttentionValidate, SequencesAbove2To31AreNotSupported) {
  for (bool q : {true, false}) {
    AttentionArguments a = make_packed_attention(1, q ? (1LL << 31) : 16, q ? 16 : (1LL << 31), 1, 1, 64);
    a.q.ptr = a.k.ptr = a.v.ptr = dummy();
    a.o = dummy();
    expect_refused(a, q ? "seqlen_q" : "seqlen_k", "2^31 - 1", StatusCode::not_supported);
  }
  AttentionArguments a = make_packed_attention(1, (1LL << 31) - 1, 16, 1, 1, 64);
  a.q.ptr = a.k.ptr = a.v.ptr = dummy();
  a.o = dummy();
  expect_ok(a, "S_q = 2^31 - 1");
}

TEST(AttentionValidate, HeadsMustBeAMultipleOfKvHeads) {
  AttentionArguments a = valid();
  a.heads = 6, a.kv_heads = 4;
  expect_refused(a, "heads", "not a multiple of kv_heads 4");
  a.heads = 2, a.kv_heads = 4;  // more key/value heads than query heads
  expect_refused(a, "heads", "not a multiple of kv_heads 4");
  a.heads = 4, a.kv_heads = 0;
  expect_refused(a, "kv_heads", "0 with heads 4");
}

TEST(AttentionValidate, DtypeMustBeBf16OrFp16) {
  for (DType t : {DType::f32, DType::tf32, DType::e4m3, DType::e5m2}) {
    AttentionArguments a = valid();
    a.dtype = t;
    expect_refused(a, "dtype", "bf16 or fp16");
  }
}

TEST(AttentionValidate, UnsupportedHeadDims) {
  for (int d : {80, 32, 0, -64, 160, 512}) {
    AttentionArguments a = valid();
    a.head_dim = d, a.head_dim_v = 0;
    expect_refused(a, "head_dim", "(192,128)");
  }
  AttentionArguments a = valid();
  a.head_dim = 80;
  expect_refused(a, "head_dim", "80 is not supported; head dims (D, D_v) are (64,64), (96,96), (128,128), (192,192), "
                                "(256,256) and (192,128)");
  for (auto [d, dv] : {std::pair{128, 64}, {192, 256}, {64, 128}, {256, 128}, {192, -1}}) {
    a = valid(2, 33, 65, d, dv);
    expect_refused(a, "head_dim_v", "with head_dim " + std::to_string(d) + " is not supported");
  }
}

TEST(AttentionValidate, NegativeStrides) {
  for (StrideField const& f : kStrides) {
    AttentionArguments a = valid();
    f.get(a) = -8;
    expect_refused(a, f.name, "is negative");
  }
  AttentionArguments a = valid();
  a.lse_batch_stride = -1;
  expect_refused(a, "lse_batch_stride", "is negative");
  a = valid();
  a.lse_head_stride = -1;
  expect_refused(a, "lse_head_stride", "is negative");
}

TEST(AttentionValidate, StridesMustKeepRows16ByteAligned) {
  for (DType t : {DType::bf16, DType::f16})
    for (StrideField const& f : kStrides)
      for (std::int64_t s : {1LL, 4LL, 100LL, 4 * 128 + 2LL}) {
        AttentionArguments a = valid(2, 33, 65, 128, 0, t);
        f.get(a) = s;
        expect_refused(a, f.name,
                       std::to_string(s) + " is not a multiple of 8 elements (16 bytes); rows of " + f.what +
                           " must be 16-byte aligned");
      }
  AttentionArguments a = valid();
  a.q.row_stride = 100;
  EXPECT_EQ(attention_validate(a).reason,
            "q.row_stride: 100 is not a multiple of 8 elements (16 bytes); rows of Q must be 16-byte aligned");
}

TEST(AttentionValidate, PointersMustBe16ByteAligned) {
  struct Case {
    char const* name;
    void (*set)(AttentionArguments&, void*);
  };
  for (Case c : {Case{"q", [](AttentionArguments& a, void* p) { a.q.ptr = p; }},
                 Case{"k", [](AttentionArguments& a, void* p) { a.k.ptr = p; }},
                 Case{"v", [](AttentionArguments& a, void* p) { a.v.ptr = p; }},
                 Case{"o", [](AttentionArguments& a, void* p) { a.o = p; }}})
    for (int off : {2, 8}) {
      AttentionArguments a = valid();
      c.set(a, dummy(off));
      expect_refused(a, c.name, "not 16-byte aligned");
    }
  AttentionArguments a = valid();
  a.lse = reinterpret_cast<float*>(dummy(2));
  expect_refused(a, "lse", "not 4-byte aligned");
  a.lse = reinterpret_cast<float*>(dummy(4));  // fp32 LSE needs only 4 bytes
  expect_ok(a);
}

TEST(AttentionValidate, NullPointersThatAreReadOrWritten) {
  struct Case {
    char const* name;
    void (*clear)(AttentionArguments&);
    char const* words;
  };
  for (Case c : {Case{"q", [](AttentionArguments& a) { a.q.ptr = nullptr; }, "Q is read"},
                 Case{"k", [](AttentionArguments& a) { a.k.ptr = nullptr; }, "K is read"},
                 Case{"v", [](AttentionArguments& a) { a.v.ptr = nullptr; }, "V is read"},
                 Case{"o", [](AttentionArguments& a) { a.o = nullptr; }, "O is written"}}) {
    AttentionArguments a = valid();
    c.clear(a);
    expect_refused(a, c.name, c.words);
    a = varlen();
    c.clear(a);
    expect_refused(a, c.name, c.words);
  }
  AttentionArguments a = valid();
  a.lse = nullptr;  // LSE is optional
  expect_ok(a);
}

TEST(AttentionValidate, SoftmaxScaleMustBeFinite) {
  for (float s : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()}) {
    AttentionArguments a = valid();
    a.softmax_scale = s;
    expect_refused(a, "softmax_scale", "is not finite");
  }
}

TEST(AttentionValidate, SoftcapMustBeFiniteAndNonNegative) {
  for (float c : {-1.0f, -0.0001f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    AttentionArguments a = valid();
    a.softcap = c;
    expect_refused(a, "softcap", "not a finite value >= 0");
  }
}

TEST(AttentionValidate, CausalWithARightWindowIsContradictory) {
  AttentionArguments a = valid();
  a.causal = true, a.window_right = 8;
  expect_refused(a, "window_right", "causal is window_right = 0");
  EXPECT_EQ(attention_window_right(valid()), -1);
  a.window_right = 0;
  EXPECT_EQ(attention_window_right(a), 0);
}

TEST(AttentionValidate, AlignMustBeAnEnumerator) {
  AttentionArguments a = valid();
  a.align = static_cast<MaskAlign>(7);
  expect_refused(a, "align", "neither bottom_right nor top_left");
}

TEST(AttentionValidate, CuSeqlensBothOrNeither) {
  AttentionArguments a = valid();
  a.cu_seqlens_q = dummy_cu();
  expect_refused(a, "cu_seqlens_k", "null while cu_seqlens_q is set; pass both or neither");
  a = valid();
  a.cu_seqlens_k = dummy_cu();
  expect_refused(a, "cu_seqlens_q", "null while cu_seqlens_k is set; pass both or neither");
}

TEST(AttentionValidate, OffsetsThatOverflow64Bits) {
  for (StrideField const& f : kStrides) {
    AttentionArguments a = valid();
    f.get(a) = std::int64_t(1) << 62;  // element offsets overflow (row, head) or byte offsets do (batch: B = 2)
    expect_refused(a, std::string(f.name).substr(0, 1), "overflows 64 bits");
  }
  AttentionArguments a = valid();
  a.lse_head_stride = std::int64_t(1) << 62;
  expect_refused(a, "lse", "overflows 64 bits");
  a = valid();
  a.lse = nullptr;  // no LSE written: its strides are not used
  a.lse_head_stride = std::int64_t(1) << 62;
  expect_ok(a);
  // Variable length: the packed row dimension holds up to B * S_q rows.
  a = varlen(std::int64_t(1) << 40, 1LL << 30, 16);
  expect_refused(a, "q", "overflows 64 bits");
  a = varlen(std::int64_t(1) << 20, 1LL << 10, 16);
  expect_ok(a, "2^30 packed rows");
}

// ---- helpers --------------------------------------------------------------------------------------

TEST(AttentionValidate, NoopAndDefaultScale) {
  constexpr AttentionArguments zero_b = [] {
    AttentionArguments a;
    a.batch = 0;
    return a;
  }();
  static_assert(attention_is_noop(zero_b), "B = 0 writes nothing");
  EXPECT_TRUE(attention_is_noop(make_packed_attention(0, 5, 5, 1, 1, 64)));
  EXPECT_TRUE(attention_is_noop(make_packed_attention(3, 0, 5, 1, 1, 64)));
  EXPECT_TRUE(attention_is_noop(make_packed_attention(3, 5, 5, 0, 0, 64)));
  EXPECT_FALSE(attention_is_noop(make_packed_attention(3, 5, 0, 1, 1, 64)));  // S_k = 0 still writes O and LSE

  AttentionArguments a = valid(1, 1, 1, 128);
  EXPECT_FLOAT_EQ(attention_softmax_scale(a), 1.0f / std::sqrt(128.0f));
  a = valid(1, 1, 1, 192, 128);
  EXPECT_FLOAT_EQ(attention_softmax_scale(a), 1.0f / std::sqrt(192.0f));  // D of Q and K, not D_v
  a.softmax_scale = 0.25f;
  EXPECT_EQ(attention_softmax_scale(a), 0.25f);
  a.softmax_scale = -2.0f;
  EXPECT_EQ(attention_softmax_scale(a), -2.0f);
}

TEST(AttentionValidate, PackedProblemStrides) {
  AttentionArguments a = make_packed_attention(2, 33, 65, 6, 2, 192, 128, DType::f16);
  EXPECT_EQ(a.q.row_stride, 6 * 192);
  EXPECT_EQ(a.q.batch_stride, 33 * 6 * 192);
  EXPECT_EQ(a.k.row_stride, 2 * 192);
  EXPECT_EQ(a.v.row_stride, 2 * 128);
  EXPECT_EQ(a.v.head_stride, 128);
  EXPECT_EQ(a.o_row_stride, 6 * 128);
  EXPECT_EQ(a.o_batch_stride, 33 * 6 * 128);
  EXPECT_EQ(a.lse_batch_stride, 6 * 33);
  EXPECT_EQ(a.lse_head_stride, 33);
}

// ---- the backward ----------------------------------------------------------------------------------

namespace {

AttentionBackwardArguments valid_backward(std::int64_t b = 2, std::int64_t sq = 33, std::int64_t sk = 65, int d = 128,
                                          int dv = 0) {
  AttentionBackwardArguments g = make_packed_attention_backward(valid(b, sq, sk, d, dv));
  g.d_o.ptr = dummy(), g.dq.ptr = dummy(), g.dk.ptr = dummy(), g.dv.ptr = dummy();
  return g;
}

void expect_backward_refused(AttentionBackwardArguments const& g, std::string const& arg, std::string const& rule_words) {
  Status s = attention_backward_validate(g);
  ASSERT_FALSE(s.ok()) << "expected a refusal naming " << arg;
  EXPECT_EQ(s.code, StatusCode::invalid_argument) << s.reason;
  EXPECT_EQ(s.reason.rfind(arg + ":", 0), 0u) << "reason must start with '" << arg << ":', got: " << s.reason;
  EXPECT_NE(s.reason.find(rule_words), std::string::npos) << "reason should say '" << rule_words << "': " << s.reason;
}

}  // namespace

TEST(AttentionBackwardValidate, AcceptsEveryHeadDimPairAndVarlen) {
  for (auto const& h : kAttentionHeadDims) {
    Status s = attention_backward_validate(valid_backward(2, 33, 65, h.d, h.d_v));
    EXPECT_TRUE(s.ok()) << h.d << "/" << h.d_v << ": " << s.reason;
  }
  AttentionBackwardArguments g = valid_backward();
  g.problem.cu_seqlens_q = g.problem.cu_seqlens_k = dummy_cu();
  EXPECT_TRUE(attention_backward_validate(g).ok());
}

TEST(AttentionBackwardValidate, SharesTheForwardsRules) {
  AttentionBackwardArguments g = valid_backward();
  g.problem.heads = 3;
  expect_backward_refused(g, "heads", "multiple of kv_heads");
  g = valid_backward(2, 33, 65, 80);
  expect_backward_refused(g, "head_dim", "not supported");
  g = valid_backward();
  g.problem.q.row_stride = 12;
  expect_backward_refused(g, "q.row_stride", "multiple of 8");
  g = valid_backward();
  g.problem.softcap = -1.0f;
  expect_backward_refused(g, "softcap", "finite value >= 0");
}

TEST(AttentionBackwardValidate, GradientStridesAndAlignment) {
  AttentionBackwardArguments g = valid_backward();
  g.d_o.row_stride = 4;
  expect_backward_refused(g, "d_o.row_stride", "multiple of 8");
  g = valid_backward();
  g.dq.head_stride = -8;
  expect_backward_refused(g, "dq.head_stride", "negative");
  g = valid_backward();
  g.dk.batch_stride = 9;
  expect_backward_refused(g, "dk.batch_stride", "multiple of 8");
  g = valid_backward();
  g.dv.ptr = dummy(2);
  expect_backward_refused(g, "dv", "16-byte aligned");
  g = valid_backward();
  g.dq.row_stride = std::int64_t(1) << 62;
  expect_backward_refused(g, "dq", "overflows 64 bits");
}

TEST(AttentionBackwardValidate, NullPointersByWhatEachLengthReads) {
  struct Case {
    char const* arg;
    void (*clear)(AttentionBackwardArguments&);
  };
  Case const cases[] = {
      {"problem.q", [](AttentionBackwardArguments& g) { g.problem.q.ptr = nullptr; }},
      {"problem.k", [](AttentionBackwardArguments& g) { g.problem.k.ptr = nullptr; }},
      {"problem.v", [](AttentionBackwardArguments& g) { g.problem.v.ptr = nullptr; }},
      {"problem.o", [](AttentionBackwardArguments& g) { g.problem.o = nullptr; }},
      {"problem.lse", [](AttentionBackwardArguments& g) { g.problem.lse = nullptr; }},
      {"d_o", [](AttentionBackwardArguments& g) { g.d_o.ptr = nullptr; }},
      {"dq", [](AttentionBackwardArguments& g) { g.dq.ptr = nullptr; }},
      {"dk", [](AttentionBackwardArguments& g) { g.dk.ptr = nullptr; }},
      {"dv", [](AttentionBackwardArguments& g) { g.dv.ptr = nullptr; }},
  };
  for (Case const& c : cases) {
    AttentionBackwardArguments g = valid_backward();
    c.clear(g);
    expect_backward_refused(g, c.arg, "null");
  }
  // S_k = 0: only dQ is written (zeros); nothing else is needed.
  AttentionBackwardArguments g = make_packed_attention_backward(make_packed_attention(2, 5, 0, 4, 2, 64));
  g.dq.ptr = dummy();
  EXPECT_TRUE(attention_backward_validate(g).ok()) << attention_backward_validate(g).reason;
  g.dq.ptr = nullptr;
  expect_backward_refused(g, "dq", "written");
  // S_q = 0: only dK and dV are written.
  g = make_packed_attention_backward(make_packed_attention(2, 0, 5, 4, 2, 64));
  g.dk.ptr = g.dv.ptr = dummy();
  EXPECT_TRUE(attention_backward_validate(g).ok()) << attention_backward_validate(g).reason;
  // B = 0: nothing at all.
  EXPECT_TRUE(attention_backward_is_noop(make_packed_attention(0, 5, 5, 4, 2, 64)));
  EXPECT_TRUE(attention_backward_validate(make_packed_attention_backward(make_packed_attention(0, 5, 5, 4, 2, 64))).ok());
}

TEST(AttentionBackwardValidate, StatRowIndex) {
  // [H, B, S_q'] with S_q' = 64 for S_q = 33, B = 2: head 3, batch 1, row 5 is 3 * 128 + 64 + 5.
  tessel::kernel::AttentionBackwardParams p{};
  p.stat_seqlen = 64;
  p.stat_rows = 2 * 64;
  EXPECT_EQ(tessel::kernel::attention_bwd_stat_row(p, 1, 3, 999, 5), 3 * 128 + 64 + 5);
  EXPECT_EQ(tessel::kernel::attention_bwd_stat_row(p, 0, 0, 999, 63), 63);
  // Variable lengths: rows packed, the sequence's first row given (cu_seqlens_q[b]); the batch
  // index is not used.
  int const cu[3] = {0, 7, 20};
  p.fwd.cu_seqlens_q = cu;
  p.stat_rows = 20;
  EXPECT_EQ(tessel::kernel::attention_bwd_stat_row(p, 1, 2, 7, 4), 2 * 20 + 7 + 4);
}

TEST(AttentionBackwardValidate, Workspace) {
  AttentionBackwardArguments g = valid_backward(2, 33, 65, 128);
  // B = 2, S_q = 33 (64 rows a sequence in the row statistics), H = 4: two fp32 [H, B, 64] parts
  // (2048 B each) and dQ's fp32 [B * S_q, H, 128].
  EXPECT_EQ(attention_backward_stat_seqlen(g.problem), 64);
  AttentionBackwardWorkspace const w = attention_backward_workspace_layout(g.problem, false);
  EXPECT_EQ(w.dsum, 2048u);
  EXPECT_EQ(w.dq_accum, 4096u);
  EXPECT_EQ(w.bytes, 4096u + 66u * 4 * 128 * 4);
  // Deterministic at head dims (128, 128) and (64, 64) (the sm_90a kernel's:
  // attention_backward_ordered_dq): the accumulator too, then the turns, one unsigned per (head,
  // batch, 64 rows) = 4 x 2 x 1, in 256 bytes.
  AttentionBackwardWorkspace const ordered = attention_backward_workspace_layout(g.problem, true);
  EXPECT_EQ(ordered.dq_turns, w.bytes);
  EXPECT_EQ(ordered.bytes, w.bytes + 256u);
  EXPECT_EQ(attention_backward_workspace_layout(valid_backward(2, 33, 65, 64).problem, true).bytes, 4096u + 66u * 4 * 64 * 4 + 256u);
  // At other head dims the row statistics alone (the sm_80 dQ kernel writes dQ).
  EXPECT_EQ(attention_backward_workspace_layout(valid_backward(2, 33, 65, 96).problem, true).bytes, 4096u);
  // 65 rows take two blocks of 64 rows, 64 exactly one.
  EXPECT_EQ(attention_backward_stat_seqlen(make_packed_attention(2, 65, 5, 4, 2, 64)), 128);
  EXPECT_EQ(attention_backward_stat_seqlen(make_packed_attention(2, 64, 5, 4, 2, 64)), 64);
  EXPECT_EQ(attention_backward_workspace_layout(make_packed_attention(2, 0, 5, 4, 2, 64), false).bytes, 0u);
  alignas(256) static unsigned char ws[512];
  g.workspace = ws + 16;
  g.workspace_bytes = w.bytes;
  expect_backward_refused(g, "workspace", "256-byte aligned");
  g.workspace = ws;
  g.workspace_bytes = w.bytes - 1;
  expect_backward_refused(g, "workspace_bytes", "less than");
  g.workspace_bytes = w.bytes;
  EXPECT_TRUE(attention_backward_validate(g).ok());
}
