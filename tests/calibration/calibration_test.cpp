// Calibration: option checks, a real (quick) run over every CPU, the perf-unavailable path forced
// on purpose, the units quick and full runs report in, and the recommendation arithmetic.
#include "spinwise/runtime/calibration.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/relax_cost.hpp"

namespace sw = spinwise;
using spinwise::runtime::allowed_cpus;

namespace {

std::vector<sw::relax_kind> supported() {
  std::vector<sw::relax_kind> out;
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (sw::relax_supported(k)) out.push_back(k);
  }
  return out;
}

// Sets an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    ::setenv(name, value, 1);
  }
  ~scoped_env() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

// Guards against a typo'd CPU or an unsupported relax kind being silently skipped (the operator
// would get a profile without the CPU they asked about, or SIGILL on a missing instruction).
TEST(CalibrationOptions, BadRequestsAreRefusedWithAReason) {
  sw::calibration_options o;
  EXPECT_EQ(sw::check_calibration_options(o), "");
  o.cpus = {4095};
  EXPECT_NE(sw::check_calibration_options(o).find("cpu 4095 does not exist"), std::string::npos)
      << sw::check_calibration_options(o);
  o.cpus = {-1};
  EXPECT_NE(sw::check_calibration_options(o).find("cpu -1"), std::string::npos);
  o.cpus.clear();
  o.trials = 1;
  EXPECT_NE(sw::check_calibration_options(o).find("trials"), std::string::npos);
  o.trials = 0;
  for (double bad : {-5.0, std::nan(""), 1e12}) {
    o.target_ns = bad;
    EXPECT_NE(sw::check_calibration_options(o).find("target"), std::string::npos) << bad;
  }
  o.target_ns = 0;
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (sw::relax_supported(k)) continue;
    o.kinds = {k};
    EXPECT_NE(sw::check_calibration_options(o).find("not supported"), std::string::npos) << sw::to_string(k);
    sw::calibration_result r;
    std::string why;
    EXPECT_FALSE(sw::calibrate(o, r, &why));
    EXPECT_FALSE(why.empty());
  }
}

// Guards against a CPU or a relax kind missing from the result, against figures without their
// source, and against calibration leaving the caller pinned to the last CPU it measured.
TEST(Calibration, QuickRunCoversEveryCpuAndKind) {
  const std::vector<int> before = allowed_cpus();
  sw::calibration_options o;
  o.quick = true;
  std::size_t progress_calls = 0;
  o.progress = [&](const sw::calibration_progress& p) {
    ++progress_calls;
    EXPECT_LE(p.step, p.steps);
  };
  sw::calibration_result r;
  std::string why;
  ASSERT_TRUE(sw::calibrate(o, r, &why)) << why;
  EXPECT_EQ(allowed_cpus(), before) << "affinity not restored";
  const std::vector<sw::relax_kind> kinds = supported();
  ASSERT_EQ(r.cpus.size(), before.size());
  EXPECT_EQ(progress_calls, before.size() * kinds.size());
  EXPECT_EQ(r.settings.trials, 15u);
  EXPECT_FALSE(r.settings.cycles_used.empty());
  EXPECT_EQ(r.machine.arch, std::string(sw::backend_name()));
  EXPECT_GT(r.machine.counter_hz, 0u);
  for (const sw::cpu_calibration& c : r.cpus) {
    ASSERT_TRUE(c.error.empty()) << "cpu " << c.cpu << ": " << c.error;
    ASSERT_EQ(c.relax.size(), kinds.size());
    EXPECT_GT(c.core_hz, 0);
    for (const sw::relax_measurement& m : c.relax) {
      EXPECT_EQ(m.trials, 15u);
      EXPECT_GE(m.relaxes_per_trial, 16u);
      EXPECT_EQ(m.ticks.n, 15u);
      EXPECT_GE(m.ns_median, 0);
      EXPECT_TRUE(m.cycles_method == "perf_event" || m.cycles_method == "estimate") << m.cycles_method;
    }
  }
  EXPECT_FALSE(r.summaries.empty());
  EXPECT_GT(r.settings.target_ns, 0);
  EXPECT_FALSE(r.settings.target_reason.empty());
  for (const sw::recommendation& rec : r.recommendations) {
    EXPECT_GE(rec.innodb_pause_multiplier, 1u);
    EXPECT_LE(rec.innodb_pause_multiplier, 100u);
    EXPECT_GE(rec.relaxes_per_unit, 1u);
    ASSERT_GE(rec.ut_delay.size(), 2u);
    EXPECT_EQ(rec.ut_delay[0].spin_wait_delay, 6u);
    EXPECT_EQ(rec.ut_delay[1].spin_wait_delay, 30u);
  }
}

