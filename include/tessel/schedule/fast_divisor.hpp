// tessel/schedule/fast_divisor.hpp -- unsigned division by a divisor fixed on the host, as one
// multiply-high, one add and one shift on the GPU (a 32-bit `/` there is ~17 dependent
// instructions through the floating-point reciprocal; a kernel's first tile waits for a few).
//
// For a divisor d >= 1 let l = ceil(log2 d) and m = ceil(2^(32+l) / d), which lies in
// [2^32, 2^33); the divisor keeps m - 2^32 and l. For 0 <= n < 2^31:
//
//   n / d = (umulhi(n, m - 2^32) + n) >> l
//
// Why it is exact: write m = (2^(32+l) + e) / d with 0 <= e < d, and n = q d + r with r < d. Then
// n m / 2^(32+l) = q + r / d + n e / (d 2^(32+l)), and n e < 2^32 2^l, so the last term is below
// 1 / d: the sum stays below q + 1 and its floor is q. floor(n m / 2^32) is n + umulhi(n, m - 2^32),
// below 2n, which fits 32 bits for n < 2^31.
//
//   e.g. d = 6: l = 3, m = ceil(2^35 / 6) = 5726623062 = 2^32 + 1431655766;
//        n = 100: umulhi(100, 1431655766) = 33, (33 + 100) >> 3 = 16 = 100 / 6.
#pragma once

#include <tessel/config.hpp>
#include <tessel/schedule/schedule_error.hpp>

#include <cstdint>

namespace tessel {

class FastDivisor32 {
 public:
  FastDivisor32() = default;  // divides by 1

  // Pre: 1 <= d < 2^31 (checked: ScheduleError).
  static constexpr FastDivisor32 make(long long d) {
    detail::schedule_require(d >= 1 && d <= 0x7fffffffLL, "FastDivisor32: divisor ", d, " must be in [1, 2^31)");
    FastDivisor32 f;
    f.divisor_ = static_cast<std::uint32_t>(d);
    int l = 0;
    while ((1LL << l) < d) ++l;
    std::uint64_t const m = ((std::uint64_t(1) << (32 + l)) + std::uint64_t(d) - 1) / std::uint64_t(d);
    f.low_ = static_cast<std::uint32_t>(m - (std::uint64_t(1) << 32));
    f.shift_ = l;
    return f;
  }

  TESSEL_HOST_DEVICE constexpr std::uint32_t divisor() const { return divisor_; }

  // n / divisor(). Pre: n < 2^31.
  TESSEL_HOST_DEVICE constexpr std::uint32_t div(std::uint32_t n) const {
    std::uint32_t const hi = static_cast<std::uint32_t>((std::uint64_t(n) * low_) >> 32);
    return (hi + n) >> shift_;
  }

 private:
  std::uint32_t divisor_ = 1;
  std::uint32_t low_ = 0;  // m - 2^32
  int shift_ = 0;          // l
};

}  // namespace tessel
