#include "histogram.hpp"

#include <algorithm>
#include <cmath>

namespace spinwise::bench {

void latency_histogram::merge(const latency_histogram& o) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  max_ = std::max(max_, o.max_);
  min_ = std::min(min_, o.min_);
}

std::uint64_t latency_histogram::upper_bound(std::size_t i) noexcept {
  if (i < kExact) return i;
  const std::size_t k = i - kExact;
  const int msb = static_cast<int>(k >> kSubBits) + kSubBits + 1;
  const std::uint64_t sub = k & ((1u << kSubBits) - 1);
  const int shift = msb - kSubBits;
  const std::uint64_t lower = ((std::uint64_t{1} << kSubBits) | sub) << shift;
  return lower + ((std::uint64_t{1} << shift) - 1);
}

std::uint64_t latency_histogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0;
  if (p >= 100.0) return max_;
  const double want = std::ceil(std::max(p, 0.0) / 100.0 * static_cast<double>(count_));
  const std::uint64_t rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(want));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(upper_bound(i), max_);
  }
  return max_;
}

void ratio_histogram::merge(const ratio_histogram& o) noexcept {
  if (o.count_ == 0) return;
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  min_ = count_ == 0 ? o.min_ : std::min(min_, o.min_);
  max_ = count_ == 0 ? o.max_ : std::max(max_, o.max_);
  count_ += o.count_;
}

double ratio_histogram::middle(std::size_t i) noexcept {
  const int exp = static_cast<int>(i >> kSubBits) + kMinExp;
  const double sub = static_cast<double>(i & ((1u << kSubBits) - 1));
  return std::ldexp(1.0 + (sub + 0.5) / (1u << kSubBits), exp);
}

double ratio_histogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0.0;
  const double want = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(count_));
  const std::uint64_t rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(want));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(middle(i), min_, max_);
  }
  return max_;
}

}  // namespace spinwise::bench
