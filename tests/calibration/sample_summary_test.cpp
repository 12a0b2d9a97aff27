// The verdict on repeated trials: a CPU whose trials disagree must not get a confident number.
#include "spinwise/runtime/sample_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_util.hpp"

namespace sw = spinwise;

namespace {

std::vector<double> around(double center, int n, double rel_step) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1.0 + rel_step * ((i % 7) - 3)));
  return v;
}

}  // namespace

// Guards against reporting a clean PAUSE measurement as unstable (every run would warn).
TEST(SampleSummary, TightSampleIsStable) {
  const sw::sample_summary s = sw::summarize(around(30.0, 31, 0.003));
  EXPECT_EQ(s.n, 31u);
  EXPECT_EQ(s.status, sw::stability::stable);
  EXPECT_NEAR(s.median, 30.0, 0.2);
  EXPECT_LE(s.min, s.p10);
  EXPECT_LE(s.p10, s.median);
  EXPECT_LE(s.median, s.p90);
  EXPECT_LE(s.p90, s.max);
  EXPECT_LT(s.spread, 0.05);
}

// Guards against a few interrupted trials (timer ticks) flipping the verdict or moving the median.
TEST(SampleSummary, InterruptOutliersAreIgnored) {
  std::vector<double> v = around(30.0, 31, 0.002);
  v[3] = 900;
  v[17] = 450;
  const sw::sample_summary s = sw::summarize(v);
  EXPECT_EQ(s.status, sw::stability::stable);
  EXPECT_NEAR(s.median, 30.0, 0.2);
  EXPECT_EQ(s.max, 900);
}

// Guards against a VM's PAUSE-loop exits (a second cluster of slow trials) being averaged into
// one confident figure.
TEST(SampleSummary, TwoClustersAreBimodal) {
  std::vector<double> v = around(30.0, 21, 0.002);
  const std::vector<double> slow = around(95.0, 10, 0.002);
  v.insert(v.end(), slow.begin(), slow.end());
  const sw::sample_summary s = sw::summarize(v);
  ASSERT_EQ(s.status, sw::stability::bimodal);
  EXPECT_NEAR(s.low_mode, 30.0, 0.5);
  EXPECT_NEAR(s.high_mode, 95.0, 1.0);
  EXPECT_NEAR(s.high_share, 10.0 / 31.0, 0.01);
}

// Guards against the median's interval being the trials' spread: a third of the trials twice as
// slow (a busy host) puts p90 in the slow mode, while the interval of the median stays in the
// fast one; half of them slow, and the interval spans both, as the median could be in either.
TEST(SampleSummary, TheMediansIntervalIsNotTheTrialsSpread) {
  std::vector<double> v = around(30.0, 68, 0.002);
  const std::vector<double> slow = around(62.0, 33, 0.002);
  v.insert(v.end(), slow.begin(), slow.end());
  sw::sample_summary s = sw::summarize(v);
  EXPECT_GT(s.p90, 60.0);
  EXPECT_LE(s.median_lo, s.median);
  EXPECT_GE(s.median_hi, s.median);
  EXPECT_GT(s.median_lo, 29.5);
  EXPECT_LT(s.median_hi, 30.5);
  v = around(30.0, 50, 0.002);
  const std::vector<double> half = around(62.0, 51, 0.002);
  v.insert(v.end(), half.begin(), half.end());
  s = sw::summarize(v);
  EXPECT_LT(s.median_lo, 31.0);
  EXPECT_GT(s.median_hi, 61.0);
}

// Guards against a uniformly smeared sample (frequency changes) passing as stable.
TEST(SampleSummary, WideSpreadIsNoisy) {
  std::vector<double> v;
  for (int i = 0; i < 31; ++i) v.push_back(30.0 + 0.25 * i);  // 30..37.5, no gap over 15%
  const sw::sample_summary s = sw::summarize(v);
  EXPECT_EQ(s.status, sw::stability::noisy);
  EXPECT_GT(s.spread, 0.10);
}

// Guards against judging from a handful of trials, and against NaNs poisoning the sort.
TEST(SampleSummary, TooFewAndNonFinite) {
  EXPECT_EQ(sw::summarize({}).status, sw::stability::insufficient);
  EXPECT_EQ(sw::summarize({}).n, 0u);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const sw::sample_summary s = sw::summarize({1.0, nan, 2.0, std::numeric_limits<double>::infinity(), 3.0});
  EXPECT_EQ(s.n, 3u);
  EXPECT_EQ(s.status, sw::stability::insufficient);
  EXPECT_EQ(s.median, 2.0);
}

// Guards against a clock that moved between rounds being hidden by the pooled median.
TEST(SampleSummary, RoundsThatDisagreeAreDrifting) {
  sw::sample_summary s = sw::summarize(around(30.0, 30, 0.002));
  ASSERT_EQ(s.status, sw::stability::stable);
  EXPECT_NEAR(sw::check_drift(s, {30.0, 30.1, 29.95}), 0.005, 0.003);
  EXPECT_EQ(s.status, sw::stability::stable);
  EXPECT_NEAR(sw::check_drift(s, {30.0, 34.0, 30.0}), 4.0 / 30.0, 0.01);
  EXPECT_EQ(s.status, sw::stability::drifting);
}

TEST(SampleSummary, VerdictNamesRoundTrip) {
  spinwise_test::expect_names_round_trip({sw::stability::stable, sw::stability::noisy, sw::stability::bimodal,
                                          sw::stability::drifting, sw::stability::insufficient},
                                         sw::parse_stability, "STABLE", sw::stability::noisy);
}