// The perf-unavailable path, forced on purpose: CI machines have no PMU, but a developer's may,
// and the fallback must keep working (and say so) there too.
TEST(Calibration, PerfUnavailableFallsBackToTheEstimate) {
  sw::calibration_options o;
  o.quick = true;
  o.cpus = {allowed_cpus().front()};
  o.cycles = sw::cycles_source::estimate;
  sw::calibration_result r;
  std::string why;
  ASSERT_TRUE(sw::calibrate(o, r, &why)) << why;
  EXPECT_EQ(r.settings.cycles_used, "estimate");
  EXPECT_NE(r.settings.perf_error.find("not tried"), std::string::npos) << r.settings.perf_error;
  for (const sw::relax_measurement& m : r.cpus.at(0).relax) EXPECT_EQ(m.cycles_method, "estimate");

  // Automatic source with perf switched off: falls back, and records why.
  scoped_env off("SPINWISE_NO_PERF", "1");
  o.cycles = sw::cycles_source::automatic;
  ASSERT_TRUE(sw::calibrate(o, r, &why)) << why;
  EXPECT_EQ(r.settings.cycles_used, "estimate");
  EXPECT_NE(r.settings.perf_error.find("SPINWISE_NO_PERF"), std::string::npos) << r.settings.perf_error;
  for (const sw::relax_measurement& m : r.cpus.at(0).relax) {
    EXPECT_EQ(m.cycles_method, "estimate");
    EXPECT_GT(m.cycles_median, 0);
  }

  // perf demanded but unavailable: a clear error, no half result.
  o.cycles = sw::cycles_source::perf;
  sw::calibration_result untouched;
  untouched.tool = "untouched";
  EXPECT_FALSE(sw::calibrate(o, untouched, &why));
  EXPECT_NE(why.find("perf_event"), std::string::npos) << why;
  EXPECT_EQ(untouched.tool, "untouched");
}

