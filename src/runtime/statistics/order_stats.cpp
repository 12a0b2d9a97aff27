#include "spinwise/runtime/order_stats.hpp"

#include <algorithm>
#include <cmath>

namespace spinwise::runtime {
namespace {

// Type 7's position h = q (n - 1), split into the lower rank and the weight of the next one.
struct rank_position {
  std::size_t lo = 0;
  double frac = 0;
};

rank_position position(std::size_t n, double q) noexcept {
  const double clamped = std::isnan(q) ? 0.0 : std::clamp(q, 0.0, 1.0);
  const double h = clamped * static_cast<double>(n - 1);
  rank_position p;
  p.lo = std::min(static_cast<std::size_t>(h), n - 1);
  p.frac = h - static_cast<double>(p.lo);
  return p;
}

// Equal neighbours give their value, also when both are infinite (inf - inf would be NaN): the
// bootstrap's ratios may hold +inf (a resampled baseline median of 0).
double interpolate(double lo, double hi, double frac) noexcept {
  return frac > 0 && hi != lo ? lo + frac * (hi - lo) : lo;
}

}  // namespace

std::vector<double> sorted_sample(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
               values.end());
  std::sort(values.begin(), values.end());
  return values;
}

double quantile_sorted(const double* sorted, std::size_t n, double q) noexcept {
  if (n == 0) return 0;
  const rank_position p = position(n, q);
  return p.lo + 1 < n ? interpolate(sorted[p.lo], sorted[p.lo + 1], p.frac) : sorted[p.lo];
}

double quantile(std::vector<double> values, double q) {
  return quantile_sorted(sorted_sample(std::move(values)), q);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double quantile_in_place(std::vector<double>& values, double q) {
  const std::size_t n = values.size();
  if (n == 0) return 0;
  const rank_position p = position(n, q);
  const auto lo = values.begin() + static_cast<std::ptrdiff_t>(p.lo);
  std::nth_element(values.begin(), lo, values.end());
  if (p.lo + 1 >= n || !(p.frac > 0)) return *lo;
  // nth_element leaves everything after `lo` no smaller than it: the next rank is their minimum.
  return interpolate(*lo, *std::min_element(lo + 1, values.end()), p.frac);
}

order_summary summarize_order(std::vector<double> values) {
  const std::vector<double> s = sorted_sample(std::move(values));
  order_summary o;
  o.n = s.size();
  if (s.empty()) return o;
  o.min = s.front();
  o.max = s.back();
  o.median = median_sorted(s);
  return o;
}

}  // namespace spinwise::runtime
