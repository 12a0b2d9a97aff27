#pragma once
// Latency histogram: exact below 64 ns, then 32 buckets per power of two (values within 3.2%),
// so percentiles need no stored samples however long a run is. One per thread, merged at the end.

#include <array>
#include <cstdint>

namespace spinwise::stress {

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
  double mean() const noexcept { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The smallest bucket bound with at least p% of the values at or below it (0 when empty);
  // never above max(). p = 100 gives max().
  std::uint64_t percentile(double p) const noexcept;

  static std::size_t index(std::uint64_t v) noexcept {
    if (v < kExact) return static_cast<std::size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;
    const std::uint64_t sub = (v >> shift) & ((1u << kSubBits) - 1);
    return static_cast<std::size_t>(kExact + static_cast<std::uint64_t>(msb - kSubBits - 1) * (1u << kSubBits) + sub);
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

}  // namespace spinwise::stress
