#pragma once
// How sure a repeated measurement is: the median of the repeats with its confidence interval, and
// whether two settings measured interleaved differ by more than their noise (spinwise::runtime).
//
// Internal to spinwise's tools (spinwise-stress; spinwise-bench --estimate, which answers
// bench/micro/report.py and bench/compare with it), installed with the runtime without a stability
// promise.
//
// The median's interval is distribution-free (order statistics): for n sorted repeats x(1..n) the
// interval [x(k), x(n+1-k)] holds the true median with probability
//
//   coverage(k) = 1 - 2 P(Binomial(n, 1/2) < k),
//
// and we take the largest k whose coverage is at least the confidence asked for (95%). Below six
// repeats no k reaches 95% (five give 93.75% for min..max): the interval is then min..max and
// `coverage` says what it is worth. No assumption about the shape of the noise, which on these
// machines is not normal (a preempted holder makes one run in five slow).
//
// Two settings A and B are compared by the ratio of their medians, B/A, with a percentile
// bootstrap interval (each sample resampled with replacement, the ratio of the resampled medians,
// its 2.5% and 97.5% quantiles; 4000 resamples from a fixed seed, so the same runs give the same
// verdict). The difference is "beyond the noise" when that interval excludes 1 and, with fewer
// than six runs on a side, the two samples' ranges do not overlap either (the bootstrap of tiny
// samples is optimistic). Otherwise: "within noise".
//
// No verdict below kMinRunsForVerdict (4) runs a side: "insufficient", though the ratio and its
// interval are still given from two runs a side. The range rule is what decides below six runs,
// and its false-alarm rate is exact: for two samples of n runs from one distribution (no ties)
// every arrangement of the 2n ranks is equally likely, and the ranges are disjoint, one way or the
// other, in 2 of the C(2n, n) ways of choosing which ranks are A's:
//
//   P(disjoint | no difference) = 2 / C(2n, n) = 2 n! n! / (2n)!
//     n = 2: 1/3 (33%), n = 3: 1/10 (10%), n = 4: 1/35 (2.9%), n = 5: 1/126 (0.8%),
//
// per metric (and na, nb >= 4 a side give 2 / C(na + nb, na) <= 1/35). We want at most 5% per
// metric: three a side give 10% (an A/A comparison of six metrics would call one "beyond noise"
// about every other time), four give 2.9%. From six a side the bootstrap alone decides; its
// false-alarm rate is measured, not derived: 3.5% to 4.3% from 6 to 16 runs a side, on lognormal
// runs and on a mixture with a slow run in five (tests/calibration/uncertainty_test.cpp,
// AaComparisons*, holds it under 5%).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace spinwise::runtime {

struct median_interval {
  std::size_t n = 0;                    // finite repeats
  double median = 0, min = 0, max = 0;  // type 7 median (order_stats.hpp), extremes
  double lo = 0, hi = 0;                // the interval [x(k), x(n+1-k)]
  double coverage = 0;                  // its probability of holding the true median (0 for n = 0)
};

// Of a sample in any order; non-finite values dropped. `confidence` in (0, 1).
median_interval median_ci(std::vector<double> sample, double confidence = 0.95);

// The coverage of [x(k), x(n+1-k)] for n repeats (1 <= k <= (n+1)/2); 0 outside.
double order_interval_coverage(std::size_t n, std::size_t k) noexcept;

enum class difference : std::uint8_t {
  within_noise = 0,  // the interval of B/A holds 1 (or, below six runs a side, the ranges overlap)
  higher = 1,        // B beyond the noise above A
  lower = 2,         // B beyond the noise below A
  insufficient = 3,  // fewer than kMinRunsForVerdict runs on a side, or a median of A that is 0
};
std::string_view to_string(difference d) noexcept;

// The fewest runs a side that get a verdict: at four, two samples of one distribution have
// disjoint ranges with probability 1/35 (2.9%); at three, 1/10 (see the top of this file).
inline constexpr std::size_t kMinRunsForVerdict = 4;
// Below this many runs a side the bootstrap is optimistic and the ranges must be disjoint too.
inline constexpr std::size_t kRangeRuleBelowRuns = 6;
// The defaults: what spinwise-stress --compare and spinwise-bench's report judge with.
inline constexpr double kDefaultConfidence = 0.95;
inline constexpr std::uint64_t kDefaultSeed = 0x5eed;
inline constexpr std::size_t kDefaultResamples = 4000;

struct ratio_interval {
  double ratio = 0;       // median(B) / median(A)
  double lo = 0, hi = 0;  // bootstrap percentile interval of the ratio (from two runs a side)
  double confidence = 0;
  difference verdict = difference::insufficient;
};

