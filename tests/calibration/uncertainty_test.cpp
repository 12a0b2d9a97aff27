// The uncertainty of repeated measurements (runtime/uncertainty.hpp) on synthetic samples whose
// answers are known: binomial coverages worked by hand, verdicts on samples that do and do not
// differ, and the interleaving order.

#include "spinwise/runtime/uncertainty.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace rt = spinwise::runtime;

TEST(MedianCi, CoverageMatchesTheBinomialWorkedByHand) {
  // n = 5, min..max: 1 - 2 / 32.
  EXPECT_DOUBLE_EQ(rt::order_interval_coverage(5, 1), 1.0 - 2.0 / 32.0);
  // n = 10, k = 2: 1 - 2 (1 + 10) / 1024; k = 3: 1 - 2 (1 + 10 + 45) / 1024.
  EXPECT_NEAR(rt::order_interval_coverage(10, 2), 1.0 - 22.0 / 1024.0, 1e-12);
  EXPECT_NEAR(rt::order_interval_coverage(10, 3), 1.0 - 112.0 / 1024.0, 1e-12);
  EXPECT_EQ(rt::order_interval_coverage(10, 0), 0.0);
  EXPECT_EQ(rt::order_interval_coverage(10, 6), 0.0);  // 2k > n + 1
}

TEST(MedianCi, FiveRunsGiveMinToMaxAtTheirTrueCoverage) {
  const rt::median_interval m = rt::median_ci({5, 1, 4, 2, 3});
  EXPECT_EQ(m.n, 5u);
  EXPECT_EQ(m.median, 3);
  EXPECT_EQ(m.lo, 1);
  EXPECT_EQ(m.hi, 5);
  EXPECT_DOUBLE_EQ(m.coverage, 0.9375);  // under the 95% asked: said, not hidden
}

TEST(MedianCi, TenAndTwentyRunsNarrowToTheWorkedRanks) {
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);  // any order
  const rt::median_interval m10 = rt::median_ci(ten);
  EXPECT_EQ(m10.median, 5.5);
  EXPECT_EQ(m10.lo, 2);  // x(2)
  EXPECT_EQ(m10.hi, 9);  // x(9)
  EXPECT_NEAR(m10.coverage, 1.0 - 22.0 / 1024.0, 1e-12);

  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i * 10);
  const rt::median_interval m20 = rt::median_ci(twenty);
  // P(Bin(20, 1/2) < 6) = 21700 / 2^20: coverage 0.9586; k = 7 would give 0.8847.
  EXPECT_EQ(m20.lo, 60);
  EXPECT_EQ(m20.hi, 150);
  EXPECT_NEAR(m20.coverage, 1.0 - 2.0 * 21700.0 / 1048576.0, 1e-12);
  EXPECT_EQ(m20.min, 10);
  EXPECT_EQ(m20.max, 200);
}

