#pragma once
// The histograms behind every percentile the benchmark tools report (spinwise-stress,
// spinwise-sqlite-bench): no stored samples however long a run is; one per thread, merged at the
// end.
//   - latency_histogram: integers (counter ticks), exact below 64, then 32 buckets per power of
//     two (values within 3.2%);
//   - ratio_histogram: positive ratios (an achieved delay over the requested one), 128 buckets per
//     power of two from 1/256 to 512 (within 0.8%), filed by the double's exponent and top
//     mantissa bits, so recording one costs no logarithm.

#include <array>
#include <cstdint>
#include <cstring>

namespace spinwise::bench {

class latency_histogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr std::uint64_t kExact = 2u << kSubBits;  // 64: values below are their own bucket
  static constexpr std::size_t kBuckets = kExact + (64 - kSubBits - 1) * (1u << kSubBits);

  void record(std::uint64_t v) noexcept {
    ++counts_[index(v)];
    ++count_;
    sum_ += v;
    if (v > max_) max_ = v;
    if (v < min_) min_ = v;
  }
  void merge(const latency_histogram& o) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  double mean() const noexcept {
    return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
  }
  // The smallest bucket bound with at least p% of the values at or below it (0 when empty);
  // never above max(). p = 100 gives max().
  std::uint64_t percentile(double p) const noexcept;

  static std::size_t index(std::uint64_t v) noexcept {
    if (v < kExact) return static_cast<std::size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;
    const std::uint64_t sub = (v >> shift) & ((1u << kSubBits) - 1);
    return static_cast<std::size_t>(kExact +
                                    static_cast<std::uint64_t>(msb - kSubBits - 1) * (1u << kSubBits) + sub);
  }
  // The largest value that lands in bucket i.
  static std::uint64_t upper_bound(std::size_t i) noexcept;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
};

class ratio_histogram {
 public:
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr int kMinExp = -8;  // smallest bucket 2^-8; anything below (0 included) lands there
  static constexpr int kMaxExp = 8;   // largest 2^8 .. 2^9; anything above lands there
  static constexpr std::size_t kBuckets = static_cast<std::size_t>(kMaxExp - kMinExp + 1) << kSubBits;

  void record(double v) noexcept {
    ++counts_[index(v)];
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    ++count_;
  }
  void merge(const ratio_histogram& o) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  double min() const noexcept { return min_; }
  double max() const noexcept { return max_; }
  // The middle of the bucket that holds the value of rank ceil(p% x count) (nearest rank), kept
  // within [min(), max()]; 0 when empty.
  double percentile(double p) const noexcept;

  static std::size_t index(double v) noexcept {
    if (!(v >= 0x1.0p-8)) return 0;  // NaN too
    if (v >= 0x1.0p+9) return kBuckets - 1;
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const int exp = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
    const auto sub = static_cast<std::size_t>((bits >> (52 - kSubBits)) & ((1u << kSubBits) - 1));
    return (static_cast<std::size_t>(exp - kMinExp) << kSubBits) | sub;
  }
  // The middle of bucket i.
  static double middle(std::size_t i) noexcept;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace spinwise::bench
