#include "spinwise/runtime/sample_summary.hpp"

#include <algorithm>
#include <cmath>

#include "common/enum_names.hpp"
#include "spinwise/runtime/order_stats.hpp"
#include "spinwise/runtime/uncertainty.hpp"

namespace spinwise {
namespace {

constexpr detail::enum_name<stability> kStabilityNames[] = {{stability::stable, "stable"},
                                                            {stability::noisy, "noisy"},
                                                            {stability::bimodal, "bimodal"},
                                                            {stability::drifting, "drifting"},
                                                            {stability::insufficient, "insufficient"}};

}  // namespace

std::string_view to_string(stability s) noexcept { return detail::name_in(kStabilityNames, s); }

bool parse_stability(std::string_view text, stability& out) noexcept {
  return detail::parse_in(kStabilityNames, text, out);
}

sample_summary summarize(std::vector<double> values, const stability_limits& limits) {
  const std::vector<double> samples = runtime::sorted_sample(std::move(values));
  sample_summary s;
  s.n = static_cast<std::uint32_t>(samples.size());
  if (samples.empty()) return s;
  s.min = samples.front();
  s.max = samples.back();
  s.p10 = runtime::quantile_sorted(samples, 0.10);
  s.median = runtime::median_sorted(samples);
  s.p90 = runtime::quantile_sorted(samples, 0.90);
  s.spread = s.median > 0 ? (s.p90 - s.p10) / s.median : 0.0;
  const runtime::median_interval mi = runtime::median_ci(samples);
  s.median_lo = mi.lo;
  s.median_hi = mi.hi;
  if (samples.size() < 5) {
    s.status = stability::insufficient;
    return s;
  }

  // Two clusters: the widest relative jump between neighbours that leaves at least
  // bimodal_min_share of the trials on each side. Outliers from interrupts sit in the top few
  // trials and cannot form a side of their own.
  const std::size_t n = samples.size();
  const auto side =
      std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(limits.bimodal_min_share * n)));
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
    s.low_mode = runtime::median_sorted(samples.data(), cut);
    s.high_mode = runtime::median_sorted(samples.data() + cut, n - cut);
    s.high_share = static_cast<double>(n - cut) / static_cast<double>(n);
    return s;
  }
  s.status = s.spread > limits.noisy_spread ? stability::noisy : stability::stable;
  return s;
}

double check_drift(sample_summary& s, const std::vector<double>& round_medians,
                   const stability_limits& limits) {
  if (round_medians.size() < 2 || !(s.median > 0)) return 0.0;
  const auto [lo, hi] = std::minmax_element(round_medians.begin(), round_medians.end());
  const double drift = (*hi - *lo) / s.median;
  if (s.status == stability::stable && drift > limits.drift) s.status = stability::drifting;
  return drift;
}

}  // namespace spinwise
