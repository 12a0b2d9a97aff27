#include "spinwise/runtime/sample_summary.hpp"

#include <algorithm>
#include <cmath>

namespace spinwise {
namespace {

constexpr std::string_view kStabilityNames[] = {"stable", "noisy", "bimodal", "drifting", "insufficient"};

// Nearest-rank quantile of a sorted, non-empty sample.
double quantile(const std::vector<double>& sorted, double q) {
  const auto idx = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

double median_of(const std::vector<double>& sorted, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  const std::size_t mid = begin + n / 2;
  return n % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

}  // namespace

std::string_view to_string(stability s) noexcept {
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kStabilityNames) ? kStabilityNames[i] : std::string_view("unknown");
}

bool parse_stability(std::string_view text, stability& out) noexcept {
  for (std::size_t i = 0; i < std::size(kStabilityNames); ++i) {
    if (kStabilityNames[i] == text) {
      out = static_cast<stability>(i);
      return true;
    }
  }
  return false;
}

sample_summary summarize(std::vector<double> samples, const stability_limits& limits) {
  samples.erase(std::remove_if(samples.begin(), samples.end(), [](double v) { return !std::isfinite(v); }),
                samples.end());
  sample_summary s;
  s.n = static_cast<std::uint32_t>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.p10 = quantile(samples, 0.10);
  s.median = quantile(samples, 0.50);
  s.p90 = quantile(samples, 0.90);
  s.spread = s.median > 0 ? (s.p90 - s.p10) / s.median : 0.0;
  if (samples.size() < 5) {
    s.status = stability::insufficient;
    return s;
  }

  // Two clusters: the widest relative jump between neighbours that leaves at least
  // bimodal_min_share of the trials on each side. Outliers from interrupts sit in the top few
  // trials and cannot form a side of their own.
  const std::size_t n = samples.size();
  const auto side = std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(limits.bimodal_min_share * n)));
  double best_gap = 0;
  std::size_t cut = 0;
  for (std::size_t i = side; i + side <= n; ++i) {
    const double lo = samples[i - 1], hi = samples[i];
    if (lo <= 0) continue;
    const double gap = (hi - lo) / lo;
    if (gap > best_gap) {
      best_gap = gap;
      cut = i;
    }
  }
  if (best_gap > limits.bimodal_gap) {
    s.status = stability::bimodal;
    s.low_mode = median_of(samples, 0, cut);
    s.high_mode = median_of(samples, cut, n);
    s.high_share = static_cast<double>(n - cut) / static_cast<double>(n);
    return s;
  }
  s.status = s.spread > limits.noisy_spread ? stability::noisy : stability::stable;
  return s;
}

double check_drift(sample_summary& s, const std::vector<double>& round_medians, const stability_limits& limits) {
  if (round_medians.size() < 2 || !(s.median > 0)) return 0.0;
  const auto [lo, hi] = std::minmax_element(round_medians.begin(), round_medians.end());
  const double drift = (*hi - *lo) / s.median;
  if (s.status == stability::stable && drift > limits.drift) s.status = stability::drifting;
  return drift;
}

}  // namespace spinwise
