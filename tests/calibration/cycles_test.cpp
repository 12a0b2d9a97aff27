// Core cycles: the perf_event counter (or its clear refusal) and the dependent-add-chain estimate.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/cycles.hpp"
#include "spinwise/runtime/relax_cost.hpp"

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

// Guards against a compiler shortening the chain (GCC reassociated an unsigned version, summing
// the 16 operands first: the "core clock" came out 2x too fast). The two-operation chain must
// take about twice as long as the one-operation chain; a ratio measured in one run, interleaved
// trial by trial, with a wide window. Native x86-64 only: under qemu the chains are translated
// code with no fixed ratio.
TEST(CoreClock, ChainIsLatencyBound) {
  sw::core_clock_estimate e = sw::estimate_core_clock();
  EXPECT_EQ(e.ticks_per_add.n, 31u);
  EXPECT_GT(e.hz, 0);
  EXPECT_GT(e.ticks_per_cycle, 0);
  if (sw::backend_name() != "x86_64") GTEST_SKIP() << "ratio checked on native x86-64 only";
  for (int attempt = 0; attempt < 3 && !(e.chain_check > 1.4 && e.chain_check < 2.8); ++attempt) {
    e = sw::estimate_core_clock();
  }
  EXPECT_GT(e.chain_check, 1.4);
  EXPECT_LT(e.chain_check, 2.8);
}

TEST(CoreClock, SourceNamesRoundTrip) {
  for (sw::cycles_source s : {sw::cycles_source::automatic, sw::cycles_source::perf, sw::cycles_source::estimate}) {
    sw::cycles_source back = sw::cycles_source::perf;
    ASSERT_TRUE(sw::parse_cycles_source(sw::to_string(s), back));
    EXPECT_EQ(back, s);
  }
  sw::cycles_source untouched = sw::cycles_source::perf;
  EXPECT_FALSE(sw::parse_cycles_source("pmu", untouched));
  EXPECT_EQ(untouched, sw::cycles_source::perf);
}
