#pragma once
// Order statistics of a sample: quantiles, the median, minimum and maximum (spinwise::runtime).
//
// Internal to spinwise's own tools (spinwise-calibrate, spinwise-bench, spinwise-stress) and the
// runtime itself; installed with the runtime, with no stability promise to engines.
//
// One rank rule for every quantile spinwise reports from a sample: linear interpolation between
// the closest ranks, Hyndman & Fan's type 7 (Hyndman and Fan, "Sample Quantiles in Statistical
// Packages", The American Statistician 50(4), 1996; the default of R's quantile(), NumPy's
// percentile() and spreadsheet PERCENTILE.INC). For n sorted values x[0..n-1] and h = q (n - 1):
//
//   Q(q) = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])
//
// so Q(0) is the minimum, Q(1) the maximum and Q(0.5) the median, the mean of the middle pair
// when n is even. q is clamped to [0, 1] (NaN counts as 0); an empty sample gives 0.
//
// Percentiles of a bucketed histogram (lock_stats, the stress tool's latency histogram) are not
// order statistics of a sample: they report the bucket that holds a rank, and keep their own rule.

#include <cstddef>
#include <vector>

namespace spinwise::runtime {

// `values` sorted ascending with the non-finite ones (NaN, infinities) dropped: the form the
// *_sorted functions take.
std::vector<double> sorted_sample(std::vector<double> values);

// Type 7 quantile of an ascending range.
double quantile_sorted(const double* sorted, std::size_t n, double q) noexcept;
inline double quantile_sorted(const std::vector<double>& sorted, double q) noexcept {
  return quantile_sorted(sorted.data(), sorted.size(), q);
}
inline double median_sorted(const double* sorted, std::size_t n) noexcept {
  return quantile_sorted(sorted, n, 0.5);
}
inline double median_sorted(const std::vector<double>& sorted) noexcept {
  return quantile_sorted(sorted, 0.5);
}

// The same of a sample in any order (copied, non-finite values dropped, sorted).
double quantile(std::vector<double> values, double q);
double median(std::vector<double> values);

// The same rule in O(n) for large samples (latency vectors): reorders `values`, whose elements
// must all be finite.
double quantile_in_place(std::vector<double>& values, double q);

struct order_summary {
  std::size_t n = 0;  // finite values
  double min = 0, median = 0, max = 0;
};
// Of a sample in any order; non-finite values dropped; all zero when nothing is left.
order_summary summarize_order(std::vector<double> values);

}  // namespace spinwise::runtime
