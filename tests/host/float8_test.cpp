// float_e4m3_t and float_e5m2_t (tessel/numeric/float8.hpp) against references written
// differently: a decode from the OCP definition with std::ldexp in double, and an encoder that
// searches the sorted table of finite values for the nearest one (ties to the even code,
// saturating to the largest finite value). All 256 codes decode; every finite code round-trips;
// every midpoint between neighbours rounds to the even one and its float neighbours round away
// from it; overflow and infinities saturate; NaN is 0x7f; and a sweep over float bit patterns
// agrees with the brute-force encoder.
#include <tessel/numeric/float8.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace tessel;

namespace {

struct Spec {
  int exp_bits, man_bits, bias;
  bool ieee;  // top exponent = inf/NaN (e5m2); otherwise only S.1111.111 is NaN (e4m3)
};
constexpr Spec kE4M3{4, 3, 7, false};
constexpr Spec kE5M2{5, 2, 15, true};

// The OCP FP8 definition, in double.
double decode_ref(Spec s, int code) {
  int const sign = code >> 7, e = (code >> s.man_bits) & ((1 << s.exp_bits) - 1), m = code & ((1 << s.man_bits) - 1);
  double const sgn = sign ? -1.0 : 1.0;
  int const emax = (1 << s.exp_bits) - 1;
  if (s.ieee && e == emax) return m == 0 ? sgn * std::numeric_limits<double>::infinity() : std::nan("");
  if (!s.ieee && e == emax && m == (1 << s.man_bits) - 1) return std::nan("");
  double const frac = double(m) / double(1 << s.man_bits);
  if (e == 0) return sgn * std::ldexp(frac, 1 - s.bias);
  return sgn * std::ldexp(1.0 + frac, e - s.bias);
}

bool is_finite_code(Spec s, int code) { return std::isfinite(decode_ref(s, code)); }

// Nearest finite code to x by search: ties to the code with an even mantissa, beyond the largest
// finite value (or +-inf) saturate, NaN -> 0x7f, the sign of zero kept.
int encode_ref(Spec s, double x) {
  if (std::isnan(x)) return 0x7f;
  int const sign = std::signbit(x) ? 0x80 : 0;
  double const ax = std::fabs(x);
  std::vector<int> codes;  // non-negative finite codes, ascending in value
  for (int c = 0; c < 0x80; ++c)
    if (is_finite_code(s, c)) codes.push_back(c);
  int best = codes.front();
  for (int c : codes) {
    double const dc = std::fabs(decode_ref(s, c) - ax), db = std::fabs(decode_ref(s, best) - ax);
    if (dc < db || (dc == db && (c & 1) == 0)) best = c;
  }
  return sign | best;
}

template <class T>
Spec spec_of() {
  return std::is_same_v<T, float_e4m3_t> ? kE4M3 : kE5M2;
}

template <class T>
class Float8 : public ::testing::Test {};
using Types = ::testing::Types<float_e4m3_t, float_e5m2_t>;
TYPED_TEST_SUITE(Float8, Types);

}  // namespace

TYPED_TEST(Float8, EveryCodeDecodes) {
  Spec const s = spec_of<TypeParam>();
  int nans = 0, infs = 0;
  for (int c = 0; c < 256; ++c) {
    float const got = float(TypeParam::bitcast(std::uint8_t(c)));
    double const want = decode_ref(s, c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code 0x" << std::hex << c;
      ++nans;
      continue;
    }
    EXPECT_EQ(double(got), want) << "code 0x" << std::hex << c;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << "code 0x" << std::hex << c;
    infs += std::isinf(want);
  }
  EXPECT_EQ(nans, s.ieee ? 6 : 2);  // e5m2: 3 NaN mantissas per sign; e4m3: S.1111.111
  EXPECT_EQ(infs, s.ieee ? 2 : 0);
}