// Bug guarded: a unit error in the relax cost, which quick and full calibration share: a trial's
// ticks reported per trial instead of per relax (x16 or more), the counter reads' own cost left in
// (cheap kinds), ticks or core cycles reported as ns (x2.3, x3 here). Made-up counter readings,
// so the expected figures are exact.
TEST(Calibration, TrialTicksArePerRelaxNetOfTheCounterReads) {
  // 200 relaxes of 13 ticks, timed by reads that cost 30 ticks themselves.
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_per_op(1'000'000, 1'000'000 + 30 + 200 * 13, 30.0, 200), 13.0);
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_per_op(5, 5 + 64, 0.0, 16), 4.0);
  // A trial shorter than the reads' floor (a cheap kind, a lucky pair of reads) is 0, not negative.
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_per_op(100, 120, 30.0, 16), 0.0);
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_to_ns(23.0, 2'300'000'000), 10.0);  // 2.3 GHz TSC
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_to_ns(3.0, 1'000'000'000), 3.0);
  EXPECT_DOUBLE_EQ(sw::runtime::ticks_to_ns(24.0, 24'000'000), 1000.0);  // aarch64's 24 MHz CNTVCT
}

// The same through a real quick and a real full calibration: each reports its ns as its ticks per
// relax at the counter rate, and its estimated cycles as those ticks at the estimated core clock.
// Bug guarded: a path that converts with its own (wrong) factor, e.g. ticks or cycles stored as
// ns. Only the arithmetic between reported figures is checked, never how long a relax took (that
// varies with the machine's load); the two runs are not compared with each other.
TEST(Calibration, QuickAndFullReportTheirTicksInTheSameUnits) {
  const int cpu = allowed_cpus().front();
  const sw::relax_kind kind = sw::default_relax();
  const double counter_hz = static_cast<double>(sw::counter_frequency());

  sw::calibration_options o;
  o.cpus = {cpu};
  o.kinds = {kind};
  o.discover_topology = false;
  sw::calibration_result full;
  std::string why;
  ASSERT_TRUE(sw::calibrate(o, full, &why)) << why;
  ASSERT_EQ(full.cpus.size(), 1u);
  const sw::cpu_calibration& c = full.cpus[0];
  ASSERT_EQ(c.relax.size(), 1u);
  const sw::relax_measurement& m = c.relax[0];
  ASSERT_GT(m.ticks.median, 0);
  ASSERT_TRUE(std::isfinite(m.ticks.median));
  EXPECT_NEAR(m.ns_median, m.ticks.median * 1e9 / counter_hz, m.ns_median * 1e-12) << "full: ns from ticks";
  if (m.cycles_method == "estimate") {
    ASSERT_GT(c.ticks_per_cycle, 0);
    EXPECT_NEAR(m.cycles_median, m.ticks.median / c.ticks_per_cycle, m.cycles_median * 1e-12)
        << "full: cycles";
  }

  const sw::quick_calibration q = sw::quick_calibrate(kind);
  EXPECT_EQ(q.kind, kind);
  EXPECT_GT(q.elapsed_ms, 0);
  ASSERT_GT(q.ticks, 0);
  ASSERT_TRUE(std::isfinite(q.ticks));
  EXPECT_NEAR(q.ns, q.ticks * 1e9 / counter_hz, q.ns * 1e-12) << "quick: ns from ticks";
  if (q.core_hz > 0) {
    EXPECT_NEAR(q.cycles, q.ticks * q.core_hz / counter_hz, q.cycles * 1e-9) << "quick: cycles";
  }
}

// Guards against apply_quick_calibration installing nothing (engines would keep the header's
// cruder estimate) or installing garbage.
TEST(Calibration, ApplyQuickInstallsForTheActiveKind) {
  sw::clear_relax_ns();
  ASSERT_FALSE(sw::relax_ns_installed());
  sw::quick_calibration q;
  ASSERT_TRUE(sw::apply_quick_calibration(sw::active_relax(), &q));
  EXPECT_TRUE(sw::relax_ns_installed());
  EXPECT_NEAR(sw::relax_ns_here(), std::max(q.ns, 0.05), std::max(q.ns, 0.05) * 1e-6);
  sw::clear_relax_ns();
}

// The incident's arithmetic (the MySQL manual, "Configuring Spin Lock Polling"): InnoDB waits random[0,
// delay) x 50 PAUSEs per round. At the default delay 6 that is at most 250 PAUSEs: ~14 us with Skylake's ~56
// ns PAUSE, 3.3 us with the reference VM's 13 ns one.
TEST(Recommendations, UtDelayArithmetic) {
  const sw::ut_delay_figure sky = sw::ut_delay(6, 50, 56.0);
  EXPECT_EQ(sky.max_relaxes, 250u);
  EXPECT_DOUBLE_EQ(sky.mean_relaxes, 125.0);
  EXPECT_DOUBLE_EQ(sky.max_us, 14.0);
  EXPECT_DOUBLE_EQ(sky.mean_us, 7.0);
  const sw::ut_delay_figure d30 = sw::ut_delay(30, 50, 13.0);
  EXPECT_EQ(d30.max_relaxes, 1450u);
  EXPECT_DOUBLE_EQ(d30.max_us, 18.85);
  EXPECT_EQ(sw::ut_delay(0, 50, 13.0).max_relaxes, 0u);
  EXPECT_EQ(sw::ut_delay(1, 50, 13.0).max_relaxes, 0u);
}

// Guards against the figure the default target's reason quotes drifting from InnoDB's budget:
// 500 core cycles.
TEST(Recommendations, InnodbBudgetIsFiveHundredCycles) {
  EXPECT_NEAR(sw::innodb_budget_ns(3.0e9), 166.6667, 1e-3);
  EXPECT_NEAR(sw::innodb_budget_ns(2.0e9), 250.0, 1e-9);
  EXPECT_NEAR(sw::innodb_budget_ns(0), 200.0, 1e-9) << "no clock: 2.5 GHz assumed";
  EXPECT_NEAR(sw::innodb_budget_ns(5e12), 200.0, 1e-9) << "implausible clock: 2.5 GHz assumed";
}

namespace {

sw::calibration_result one_kind_result(double relax_ns, double core_hz) {
  sw::calibration_result r;
  sw::cpu_calibration c;
  c.cpu = 0;
  c.core_hz = core_hz;
  c.core_clock_plausible = true;
  sw::relax_measurement m;
  m.kind = sw::relax_kind::pause;
  m.trials = 15;
  m.ticks.median = relax_ns;
  m.ticks.status = sw::stability::stable;
  m.ns_median = relax_ns;
  c.relax.push_back(m);
  m.kind = sw::relax_kind::none;  // loop overhead only: no recommendation
  m.ns_median = 0.3;
  c.relax.push_back(m);
  r.cpus.push_back(c);
  sw::summarize_kinds(r);
  sw::derive_recommendations(r);
  return r;
}

}  // namespace

// Guards against the multiplier being computed upside down or unclamped: a Skylake PAUSE (140
// cycles at 2.5 GHz = 56 ns) needs ~4 PAUSEs for the 200 ns a pre-Skylake unit took (MySQL's
// WL#12616 suggested 50/10), a Broadwell one (~5 ns) about 40.
TEST(Recommendations, MultiplierKeepsTheUnitInTime) {
  sw::calibration_result sky = one_kind_result(56.0, 2.5e9);
  ASSERT_EQ(sky.recommendations.size(), 1u) << "no recommendation for relax kind none";
  const sw::recommendation& s = sky.recommendations[0];
  EXPECT_NEAR(s.target_ns, 200.0, 1e-9);
  EXPECT_EQ(s.innodb_pause_multiplier, 4u);
  EXPECT_EQ(s.relaxes_per_unit, 4u);
  EXPECT_FALSE(s.multiplier_clamped);
  EXPECT_NEAR(s.innodb_unit_ns, 224.0, 1e-9);
  ASSERT_EQ(s.ut_delay.size(), 4u);
  EXPECT_EQ(s.ut_delay[2].pause_multiplier, 4u);
  EXPECT_NEAR(s.ut_delay[0].max_us, 14.0, 1e-9);

  EXPECT_EQ(one_kind_result(5.0, 2.2e9).recommendations[0].innodb_pause_multiplier, 40u);

  // A relax far cheaper than the budget: MySQL caps the multiplier at 100, and says so.
  const sw::calibration_result fast_cpu = one_kind_result(0.9, 3e9);
  const sw::recommendation& fast = fast_cpu.recommendations.at(0);
  EXPECT_EQ(fast.innodb_pause_multiplier, 100u);
  EXPECT_TRUE(fast.multiplier_clamped);
  EXPECT_EQ(fast.relaxes_per_unit, 222u);
}

// Bug guarded: spinwise-calibrate recommended a delay_unit_ns (500 core cycles at the
// measured clock) that the library never used, while its locks waited 200 ns units and the
// profile applied nothing of it. The default target is the time policy's own default unit, on
// every machine and at every core clock, and the recommendation says that nothing is to be set;
// only a target given by the operator recommends another unit, which the profile still does not
// apply (Profile.ApplyingSetsNoKnob).
TEST(Recommendations, DefaultTargetIsTheTimePolicysUnit) {
  EXPECT_EQ(sw::kDefaultTargetNs, static_cast<double>(sw::time_settings{}.delay_unit_ns));
  EXPECT_EQ(sw::kDefaultTargetNs, static_cast<double>(sw::time_policy<>::delay_unit_ns()));
  for (double hz : {2.0e9, 2.96e9, 5.2e9, 0.0}) {
    const sw::calibration_result r = one_kind_result(13.9, hz);
    ASSERT_EQ(r.recommendations.size(), 1u);
    const sw::recommendation& rec = r.recommendations[0];
    EXPECT_EQ(r.settings.target_ns, 200.0) << hz;
    EXPECT_EQ(rec.delay_unit_ns, 200.0) << "the core clock moved the unit: " << hz;
    EXPECT_TRUE(rec.delay_unit_is_default);
    EXPECT_EQ(rec.relaxes_per_unit, 14u);  // 200 / 13.9
    EXPECT_NE(r.settings.target_reason.find("time_policy's default delay unit"), std::string::npos)
        << r.settings.target_reason;
  }
  sw::calibration_result given = one_kind_result(13.9, 3e9);
  given.settings.target_ns = 400;
  sw::derive_recommendations(given);
  EXPECT_EQ(given.recommendations.at(0).delay_unit_ns, 400.0);
  EXPECT_FALSE(given.recommendations.at(0).delay_unit_is_default);
}

// The building block keeps its contract for existing callers: a fixed trial size is honoured.
TEST(RelaxCost, FixedTrialSizeAndRounds) {
  sw::relax_cost_options o;
  o.trials = 9;
  o.relaxes_per_trial = 64;
  o.rounds = 3;
  const sw::relax_cost c = sw::measure_relax_cost(o);
  EXPECT_EQ(c.trials, 9u);
  EXPECT_EQ(c.relaxes_per_trial, 64u);
  EXPECT_EQ(c.ticks.n, 9u);
  EXPECT_EQ(c.ticks_median, c.ticks.median);
  EXPECT_GE(c.round_drift, 0);
  EXPECT_EQ(c.perf_cycles.n, 0u) << "no perf counter was given";
  o.trials = 0;
  EXPECT_EQ(sw::measure_relax_cost(o).trials, 0u);
}
