// Core-to-core latency: the matrix made of the runs, the real measurement, the restored affinity.
#include "spinwise/runtime/c2c.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "spinwise/runtime/affinity.hpp"

namespace sw = spinwise;
using spinwise::runtime::allowed_cpus;

namespace {

double scale() {
  const char* s = std::getenv("SPINWISE_TEST_SCALE");
  const double v = s != nullptr ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

}  // namespace

// Bug guarded: a cell filled from another pair's measurement (a transposed or shifted index, a
// CPU number used as an index), the wrong run reported (the first or the fastest instead of the
// median), a round trip reported as one-way or left in counter ticks, a pair measured twice or
// with its CPUs swapped (the line must live on the first CPU's node), a failed pair reported as
// measured or one failure abandoning the other pairs. Made-up runs that differ for every pair,
// so that each cell says which pair it came from.
TEST(C2c, EachCellIsItsOwnPairsMedianRunHalved) {
  const std::vector<int> cpus = {5, 2, 9, 14};  // unsorted, not 0..n-1: an index is not a CPU
  const double ns_per_tick = 0.25;
  auto base_ticks = [](int a, int b) { return 1000.0 * a + 10.0 * b; };  // the pair's median run
  std::vector<std::pair<int, int>> asked;
  const auto fake = [&](int a, int b, std::string& why) -> std::vector<double> {
    asked.emplace_back(a, b);
    const double m = base_ticks(a, b);
    if (a == 5 && b == 9) {  // one run, then a failure: the pair is not measured
      why = "timed out (made up)";
      return {m};
    }
    if (a == 2 && b == 14) {  // no run at all
      why = "could not pin (made up)";
      return {};
    }
    return {m + 40, m, m - 30};  // unsorted; the median is m
  };
  const sw::c2c_result r = sw::detail::c2c_matrix(cpus, ns_per_tick, fake);

  const std::vector<std::pair<int, int>> pairs = {{5, 2}, {5, 9}, {5, 14}, {2, 9}, {2, 14}, {9, 14}};
  EXPECT_EQ(asked, pairs) << "each pair once, in order, the lower index's CPU first";
  EXPECT_EQ(r.cpus, cpus);
  ASSERT_EQ(r.one_way_ns.size(), cpus.size() * cpus.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    for (std::size_t j = 0; j < cpus.size(); ++j) {
      const int a = cpus[std::min(i, j)], b = cpus[std::max(i, j)];
      const bool failed = (a == 5 && b == 9) || (a == 2 && b == 14);
      if (i == j || failed) {
        EXPECT_LT(r.at(i, j), 0) << "cell (" << i << ", " << j << ") must be unmeasured";
      } else {
        EXPECT_DOUBLE_EQ(r.at(i, j), base_ticks(a, b) * ns_per_tick / 2)
            << "cell (" << i << ", " << j << ") is not cpus " << a << "-" << b
            << "'s median round trip / 2 in ns";
      }
    }
  }
  const std::vector<std::string> errors = {"cpus 5-9: timed out (made up)",
                                           "cpus 2-14: could not pin (made up)"};
  EXPECT_EQ(r.errors, errors);
}

// The real measurement on two CPUs: it runs, restores the caller's affinity and fills the pair
// (values are not checked beyond being a latency: timings are not asserted here).
TEST(C2c, RealPairIsMeasuredAndAffinityRestored) {
  const std::vector<int> before = allowed_cpus();
  if (before.size() < 2) GTEST_SKIP() << "needs two CPUs";
  sw::c2c_options o;
  o.cpus = {before[0], before[1]};
  o.round_trips = static_cast<std::uint32_t>(400 * scale());
  o.samples = 3;
  o.timeout_ms = 2000;
  const sw::c2c_result r = sw::measure_c2c(o);
  EXPECT_EQ(allowed_cpus(), before) << "affinity not restored";
  ASSERT_EQ(r.cpus, o.cpus);
  ASSERT_EQ(r.one_way_ns.size(), 4u);
  EXPECT_LT(r.at(0, 0), 0);
  EXPECT_LT(r.at(1, 1), 0);
  EXPECT_FALSE(r.method.empty());
  if (!r.errors.empty()) {
    // An emulator or an oversubscribed host may not run both threads at once: a timeout is a
    // reported outcome, not a crash or a hang.
    EXPECT_LT(r.at(0, 1), 0);
    GTEST_SKIP() << "pair not measured here: " << r.errors[0];
  }
  EXPECT_GT(r.at(0, 1), 0);
  EXPECT_TRUE(std::isfinite(r.at(0, 1)));
}

TEST(C2c, OneCpuHasNothingToMeasure) {
  const std::vector<int> cpus = allowed_cpus();
  sw::c2c_options o;
  o.cpus = {cpus[0]};
  const sw::c2c_result r = sw::measure_c2c(o);
  ASSERT_EQ(r.one_way_ns.size(), 1u);
  EXPECT_LT(r.at(0, 0), 0);
  EXPECT_TRUE(r.errors.empty());
}
