#include "spinwise/runtime/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "spinwise/runtime/order_stats.hpp"

namespace spinwise::runtime {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): the resampling's generator, fixed by the seed.
struct splitmix {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) noexcept {  // uniform in [0, n), n < 2^32
    return static_cast<std::size_t>(((next() >> 32) * n) >> 32);
  }
};

// P(Binomial(n, 1/2) < k), summed in logs (n up to thousands without overflow).
double binomial_below(std::size_t n, std::size_t k) noexcept {
  double p = 0;
  for (std::size_t i = 0; i < k && i <= n; ++i) {
    const double log_choose = std::lgamma(static_cast<double>(n) + 1) -
                              std::lgamma(static_cast<double>(i) + 1) -
                              std::lgamma(static_cast<double>(n - i) + 1);
    p += std::exp(log_choose - static_cast<double>(n) * std::log(2.0));
  }
  return p;
}

double resampled_median(const std::vector<double>& sorted, splitmix& rng, std::vector<double>& scratch) {
  scratch.resize(sorted.size());
  for (double& v : scratch) v = sorted[rng.below(sorted.size())];
  return quantile_in_place(scratch, 0.5);
}

}  // namespace

double order_interval_coverage(std::size_t n, std::size_t k) noexcept {
  if (n == 0 || k == 0 || 2 * k > n + 1) return 0;
  return std::max(0.0, 1.0 - 2.0 * binomial_below(n, k));
}

median_interval median_ci(std::vector<double> sample, double confidence) {
  const std::vector<double> x = sorted_sample(std::move(sample));
  median_interval m;
  m.n = x.size();
  if (x.empty()) return m;
  m.median = median_sorted(x);
  m.min = x.front();
  m.max = x.back();
  // The largest k (1-based rank) whose interval still covers `confidence`; k = 1 is min..max.
  std::size_t k = 1;
  while (2 * (k + 1) <= m.n + 1 && order_interval_coverage(m.n, k + 1) >= confidence) ++k;
  m.lo = x[k - 1];
  m.hi = x[m.n - k];
  m.coverage = order_interval_coverage(m.n, k);
  return m;
}

std::string_view to_string(difference d) noexcept {
  switch (d) {
    case difference::within_noise:
      return "within noise";
    case difference::higher:
      return "higher, beyond noise";
    case difference::lower:
      return "lower, beyond noise";
    case difference::insufficient:
      return "too few runs to judge";
  }
  return "?";
}

// One resample's B/A. A resampled baseline median of 0 (possible where half of A's runs are 0,
// e.g. parks/s) is kept as +inf, not dropped: dropping those resamples would cut off the upper
// tail and bias the interval low. Both 0: no difference, 1.
static double resampled_ratio(double rb, double ra) noexcept {
  if (ra != 0) return rb / ra;
  if (rb == 0) return 1.0;
  return rb > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

ratio_interval compare_medians(const std::vector<double>& a_in, const std::vector<double>& b_in,
                               double confidence, std::uint64_t seed, std::size_t resamples) {
  const std::vector<double> a = sorted_sample(a_in);
  const std::vector<double> b = sorted_sample(b_in);
  ratio_interval r;
  r.confidence = confidence;
  if (a.size() < 2 || b.size() < 2) return r;
  const double ma = median_sorted(a);
  if (!(ma != 0)) return r;
  r.ratio = median_sorted(b) / ma;
  splitmix rng{seed};
  std::vector<double> ratios;
  ratios.reserve(resamples);
  std::vector<double> scratch;
  for (std::size_t i = 0; i < resamples; ++i) {
    const double ra = resampled_median(a, rng, scratch);
    const double rb = resampled_median(b, rng, scratch);
    ratios.push_back(resampled_ratio(rb, ra));
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  r.lo = quantile_sorted(ratios, tail);
  r.hi = quantile_sorted(ratios, 1.0 - tail);
  // Too few runs for the range rule's false-alarm rate (uncertainty.hpp): an interval, no verdict.
  if (a.size() < kMinRunsForVerdict || b.size() < kMinRunsForVerdict) return r;
  // Below six runs a side the bootstrap is optimistic: demand disjoint ranges too.
  const bool few = a.size() < kRangeRuleBelowRuns || b.size() < kRangeRuleBelowRuns;
  const bool disjoint_above = !few || b.front() > a.back();
  const bool disjoint_below = !few || b.back() < a.front();
  if (r.lo > 1.0 && disjoint_above) {
    r.verdict = difference::higher;
  } else if (r.hi < 1.0 && disjoint_below) {
    r.verdict = difference::lower;
  } else {
    r.verdict = difference::within_noise;
  }
  return r;
}

ratio_interval compare_paired(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::isfinite(a[i]) && std::isfinite(b[i]) && a[i] > 0 && b[i] > 0) ratios.push_back(b[i] / a[i]);
  }
  ratio_interval r;
  r.confidence = confidence;
  if (ratios.size() < 2) return r;
  const median_interval m = median_ci(std::move(ratios), confidence);
  r.ratio = m.median;
  r.lo = m.lo;
  r.hi = m.hi;
  r.confidence = m.coverage;
  if (m.coverage < confidence) return r;  // too few rounds for the interval asked for: no verdict
  if (m.lo > 1.0) {
    r.verdict = difference::higher;
  } else if (m.hi < 1.0) {
    r.verdict = difference::lower;
  } else {
    r.verdict = difference::within_noise;
  }
  return r;
}