TEST(Float8, KnownValues) {
  EXPECT_EQ(float_e4m3_t(1.0f).raw(), 0x38);
  EXPECT_EQ(float_e5m2_t(1.0f).raw(), 0x3c);
  EXPECT_EQ(float(float_e4m3_t::bitcast(0x7e)), 448.0f);
  EXPECT_EQ(float(float_e5m2_t::bitcast(0x7b)), 57344.0f);
  EXPECT_EQ(float(float_e4m3_t::bitcast(0x01)), 0x1p-9f);
  EXPECT_EQ(float(float_e5m2_t::bitcast(0x01)), 0x1p-16f);
  EXPECT_EQ(float(float_e4m3_t::bitcast(0x08)), 0x1p-6f);  // smallest normal
  EXPECT_EQ(float(float_e5m2_t::bitcast(0x04)), 0x1p-14f);
  EXPECT_EQ(float(float_e5m2_t::bitcast(0x7c)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float(float_e5m2_t::bitcast(0xfc)), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(detail::Fp8E4M3::kMaxFinite, 0x7e);
  EXPECT_EQ(detail::Fp8E5M2::kMaxFinite, 0x7b);
  static_assert(float_e4m3_t(-2.0f).raw() == 0xc0, "conversions are constexpr");
  static_assert(sizeof(float_e4m3_t) == 1 && sizeof(float_e5m2_t) == 1, "one byte each");
}

TYPED_TEST(Float8, FiniteCodesRoundTrip) {
  Spec const s = spec_of<TypeParam>();
  for (int c = 0; c < 256; ++c) {
    if (!is_finite_code(s, c)) continue;
    TypeParam const x = TypeParam::bitcast(std::uint8_t(c));
    EXPECT_EQ(TypeParam(float(x)).raw(), c) << "code 0x" << std::hex << c;
    EXPECT_EQ(TypeParam(double(x)).raw(), c) << "code 0x" << std::hex << c;
  }
}

TYPED_TEST(Float8, MidpointsTieToEven) {
  Spec const s = spec_of<TypeParam>();
  for (int sign : {0, 0x80})
    for (int c = 0; c < 0x7f; ++c) {  // consecutive non-negative codes c, c + 1 are neighbours in value
      if (!is_finite_code(s, c) || !is_finite_code(s, c + 1)) continue;
      double const lo = decode_ref(s, c), hi = decode_ref(s, c + 1);
      float const mid = float((lo + hi) / 2);  // exact: one more bit than fp8 has
      ASSERT_EQ(double(mid), (lo + hi) / 2);
      float const smid = sign ? -mid : mid;
      int const even = (c & 1) == 0 ? c : c + 1;
      EXPECT_EQ(TypeParam(smid).raw(), sign | even) << "midpoint of 0x" << std::hex << c << " and 0x" << c + 1;
      float const below = std::nextafter(mid, 0.0f), above = std::nextafter(mid, 1e30f);
      EXPECT_EQ(TypeParam(sign ? -below : below).raw(), sign | c) << "just below the midpoint above 0x" << std::hex << c;
      EXPECT_EQ(TypeParam(sign ? -above : above).raw(), sign | (c + 1)) << "just above the midpoint above 0x" << std::hex << c;
    }
}

TYPED_TEST(Float8, SaturatesAndKeepsNaN) {
  Spec const s = spec_of<TypeParam>();
  std::uint8_t const max = TypeParam::format::kMaxFinite;
  double const maxv = decode_ref(s, max);
  float const inf = std::numeric_limits<float>::infinity();
  for (float v : {float(maxv) * 1.0625f, float(maxv) * 1.2f, float(maxv) * 2, 1e30f, std::numeric_limits<float>::max(), inf}) {
    EXPECT_EQ(TypeParam(v).raw(), max) << v;
    EXPECT_EQ(TypeParam(-v).raw(), 0x80 | max) << -v;
  }
  EXPECT_EQ(TypeParam(float(maxv)).raw(), max);
  float const qnan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(TypeParam(qnan).raw(), 0x7f);
  EXPECT_EQ(TypeParam(-qnan).raw(), 0x7f);
  EXPECT_EQ(TypeParam(std::bit_cast<float>(0x7f800001u)).raw(), 0x7f);  // signalling NaN
  EXPECT_TRUE(std::isnan(float(TypeParam(qnan))));
  EXPECT_TRUE(std::isnan(float(TypeParam(qnan) + TypeParam(1.0f))));
  // Zeros and underflow keep the sign.
  EXPECT_EQ(TypeParam(0.0f).raw(), 0x00);
  EXPECT_EQ(TypeParam(-0.0f).raw(), 0x80);
  EXPECT_EQ(TypeParam(1e-30f).raw(), 0x00);
  EXPECT_EQ(TypeParam(-1e-30f).raw(), 0x80);
  EXPECT_EQ(TypeParam(std::numeric_limits<float>::denorm_min()).raw(), 0x00);
  // Exactly half the smallest subnormal ties to 0 (even); just above it rounds up to the subnormal.
  float const half_min = float(decode_ref(s, 1) / 2);
  EXPECT_EQ(TypeParam(half_min).raw(), 0x00);
  EXPECT_EQ(TypeParam(std::nextafter(half_min, 1.0f)).raw(), 0x01);
}

TYPED_TEST(Float8, SweepAgreesWithTheSearchEncoder) {
  Spec const s = spec_of<TypeParam>();
  // Float bit patterns spread over every exponent (stride coprime to 2^32), plus every float in a
  // band around each fp8 value, from the encoder's table of exact answers.
  std::vector<std::pair<double, int>> table;  // sorted finite non-negative values and codes
  for (int c = 0; c < 0x80; ++c)
    if (is_finite_code(s, c)) table.push_back({decode_ref(s, c), c});
  std::sort(table.begin(), table.end());
  auto fast_ref = [&](float f) {  // encode_ref, by binary search on the sorted table
    if (std::isnan(f)) return 0x7f;
    int const sign = std::signbit(f) ? 0x80 : 0;
    double const a = std::fabs(double(f));
    auto it = std::lower_bound(table.begin(), table.end(), std::make_pair(a, -1));
    if (it == table.end()) return sign | table.back().second;
    if (it == table.begin()) return sign | it->second;
    auto lo = it - 1;
    double const dl = a - lo->first, dh = it->first - a;
    if (dl < dh) return sign | lo->second;
    if (dh < dl) return sign | it->second;
    return sign | ((lo->second & 1) == 0 ? lo->second : it->second);
  };
  for (float f : {0.3f, -7.7f, 100.0f, 1e-3f})  // the two references agree
    EXPECT_EQ(fast_ref(f), encode_ref(s, f)) << f;
  long long checked = 0;
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4093) {
    float const f = std::bit_cast<float>(std::uint32_t(u));
    ASSERT_EQ(TypeParam(f).raw(), fast_ref(f)) << "float bits 0x" << std::hex << u;
    ++checked;
  }
  for (auto const& [v, c] : table) {
    std::uint32_t const b = std::bit_cast<std::uint32_t>(float(v));
    for (std::uint32_t d = 0; d < 4096; ++d)
      for (std::uint32_t bits : {b + d * 512, b - d * 512, b | 0x80000000u})
        if ((bits & 0x7fffffffu) <= 0x7f800000u) {
          float const f = std::bit_cast<float>(bits);
          ASSERT_EQ(TypeParam(f).raw(), fast_ref(f)) << "float " << f;
          ++checked;
        }
  }
  EXPECT_GT(checked, 100000);
}

TEST(Float8, ArithmeticGoesThroughFloat) {
  float_e4m3_t const a(1.5f), b(2.0f);
  EXPECT_EQ(float(a * b), 3.0f);
  EXPECT_EQ(float(a + b), 3.5f);
  EXPECT_EQ(float(-a), -1.5f);
  EXPECT_EQ((-a).raw(), 0x80 | a.raw());
  EXPECT_TRUE(a < b);
  float_e5m2_t c(3.0f);
  c += float_e5m2_t(1.0f);
  EXPECT_EQ(float(c), 4.0f);
  EXPECT_EQ(float(float_e5m2_t(5.0f)), 5.0f);
  EXPECT_EQ(float(float_e5m2_t(4.5f)), 4.0f);  // 4, 5 are neighbours: the tie goes to 4 (even)
}
