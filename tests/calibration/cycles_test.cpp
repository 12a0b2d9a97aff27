// Core cycles: the perf_event counter (or its clear refusal) and the dependent-add-chain estimate.
#include "spinwise/runtime/cycles.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/relax_cost.hpp"
#include "test_util.hpp"

namespace sw = spinwise;

// Guards against the forced-off switch being ignored (CI could not exercise the fallback on a
// machine with a PMU) and against a failed open leaving no reason.
TEST(PerfCycles, ForcedOffRefusesWithAReason) {
  ::setenv("SPINWISE_NO_PERF", "1", 1);
  sw::perf_cycle_counter pc;
  EXPECT_FALSE(pc.open());
  ::unsetenv("SPINWISE_NO_PERF");
  EXPECT_FALSE(pc.valid());
  EXPECT_NE(pc.error().find("SPINWISE_NO_PERF"), std::string::npos) << pc.error();
  std::uint64_t v = 0;
  EXPECT_FALSE(pc.read(v));
}

// Either the counter works (it counts, and relax trials get counted cycles) or it says why not.
TEST(PerfCycles, OpensAndCountsOrExplains) {
  sw::perf_cycle_counter pc;
  if (!pc.open()) {
    EXPECT_FALSE(pc.error().empty());
    GTEST_SKIP() << "no perf cycle counter here: " << pc.error();
  }
  std::uint64_t a = 0, b = 0;
  ASSERT_TRUE(pc.read(a));
  cpu_relax_n(sw::relax_kind::none, 100000);
  ASSERT_TRUE(pc.read(b));
  EXPECT_GT(b, a);
  sw::relax_cost_options o;
  o.trials = 7;
  o.perf = &pc;
  const sw::relax_cost c = sw::measure_relax_cost(o);
  EXPECT_EQ(c.perf_cycles.n, 7u);
  sw::perf_cycle_counter moved = std::move(pc);
  EXPECT_TRUE(moved.valid());
  EXPECT_FALSE(pc.valid());  // NOLINT(bugprone-use-after-move): moved-from state is part of the contract
}

// Bug guarded: a core clock estimate judged wrongly. The chain check exists because a compiler
// once shortened the add chain (GCC reassociated an unsigned version, summing the 16 operands
// first: the "core clock" came out 2x too fast). Whether this build's chain is latency bound is a
// timing, so it is reported, not asserted: calibrate() warns "core clock estimate implausible
// (chain check ...)" and spinwise-calibrate prints the chain check. What a test can hold fixed is
// the verdict on given trials: a latency-bound pair passes at the right clock; a shortened chain,
// a chain no slower with two operations per step, or a clock out of range is implausible.
TEST(CoreClock, VerdictOnMadeUpTrials) {
  constexpr std::uint64_t kCounterHz = 2'300'000'000;  // a 2.3 GHz TSC
  constexpr double kTicksPerCycle = 2.3 / 3.0;         // under a 3.0 GHz core
  // 31 trials; a few hit by an interrupt, which the medians must ignore.
  auto trials = [](double ticks_per_step, int every, double extra) {
    std::vector<double> v;
    for (int t = 0; t < 31; ++t) v.push_back(ticks_per_step + (t % every == 0 ? extra : 0.0));
    return v;
  };
  const sw::core_clock_estimate e = sw::detail::core_clock_from_trials(
      trials(kTicksPerCycle, 10, 5.0), trials(2 * kTicksPerCycle, 7, 9.0), kCounterHz);
  EXPECT_EQ(e.ticks_per_add.n, 31u);
  EXPECT_DOUBLE_EQ(e.ticks_per_cycle, kTicksPerCycle);
  EXPECT_NEAR(e.hz, 3.0e9, 1.0);
  EXPECT_DOUBLE_EQ(e.chain_check, 2.0);
  EXPECT_TRUE(e.plausible);

  struct made_up {
    double one, two;  // ticks per step of each chain
    bool plausible;
    const char* what;
  };
  const made_up cases[] = {
      {kTicksPerCycle / 2, 2 * kTicksPerCycle, false, "one-op chain shortened 2x (6 GHz, check 4)"},
      {kTicksPerCycle, kTicksPerCycle, false, "two ops per step no slower (check 1)"},
      {kTicksPerCycle, 1.5 * kTicksPerCycle, false, "check 1.5"},
      {kTicksPerCycle, 2.5 * kTicksPerCycle, false, "check 2.5"},
      {kTicksPerCycle, 1.7 * kTicksPerCycle, true, "check 1.7"},
      {kTicksPerCycle, 2.3 * kTicksPerCycle, true, "check 2.3"},
      {46.0, 92.0, false, "50 MHz: a tick taken for a cycle"},
      {0.2, 0.4, false, "11.5 GHz"},
      {0.0, 0.0, false, "no time measured"},
  };
  for (const made_up& c : cases) {
    const sw::core_clock_estimate m =
        sw::detail::core_clock_from_trials(trials(c.one, 1, 0.0), trials(c.two, 1, 0.0), kCounterHz);
    EXPECT_EQ(m.plausible, c.plausible)
        << c.what << ": chain check " << m.chain_check << ", " << m.hz << " Hz";
    if (c.one > 0) {
      EXPECT_NEAR(m.chain_check, c.two / c.one, 1e-12) << c.what;
      EXPECT_NEAR(m.hz, static_cast<double>(kCounterHz) / c.one, 1e-3) << c.what;
    } else {
      EXPECT_EQ(m.hz, 0) << c.what;
    }
  }
}

// The real estimate on this CPU runs and gives a clock: sanity bounds only, no ratio (timings
// belong to spinwise-calibrate's output, see above).
TEST(CoreClock, RealEstimateIsAFiniteClock) {
  const sw::core_clock_estimate e = sw::estimate_core_clock();
  EXPECT_EQ(e.ticks_per_add.n, 31u);
  EXPECT_GT(e.hz, 0);
  EXPECT_TRUE(std::isfinite(e.hz));
  EXPECT_GT(e.ticks_per_cycle, 0);
  EXPECT_TRUE(std::isfinite(e.ticks_per_cycle));
  EXPECT_GT(e.chain_check, 0);
  EXPECT_TRUE(std::isfinite(e.chain_check));
}

TEST(CoreClock, SourceNamesRoundTrip) {
  spinwise_test::expect_names_round_trip(
      {sw::cycles_source::automatic, sw::cycles_source::perf, sw::cycles_source::estimate},
      sw::parse_cycles_source, "pmu", sw::cycles_source::perf);
}