// B/A with its interval and verdict. `seed` fixes the resampling. The ratio and interval need
// two runs a side and a median of A that is not 0 (else all 0); the verdict needs
// kMinRunsForVerdict runs a side (else insufficient).
ratio_interval compare_medians(const std::vector<double>& a, const std::vector<double>& b,
                               double confidence = kDefaultConfidence, std::uint64_t seed = kDefaultSeed,
                               std::size_t resamples = kDefaultResamples);

// B against A measured in rounds (a[i] and b[i] in the same round, the settings interleaved
// within it): the median of the per-round ratios b[i] / a[i] with its distribution-free interval
// (median_ci of the ratios: the sign test's). Drift that a round's settings share (a load that
// swings from round to round) cancels in each ratio, where compare_medians carries it into both
// medians. "higher" when the interval lies above 1, "lower" below 1; a verdict needs the interval
// to cover `confidence`, kMinPairsForVerdict rounds at 95% (min..max of six ratios covers 96.9%).
// Pairs with a non-finite or non-positive value are left out; a and b of different lengths are
// paired up to the shorter. confidence in the result: the interval's coverage.
ratio_interval compare_paired(const std::vector<double>& a, const std::vector<double>& b,
                              double confidence = kDefaultConfidence);
// The fewest rounds whose ratios' min..max covers 95%: 1 - 2 / 2^6 = 96.9% (five: 93.75%).
inline constexpr std::size_t kMinPairsForVerdict = 6;

// A tuning's choice among settings measured in the same rounds: rates[i][r] is setting i's rate
// in round r, rates[0] the current setting's. `best`: the setting beyond the noise above the
// current one (compare_paired) with the highest median ratio; -1 when none is. The reference is
// the best, or the current setting when there is none. `chosen`: of the settings of less cost
// than the reference (cost[i]) that the rounds cannot tell from it (compare_paired against it:
// within noise) and whose median ratio to it is at least 1 - kCheaperMaxLoss, the one of least
// cost; else the best (-1: keep the current). The same throughput for less of what the cost
// counts: for innodb_spin_wait_delay the delay, the time spent spinning (spinwise-calibrate
// --tune). The current setting is never chosen over a best (that best is beyond the noise above
// it), and fewer rounds than a verdict needs choose nothing.
struct paired_choice {
  int best = -1;
  int chosen = -1;
  ratio_interval chosen_vs_best;  // rates[chosen] against the reference's (chosen is not the best)
};
// The most a cheaper setting's median may lose to the reference and still be chosen: 3%, the
// tolerance spinwise-calibrate --tune is held to (issue 46: 0.97x of a sweep's best).
inline constexpr double kCheaperMaxLoss = 0.03;
paired_choice choose_paired(const std::vector<std::vector<double>>& rates, const std::vector<double>& cost,
                            double confidence = kDefaultConfidence);

// One cell of a geometric mean of ratios: B against A, as compare_medians takes them.
struct paired_samples {
  std::vector<double> a, b;
};

struct geomean_interval {
  std::size_t cells = 0;     // cells in the mean: those with a median above 0 on both sides
  std::size_t min_runs = 0;  // the fewest finite runs on a side over those cells
  double ratio = 0;          // geometric mean over them of median(B) / median(A); 0 without cells
  double lo = 0, hi = 0;     // bootstrap percentile interval; ratio..ratio below two runs a side
  double confidence = 0;
  difference verdict = difference::insufficient;
};

// The geometric mean over cells of B/A (a summary of one setting against another over a grid,
// e.g. a lock's throughput over its reference's in every contended cell), with a percentile
// bootstrap interval: per resample every cell's A, then its B, resampled with replacement (one
// splitmix64 stream from `seed`, cells in order), the geometric mean of the resampled medians'
// ratios; a resample in which a median is not above 0 has no logarithm and is left out. Cells
// whose median is not above 0 on a side are left out of the mean. The interval needs two runs a
// side in every cell; the verdict kMinRunsForVerdict, and then the bootstrap alone decides: it
// pools every cell's runs, so the range rule (for one cell of few runs) does not apply. Without a
// resample left the interval is 0..0 and the verdict insufficient.
geomean_interval geomean_ratio(const std::vector<paired_samples>& cells,
                               double confidence = kDefaultConfidence, std::uint64_t seed = kDefaultSeed,
                               std::size_t resamples = kDefaultResamples);

// The run order that interleaves `settings` settings over `repeats` rounds: round r runs every
// setting once (0, 1, ..., k-1 in round 0), each later round in a fresh order drawn from `seed`
// (seed 0: the same order every round, A B A B ...). Returns setting indices, repeats * settings long.
std::vector<std::size_t> interleaved_order(std::size_t settings, std::size_t repeats, std::uint64_t seed);

}  // namespace spinwise::runtime