TEST(MedianCi, NonFiniteValuesAreDroppedAndEmptyIsAllZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const rt::median_interval m = rt::median_ci({nan, 7, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(m.n, 1u);
  EXPECT_EQ(m.median, 7);
  EXPECT_EQ(m.lo, 7);
  EXPECT_EQ(m.hi, 7);
  const rt::median_interval e = rt::median_ci({});
  EXPECT_EQ(e.n, 0u);
  EXPECT_EQ(e.coverage, 0.0);
}

TEST(CompareMedians, ClearlyHigherAndLowerSamplesAreBeyondNoise) {
  const std::vector<double> a = {100, 101, 99, 100, 102};
  const rt::ratio_interval up = rt::compare_medians(a, {120, 119, 121, 122, 118});
  EXPECT_EQ(up.verdict, rt::difference::higher);
  EXPECT_DOUBLE_EQ(up.ratio, 1.2);
  EXPECT_GT(up.lo, 1.0);
  EXPECT_LE(up.lo, up.ratio);
  EXPECT_GE(up.hi, up.ratio);
  const rt::ratio_interval down = rt::compare_medians(a, {80, 81, 79, 82, 78});
  EXPECT_EQ(down.verdict, rt::difference::lower);
  EXPECT_LT(down.hi, 1.0);
}

TEST(CompareMedians, OverlappingNoisySamplesAreWithinNoise) {
  // The issue's own runs: 266, 442, 403 against 379, 396, 207 requests/s.
  const rt::ratio_interval r = rt::compare_medians({266, 442, 403}, {379, 396, 207});
  EXPECT_EQ(r.verdict, rt::difference::within_noise);
  EXPECT_LE(r.lo, 1.0);
  EXPECT_GE(r.hi, 1.0);
  // Medians 10% apart but ranges overlapping, five runs a side: within noise.
  const rt::ratio_interval s = rt::compare_medians({100, 90, 110, 95, 105}, {110, 100, 120, 105, 115});
  EXPECT_NEAR(s.ratio, 1.1, 1e-12);
  EXPECT_EQ(s.verdict, rt::difference::within_noise);
}

TEST(CompareMedians, FewRunsWithOverlappingRangesAreWithinNoiseWhateverTheBootstrapSays) {
  // Five a side, one run of A above one of B: the bootstrap interval excludes 1 (a ratio below 1
  // needs three draws of 109 and three of 108, p ~ 0.3%), but the ranges overlap.
  const rt::ratio_interval r = rt::compare_medians({100, 101, 102, 103, 109}, {108, 110, 111, 112, 113});
  EXPECT_GT(r.lo, 1.0);
  EXPECT_EQ(r.verdict, rt::difference::within_noise);
}

// Bug guarded: resamples whose baseline median was 0 were dropped, which cut off the ratio's upper
// tail. A: five runs of 0 and six of 2 (median 2), B: eleven of 1.9. About 38% of the resampled
// A medians are 0 (B/A = +inf there), so the interval's upper end is +inf and 0.95x is within
// noise; with those resamples dropped every ratio was 0.95 and the verdict "lower, beyond noise".
TEST(CompareMedians, AResampledBaselineOfZeroKeepsTheUpperTail) {
  const std::vector<double> a{0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2};
  const std::vector<double> b(11, 1.9);
  const rt::ratio_interval r = rt::compare_medians(a, b);
  EXPECT_DOUBLE_EQ(r.ratio, 0.95);
  EXPECT_DOUBLE_EQ(r.lo, 0.95);
  EXPECT_TRUE(std::isinf(r.hi) && r.hi > 0) << r.hi;
  EXPECT_EQ(r.verdict, rt::difference::within_noise);
  // Both medians 0 in a resample count as no difference (1), not as NaN.
  const rt::ratio_interval z = rt::compare_medians(a, {0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2});
  EXPECT_FALSE(std::isnan(z.lo) || std::isnan(z.hi));
  EXPECT_EQ(z.verdict, rt::difference::within_noise);
}

TEST(CompareMedians, ManyRunsResolveASmallShiftThatFewCannot) {
  // 12 runs a side, noise +-5%, shift 8%: the bootstrap alone decides.
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) {
    const double noise = ((i * 7) % 11 - 5) / 100.0;  // -5%..+5%, spread over the runs
    a.push_back(100 * (1 + noise));
    b.push_back(108 * (1 - noise));
  }
  EXPECT_EQ(rt::compare_medians(a, b).verdict, rt::difference::higher);
  // Three a side with the same shift and noise, ranges overlapping: within noise.
  EXPECT_EQ(rt::compare_medians({95, 100, 105}, {103, 108, 113}).verdict, rt::difference::within_noise);
}

TEST(CompareMedians, FixedSeedGivesTheSameIntervalAndTooFewRunsAreSaidSo) {
  const std::vector<double> a = {10, 12, 11, 13, 9, 10, 12};
  const std::vector<double> b = {11, 13, 12, 14, 10, 11, 15};
  const rt::ratio_interval x = rt::compare_medians(a, b, 0.95, 42);
  const rt::ratio_interval y = rt::compare_medians(a, b, 0.95, 42);
  EXPECT_EQ(x.lo, y.lo);
  EXPECT_EQ(x.hi, y.hi);
  EXPECT_EQ(rt::compare_medians({1}, {1, 2}).verdict, rt::difference::insufficient);
  EXPECT_EQ(rt::compare_medians({0, 0, 0}, {1, 2, 3}).verdict, rt::difference::insufficient);
  EXPECT_EQ(rt::to_string(rt::difference::within_noise), "within noise");
}

TEST(InterleavedOrder, SeedZeroAlternatesAndASeedShufflesEachLaterRound) {
  EXPECT_EQ(rt::interleaved_order(2, 3, 0), (std::vector<std::size_t>{0, 1, 0, 1, 0, 1}));
  const std::vector<std::size_t> o = rt::interleaved_order(4, 50, 7);
  ASSERT_EQ(o.size(), 200u);
  EXPECT_EQ((std::vector<std::size_t>(o.begin(), o.begin() + 4)), (std::vector<std::size_t>{0, 1, 2, 3}));
  bool shuffled = false;
  for (std::size_t r = 0; r < 50; ++r) {
    std::vector<std::size_t> round(o.begin() + 4 * r, o.begin() + 4 * r + 4);
    shuffled = shuffled || round != std::vector<std::size_t>{0, 1, 2, 3};
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, (std::vector<std::size_t>{0, 1, 2, 3})) << "round " << r << " runs each setting once";
  }
  EXPECT_TRUE(shuffled);
  EXPECT_EQ(rt::interleaved_order(4, 50, 7), o);  // the seed fixes it
}