paired_choice choose_paired(const std::vector<std::vector<double>>& rates, const std::vector<double>& cost,
                            double confidence) {
  paired_choice c;
  if (rates.empty() || cost.size() != rates.size()) return c;
  double best_ratio = 0;
  for (std::size_t i = 1; i < rates.size(); ++i) {
    const ratio_interval vs = compare_paired(rates[0], rates[i], confidence);
    if (vs.verdict == difference::higher && (c.best < 0 || vs.ratio > best_ratio)) {
      c.best = static_cast<int>(i);
      best_ratio = vs.ratio;
    }
  }
  c.chosen = c.best;
  const std::size_t ref = c.best < 0 ? 0 : static_cast<std::size_t>(c.best);
  double least = cost[ref];
  for (std::size_t i = 1; i < rates.size(); ++i) {
    if (!(cost[i] < least)) continue;
    const ratio_interval vs = compare_paired(rates[ref], rates[i], confidence);
    if (vs.verdict != difference::within_noise || vs.ratio < 1.0 - kCheaperMaxLoss) continue;
    c.chosen = static_cast<int>(i);
    c.chosen_vs_best = vs;
    least = cost[i];
  }
  return c;
}

geomean_interval geomean_ratio(const std::vector<paired_samples>& cells_in, double confidence,
                               std::uint64_t seed, std::size_t resamples) {
  geomean_interval g;
  g.confidence = confidence;
  std::vector<std::pair<std::vector<double>, std::vector<double>>> cells;  // (A, B), sorted
  for (const paired_samples& c : cells_in) {
    std::vector<double> a = sorted_sample(c.a), b = sorted_sample(c.b);
    if (a.empty() || b.empty() || !(median_sorted(a) > 0) || !(median_sorted(b) > 0)) continue;
    g.min_runs = cells.empty() ? std::min(a.size(), b.size()) : std::min({g.min_runs, a.size(), b.size()});
    cells.emplace_back(std::move(a), std::move(b));
  }
  g.cells = cells.size();
  if (cells.empty()) return g;
  const double n = static_cast<double>(cells.size());
  double sum = 0;  // in cell order, the log of each ratio (not a difference of logs)
  for (const auto& [a, b] : cells) sum += std::log(median_sorted(b) / median_sorted(a));
  g.ratio = std::exp(sum / n);
  g.lo = g.hi = g.ratio;
  if (g.min_runs < 2) return g;
  splitmix rng{seed};
  std::vector<double> means;
  means.reserve(resamples);
  std::vector<double> scratch;
  for (std::size_t i = 0; i < resamples; ++i) {
    double s = 0;
    bool ok = true;
    for (const auto& [a, b] : cells) {  // every cell draws, also after one failed: same stream
      const double ra = resampled_median(a, rng, scratch);
      const double rb = resampled_median(b, rng, scratch);
      ok = ok && ra > 0 && rb > 0;
      if (ok) s += std::log(rb / ra);
    }
    if (ok) means.push_back(std::exp(s / n));
  }
  if (means.empty()) {
    g.lo = g.hi = 0;
    return g;
  }
  std::sort(means.begin(), means.end());
  const double tail = (1.0 - confidence) / 2.0;
  g.lo = quantile_sorted(means, tail);
  g.hi = quantile_sorted(means, 1.0 - tail);
  if (g.min_runs < kMinRunsForVerdict) return g;
  g.verdict = g.lo > 1.0 ? difference::higher : g.hi < 1.0 ? difference::lower : difference::within_noise;
  return g;
}

std::vector<std::size_t> interleaved_order(std::size_t settings, std::size_t repeats, std::uint64_t seed) {
  std::vector<std::size_t> order;
  order.reserve(settings * repeats);
  std::vector<std::size_t> round(settings);
  std::iota(round.begin(), round.end(), std::size_t{0});
  splitmix rng{seed};
  for (std::size_t r = 0; r < repeats; ++r) {
    if (seed != 0 && r > 0) {  // Fisher-Yates
      for (std::size_t i = settings; i > 1; --i) std::swap(round[i - 1], round[rng.below(i)]);
    }
    order.insert(order.end(), round.begin(), round.end());
  }
  return order;
}

}  // namespace spinwise::runtime
