// Order statistics: the one rank rule (type 7, linear interpolation between closest ranks) on
// small inputs whose answers are known by hand, and every summary that reports a quantile using it.
#include "spinwise/runtime/order_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "spinwise/runtime/sample_summary.hpp"

namespace sw = spinwise;
namespace rt = spinwise::runtime;

// Bug guarded: two medians that disagree (one averaged the middle pair, one took the upper
// element), so the same trials gave different "medians" in a profile and in its recomputed
// summaries. An even sample's median is the mean of the middle pair, everywhere.
TEST(OrderStats, EvenSizeMedianIsTheMeanOfTheMiddlePair) {
  EXPECT_DOUBLE_EQ(rt::median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(rt::median({10.0, 20.0}), 15.0);
  EXPECT_DOUBLE_EQ(rt::median_sorted(std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), 3.5);
}

TEST(OrderStats, OddSizeMedianIsTheMiddleElement) {
  EXPECT_DOUBLE_EQ(rt::median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(rt::median({7.0}), 7.0);
  EXPECT_DOUBLE_EQ(rt::median({5.0, 1.0, 4.0, 2.0, 3.0}), 3.0);
}

// Bug guarded: q = 0 or q = 1 indexing one past the end (or before the start), or a rank rule
// whose extremes are not the sample's minimum and maximum.
TEST(OrderStats, ZeroAndOneAreTheMinimumAndMaximum) {
  for (const std::vector<double>& v :
       {std::vector<double>{9.0}, std::vector<double>{2.0, 8.0}, std::vector<double>{5.0, 3.0, 9.0},
        std::vector<double>{4.0, 1.0, 3.0, 2.0}}) {
    EXPECT_DOUBLE_EQ(rt::quantile(v, 0.0), *std::min_element(v.begin(), v.end()));
    EXPECT_DOUBLE_EQ(rt::quantile(v, 1.0), *std::max_element(v.begin(), v.end()));
  }
  // Outside [0, 1] (or NaN) is clamped, never out of bounds.
  EXPECT_DOUBLE_EQ(rt::quantile({1.0, 2.0, 3.0}, -0.5), 1.0);
  EXPECT_DOUBLE_EQ(rt::quantile({1.0, 2.0, 3.0}, 1.5), 3.0);
  EXPECT_DOUBLE_EQ(rt::quantile({1.0, 2.0, 3.0}, std::numeric_limits<double>::quiet_NaN()), 1.0);
}

// Bug guarded: a nearest-rank rule (rounded or ceil'd index) passed off as the documented type 7.
// h = q (n - 1); the answer interpolates between x[floor h] and x[floor h + 1].
TEST(OrderStats, InterpolatesBetweenClosestRanks) {
  const std::vector<double> even = {1.0, 2.0, 3.0, 4.0};           // n = 4: h = 3q
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(even, 0.25), 1.75);         // h = 0.75
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(even, 1.0 / 3.0), 2.0);     // h = 1: exactly a rank
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(even, 0.9), 3.7);           // h = 2.7
  const std::vector<double> odd = {10.0, 20.0, 30.0, 40.0, 50.0};  // n = 5: h = 4q
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(odd, 0.1), 14.0);           // h = 0.4
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(odd, 0.9), 46.0);           // h = 3.6
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(odd, 0.75), 40.0);          // h = 3
  // 15 trials (a quick calibration): p10 sits at h = 1.4.
  std::vector<double> fifteen;
  for (int i = 0; i < 15; ++i) fifteen.push_back(i);
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(fifteen, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(rt::quantile_sorted(fifteen, 0.9), 12.6);
}

TEST(OrderStats, EmptyAndNonFinite) {
  EXPECT_EQ(rt::quantile({}, 0.5), 0.0);
  EXPECT_EQ(rt::median({}), 0.0);
  EXPECT_EQ(rt::quantile_sorted(nullptr, 0, 0.5), 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(rt::sorted_sample({3.0, nan, 1.0, -inf, 2.0, inf}), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_DOUBLE_EQ(rt::median({nan, 4.0, 2.0}), 3.0);
  EXPECT_EQ(rt::median({nan, inf}), 0.0);
  const rt::order_summary none = rt::summarize_order({nan});
  EXPECT_EQ(none.n, 0u);
  EXPECT_EQ(none.min, 0.0);
  EXPECT_EQ(none.max, 0.0);
}

TEST(OrderStats, SummaryIsMinMedianMax) {
  const rt::order_summary s = rt::summarize_order({30.7, 30.6, 30.9, 30.8});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.min, 30.6);
  EXPECT_DOUBLE_EQ(s.median, 30.75);
  EXPECT_DOUBLE_EQ(s.max, 30.9);
}

// Bug guarded: the O(n) variant for large samples (nth_element) taking the next rank from the
// wrong side of the partition, so it disagreed with the sorted rule.
TEST(OrderStats, InPlaceAgreesWithSorted) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(0.0, 1000.0);
  for (std::size_t n : {1u, 2u, 3u, 10u, 101u, 1000u}) {
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng);
    const std::vector<double> sorted = rt::sorted_sample(v);
    for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0}) {
      std::vector<double> scratch = v;
      EXPECT_DOUBLE_EQ(rt::quantile_in_place(scratch, q), rt::quantile_sorted(sorted, q))
          << "n " << n << " q " << q;
    }
  }
  std::vector<double> empty;
  EXPECT_EQ(rt::quantile_in_place(empty, 0.5), 0.0);
}

// Bug guarded: sample_summary keeping a rank rule of its own (it rounded h to the nearest rank,
// so its p10/p90 and its even-size median differed from every other median in spinwise).
TEST(OrderStats, SampleSummaryUsesTheOneRule) {
  const std::vector<double> v = {6.0, 1.0, 5.0, 2.0, 4.0, 3.0};
  const sw::sample_summary s = sw::summarize(v);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.p10, rt::quantile(v, 0.1));
  EXPECT_DOUBLE_EQ(s.p10, 1.5);  // h = 0.5
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p90, 5.5);  // h = 4.5
  EXPECT_DOUBLE_EQ(s.max, 6.0);
}
