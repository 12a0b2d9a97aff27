// spinwise-stress's engine, in-process: the workload's accounting, both scenarios on every lock,
// the emulated relaxer, the policy wrapper's counts and the figures read from the library's lock
// statistics, the command line, the JSON / CSV / plot outputs, and the injected faults.
//
// Runs are bounded in time (a fraction of a second, times SPINWISE_TEST_SCALE) and small (a few
// threads, short fan-outs), so they fit TSan and qemu; each asserts that it did work. Nothing here
// asserts a timing.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "counted_policy.hpp"
#include "delay_sample.hpp"
#include "emulated_relaxer.hpp"
#include "histogram.hpp"
#include "lock_catalog.hpp"
#include "measurement.hpp"
#include "relax_drift.hpp"
#include "report.hpp"
#include "run_plan.hpp"
#include "running_monitor.hpp"
#include "scenario.hpp"
#include "session.hpp"
#include "spin_tally.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/runtime/lock_watch.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/runtime/uncertainty.hpp"
#include "spinwise/spinwise.hpp"
#include "spinwise/time_policy.hpp"
#include "spinwise/version.hpp"
#include "stuck_watch.hpp"
#include "summary.hpp"
#include "sweep.hpp"
#include "timed_rules.hpp"
#include "workload.hpp"

namespace st = spinwise::stress;

namespace {

double scale() {
  const char* s = std::getenv("SPINWISE_TEST_SCALE");
  const double v = s != nullptr ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

// A small run: few threads, short fan-out, well under a second.
st::workload_config small(st::scenario sc = st::scenario::stats_lock) {
  st::workload_config c;
  c.sc = sc;
  c.threads = 4;
  c.clients = 3;
  c.fanout = sc == st::scenario::stats_lock ? 24 : 1;
  c.duration_s = std::max(0.2, 0.6 * scale());
  c.warmup_s = c.duration_s / 4;
  c.work_before_ns = 1000;
  c.cs_ns = 500;
  c.work_after_ns = 1000;
  c.pages = 16;
  c.rows_per_page = 4;
  c.sample_ms = 5;
  c.verify = true;
  c.min_requests = 0;  // a fixed window, as these tests were written for (MinRequests* tests the rest)
  c.calibrate_ms = 0;  // the process's first calibration: no 100 ms per run
  return c;
}

// Every run, whatever it measured: the accounting closes and the protected data agrees.
void expect_sound(const st::run_result& r) {
  EXPECT_EQ(r.double_executed, 0u) << "a sub-query index ran twice";
  EXPECT_EQ(r.missing, 0u) << "a completed request lacked a sub-query";
  EXPECT_EQ(r.exclusion_errors, 0u) << "the latch let two writers in";
  EXPECT_EQ(
      r.subqueries_executed_all,
      static_cast<std::uint64_t>(r.config.fanout) * r.requests_completed_all + r.subqueries_in_cut_requests)
      << "sub-queries executed do not add up to fan-out x completed requests + the cut-off remainder";
  EXPECT_LE(r.requests_completed_all, r.requests_issued);
  EXPECT_GE(r.requests_issued, r.requests_completed_all);
  EXPECT_LE(r.requests_issued - r.requests_completed_all, r.config.clients)
      << "more than one request per client open";
}

// A run that completed requests in its window. On a loaded machine or under qemu a short window
// can pass before the first request completes; the window then doubles, twice at most. A lock
// that never lets a request finish still fails, after the third window.
st::run_result run_with_work(st::workload_config c) {
  st::run_result r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = st::run_workload(c);
    if (r.requests > 0) break;
    c.duration_s *= 2;
    c.warmup_s *= 2;
  }
  return r;
}

st::parse_outcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "spinwise-stress");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return st::parse_cli(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

// --- the histogram behind every percentile ---------------------------------------------------

// Guards against percentiles off by a bucket (or by the exact/log boundary at 64).
TEST(StressHistogram, ExactBelow64AndWithin3PercentAbove) {
  st::latency_histogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);

  st::latency_histogram big;
  for (std::uint64_t v = 1000; v < 1'001'000; v += 1000) big.record(v);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    const double exact = 1000.0 * std::ceil(p / 100.0 * 1000.0);
    const double got = static_cast<double>(big.percentile(p));
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(got, exact * 1.033) << p;
  }
  for (std::size_t i = 0; i + 1 < st::latency_histogram::kBuckets; ++i) {
    ASSERT_EQ(st::latency_histogram::index(st::latency_histogram::upper_bound(i)), i);
    ASSERT_EQ(st::latency_histogram::index(st::latency_histogram::upper_bound(i) + 1), i + 1);
  }
}

TEST(StressHistogram, MergeAndEmpty) {
  st::latency_histogram a, b, e;
  EXPECT_EQ(e.percentile(99), 0u);
  EXPECT_EQ(e.min(), 0u);
  a.record(10);
  b.record(1'000'000);
  a.merge(b);
  a.merge(e);
  EXPECT_EQ(a.count(), 2u);
  EXPECT_EQ(a.min(), 10u);
  EXPECT_EQ(a.max(), 1'000'000u);
  EXPECT_EQ(a.percentile(50), 10u);
  EXPECT_EQ(a.percentile(99.9), 1'000'000u);
}

// Guards against delay_accuracy percentiles off by more than a bucket: ratios land within 0.8%,
// percentiles are nearest-rank and stay within the recorded range, and merging adds up.
TEST(StressHistogram, RatiosWithinABucketAndMerged) {
  st::ratio_histogram h;
  EXPECT_EQ(h.percentile(50), 0.0);
  for (int i = 1; i <= 1000; ++i) h.record(0.5 + i / 1000.0);  // 0.501 .. 1.5
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_DOUBLE_EQ(h.min(), 0.501);
  EXPECT_DOUBLE_EQ(h.max(), 1.5);
  for (double p : {10.0, 50.0, 90.0}) {
    const double exact = 0.5 + std::ceil(p * 10.0) / 1000.0;
    EXPECT_NEAR(h.percentile(p), exact, exact * 0.008) << p;
  }
  EXPECT_LE(h.percentile(10), h.percentile(50));
  EXPECT_LE(h.percentile(50), h.percentile(90));
  EXPECT_DOUBLE_EQ(h.percentile(100), 1.5) << "kept within the recorded range";
  // Out of range and odd values land in the end buckets, never outside the array.
  st::ratio_histogram edges;
  for (double v : {0.0, 1e-9, 1e9, std::nan("")}) edges.record(v);
  EXPECT_EQ(edges.count(), 4u);
  EXPECT_EQ(st::ratio_histogram::index(0.0), 0u);
  EXPECT_EQ(st::ratio_histogram::index(1e9), st::ratio_histogram::kBuckets - 1);
  for (std::size_t i = 0; i < st::ratio_histogram::kBuckets; ++i) {
    ASSERT_EQ(st::ratio_histogram::index(st::ratio_histogram::middle(i)), i);
  }
  st::ratio_histogram a, b;
  a.record(2.0);
  b.record(0.25);
  b.record(4.0);
  a.merge(b);
  a.merge(st::ratio_histogram{});
  EXPECT_EQ(a.count(), 3u);
  EXPECT_DOUBLE_EQ(a.min(), 0.25);
  EXPECT_DOUBLE_EQ(a.max(), 4.0);
  EXPECT_NEAR(a.percentile(50), 2.0, 2.0 * 0.008);
}

// --- the emulated relax ------------------------------------------------------------------------

// Guards against an emulation that splits its time wrongly between native relaxes and the loop.
TEST(StressRelaxer, PlansAddUpToTheTarget) {
  const st::relax_calibration& cal = st::calibration();
  ASSERT_GT(cal.native_relax_ns, 0.0);
  ASSERT_GT(cal.loop_iter_ns, 0.0);
  ASSERT_GT(cal.counter_hz, 0.0);
  for (st::cpu_model m : {st::cpu_model::broadwell, st::cpu_model::skylake}) {
    const st::relax_plan p = st::make_plan(m);
    const double target = m == st::cpu_model::broadwell ? st::kBroadwellRelaxNs : st::kSkylakeRelaxNs;
    EXPECT_DOUBLE_EQ(p.target_ns, target);
    const double planned =
        p.native_per_relax * cal.native_relax_ns + p.loop_per_relax_q10 / 1024.0 * cal.loop_iter_ns;
    EXPECT_NEAR(planned, target, cal.loop_iter_ns) << st::to_string(m);
    // Shorter than this CPU's relax: loop only; longer: whole native relaxes plus a remainder.
    if (target < cal.native_relax_ns) {
      EXPECT_EQ(p.native_per_relax, 0u);
    } else {
      EXPECT_EQ(p.native_per_relax, static_cast<std::uint32_t>(target / cal.native_relax_ns));
    }
  }
  EXPECT_EQ(st::make_plan(st::cpu_model::native).native_per_relax, 0u);
  EXPECT_DOUBLE_EQ(st::make_plan(st::cpu_model::native).target_ns, cal.native_relax_ns);
  EXPECT_DOUBLE_EQ(st::make_plan(st::cpu_model::custom, 25.0).target_ns, 25.0);
  EXPECT_THROW(st::make_plan(st::cpu_model::custom, 0.0), std::invalid_argument);
  EXPECT_THROW(st::make_plan(st::cpu_model::custom, 1e6), std::invalid_argument);
}

// Guards against a wrong plan reaching the locks: the relaxer reports the emulated length the time
// policies convert with, and achieves about it.
TEST(StressRelaxer, ReportsAndAchievesTheEmulatedLength) {
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::skylake));
  EXPECT_DOUBLE_EQ(st::emulated_relaxer::relax_ns(), st::kSkylakeRelaxNs);
  EXPECT_GT(st::emulated_relaxer::measure_achieved_ns(1000), 0.0);
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::native));
}

// --- the drifting relax (--relax-drift) ----------------------------------------------------------

// Guards against a drift pattern that is not reproducible, leaves [1, F], never moves, or moves
// faster or slower than a few ms: the same seed gives the same segments, every level lies in
// [1, F], levels change every 2 to 5 ms and spread over the range, and factor 1 is no drift.
TEST(StressDrift, PatternIsSeededBoundedAndChangesEveryFewMs) {
  const st::drift_pattern p{3.0, st::drift_seed(1)};
  st::drift_cursor c(p);
  std::vector<double> levels;
  double lo = 3.0, hi = 1.0, prev_end = 0.0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const st::drift_segment s = c.at(prev_end);
    ASSERT_EQ(s.index, i);
    ASSERT_DOUBLE_EQ(s.start_ns, prev_end) << "segments must tile time";
    const double len = s.end_ns - s.start_ns;
    EXPECT_GE(len, st::kDriftMinSegmentNs) << i;
    EXPECT_LE(len, st::kDriftMaxSegmentNs) << i;
    EXPECT_GE(s.level, 1.0) << i;
    EXPECT_LE(s.level, 3.0) << i;
    lo = std::min(lo, s.level);
    hi = std::max(hi, s.level);
    levels.push_back(s.level);
    prev_end = s.end_ns;
  }
  EXPECT_EQ(std::set<double>(levels.begin(), levels.end()).size(), levels.size())
      << "a level that never changes";
  EXPECT_LT(lo, 1.2) << "200 levels uniform in [1, 3] reach near both ends";
  EXPECT_GT(hi, 2.8);

  // Deterministic: the same seed gives the same levels at the same times, looked up in any order
  // (a cursor walks back to the start for an earlier time); another seed gives others.
  st::drift_cursor again(p);
  const st::drift_pattern other{3.0, st::drift_seed(2)};
  int differ = 0;
  for (double t_ms : {0.0, 1.0, 7.5, 120.0, 3.0, 999.0, 0.5, 400.0}) {
    const double t = t_ms * 1e6;
    EXPECT_EQ(again.at(t).level, st::drift_level_at(p, t)) << t_ms;
    if (st::drift_level_at(other, t) != st::drift_level_at(p, t)) ++differ;
  }
  EXPECT_GE(differ, 6) << "--seed 2 replays --seed 1's drift";
  EXPECT_EQ(st::drift_level_at(p, -5.0), st::drift_level_at(p, 0.0))
      << "a time before the start is the start";
  const double mean = st::drift_mean_level(p, 0, 1e9);
  EXPECT_GT(mean, 1.7);
  EXPECT_LT(mean, 2.3);

  const st::drift_pattern off{1.0, st::drift_seed(1)};
  for (double t_ms : {0.0, 2.5, 100.0}) EXPECT_EQ(st::drift_level_at(off, t_ms * 1e6), 1.0);
}

// Guards against threads that emulate different CPUs at the same moment, or a relaxer that does
// not follow the pattern: four threads asking the relaxer for the level at the same counter
// readings (forward, then one step back) get the pattern's level there, each from its own place
// in the pattern, and no drift once stopped.
TEST(StressDrift, EveryThreadSeesThePatternsLevelAtAMoment) {
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::skylake));
  const st::drift_pattern p{3.0, st::drift_seed(7)};
  const std::uint64_t start = spinwise::read_counter();
  const double hz = static_cast<double>(spinwise::counter_frequency());
  std::vector<std::uint64_t> readings;
  for (int k = 0; k < 400; ++k) readings.push_back(start + static_cast<std::uint64_t>(k * 0.7e-3 * hz));
  readings.push_back(start + static_cast<std::uint64_t>(0.1 * hz));  // a counter that stepped back
  std::vector<double> want;
  for (std::uint64_t r : readings)
    want.push_back(st::drift_level_at(p, static_cast<double>(r - start) * (1e9 / hz)));

  st::emulated_relaxer::start_drift(p, start);
  std::vector<std::vector<double>> seen(4);
  std::vector<std::thread> threads;
  for (auto& out : seen) {
    threads.emplace_back([&readings, &out] {
      for (std::uint64_t r : readings) out.push_back(st::emulated_relaxer::drift_level(r));
      st::emulated_relaxer::begin_round(readings[3]);  // a round holds its start's level
      out.push_back(st::emulated_relaxer::drift_level(readings[3]));
      st::emulated_relaxer::relax_n(2);
      st::emulated_relaxer::end_round();
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<double> distinct(want.begin(), want.end());
  EXPECT_GT(distinct.size(), 50u) << "280 ms of pattern should hold ~80 levels";
  for (const auto& out : seen) {
    ASSERT_EQ(out.size(), want.size() + 1);
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out[i], want[i]) << "reading " << i;
    EXPECT_EQ(out.back(), want[3]);
  }
  st::emulated_relaxer::stop_drift();
  EXPECT_EQ(st::emulated_relaxer::drift_level(readings[5]), 1.0);
  EXPECT_DOUBLE_EQ(st::emulated_relaxer::relax_ns(), st::kSkylakeRelaxNs)
      << "the conversion keeps the nominal length";
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::native));
}

// --- the stress policy wrapper -----------------------------------------------------------------

namespace {

// A policy whose rounds delay by a script (0, 5, 0, 7 relaxes, again and again) with Relax R, and
// whose budget is 3 rounds.
template <class R>
struct scripted_policy {
  using relax = R;
  class waiter {
   public:
    void snooze() noexcept {
      static constexpr std::uint32_t kScript[4] = {0, 5, 0, 7};
      const std::uint32_t n = kScript[rounds_ % 4];
      if (n > 0) R::relax_n(n);  // as the clock-bounded policies: a zero delay issues nothing
      relaxes_ += n;
      ++rounds_;
    }
    bool is_completed() const noexcept { return rounds_ >= 3; }
    std::uint32_t rounds() const noexcept { return rounds_; }
    std::uint64_t relaxes() const noexcept { return relaxes_; }

   private:
    std::uint64_t relaxes_ = 0;
    std::uint32_t rounds_ = 0;
  };
};

// A relax that is descheduled in the middle of every call: 2 ms for what should cost 1 ns.
struct preempted_relax {
  static double relax_ns() noexcept { return 1.0; }
  static void relax_n(std::uint32_t) noexcept { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }
};

}  // namespace

// Guards against rounds that go uncounted or are counted per relax call: the wrapper counts, on
// the calling thread, each round that delayed and each zero-length one, whatever the policy does
// inside a round, one episode per waiter and one spent budget per episode.
TEST(StressPolicyWrapper, CountsRoundsEpisodesAndBudgetsOnItsThread) {
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::skylake));
  const st::spin_tally a = st::this_thread_tally();
  {
    st::counted<scripted_policy<st::emulated_relaxer>>::waiter w;
    for (int i = 0; i < 4; ++i) {
      w.snooze();
      (void)w.is_completed();
      (void)w.is_completed();
    }
  }
  const st::spin_tally d = st::this_thread_tally() - a;
  EXPECT_EQ(d.episodes, 1u);
  EXPECT_EQ(d.delay_rounds, 2u);
  EXPECT_EQ(d.zero_rounds, 2u);
  EXPECT_EQ(d.budgets_spent, 1u) << "one budget spent however often is_completed() is asked";
  EXPECT_LE(d.preempted_rounds, 2u);
  st::spin_tally other;
  std::thread([&] {
    st::counted<scripted_policy<st::emulated_relaxer>>::waiter w;
    w.snooze();
    w.snooze();
    other = st::this_thread_tally();
  }).join();
  EXPECT_EQ(other.episodes, 1u) << "another thread's rounds landed in a shared tally";
  EXPECT_EQ(other.delay_rounds, 1u);
  st::emulated_relaxer::configure(st::make_plan(st::cpu_model::native));
}

// Guards against a descheduled spinner counted as spinning without a trace: a round that took far
// longer than its relaxes cost is counted as preempted; a zero-length round never is.
TEST(StressPolicyWrapper, CountsPreemptedRounds) {
  const st::spin_tally a = st::this_thread_tally();
  st::counted<scripted_policy<preempted_relax>>::waiter w;
  w.snooze();  // zero-length
  w.snooze();  // 5 relaxes of 1 ns in 2 ms
  const st::spin_tally d = st::this_thread_tally() - a;
  EXPECT_EQ(d.zero_rounds, 1u);
  EXPECT_EQ(d.delay_rounds, 1u);
  EXPECT_EQ(d.preempted_rounds, 1u);
}

// --- the time policies' timed rules (delay_accuracy) --------------------------------------------

namespace {

// A relax on a counter of its own: each relax advances it by 7 ticks of 1 ns, so a delay's relaxes
// depend only on what it asked for, never on this machine's timing.
struct counter_relax {
  static inline std::uint64_t now = 0;
  static double relax_ns() noexcept { return 7.0; }
  static void relax_n(std::uint32_t n) noexcept { now += 7ull * n; }
  static std::uint64_t counter() noexcept { return now; }
  static double counter_ticks_per_ns() noexcept { return 1.0; }
};

// The relaxes `Rule` issues per round, for `rounds` rounds from jitter seed 99.
template <class Rule>
std::vector<std::uint64_t> issued_per_round(std::uint64_t knobs, std::uint32_t rounds) {
  spinwise::seed_spin_jitter(99);
  Rule rule;
  spinwise::detail::never_ready never;
  std::vector<std::uint64_t> out;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    if constexpr (spinwise::detail::rule_takes_until<Rule, counter_relax,
                                                     spinwise::detail::never_ready>::value) {
      out.push_back(rule.template delay<counter_relax>(knobs, r, never));
    } else {
      out.push_back(rule.template delay<counter_relax>(knobs, r));
    }
  }
  return out;
}

std::uint64_t word(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  namespace d = spinwise::detail;
  return d::knob_put(d::knob_put(d::knob_put(0, 0, a), 1, b), 2, c);
}

}  // namespace

// Guards against the stress copies of the time policies' rules drifting from the library's
// (include/spinwise/{time,exp_backoff}_policy.hpp): from the same jitter seed, each copy issues
// the relaxes the original issues, round for round, measuring or not; and the copy reports the
// ns the rule asked for.
TEST(StressTimedRules, CopiesIssueWhatTheLibraryRulesIssue) {
  namespace d = spinwise::detail;
  st::delay_sample sample;
  sample.hz = static_cast<double>(spinwise::counter_frequency());
  for (bool measuring : {false, true}) {
    st::t_delay_sink = measuring ? &sample : nullptr;
    for (std::uint64_t w :
         {word(6, 200, 30), word(1, 200, 30), word(0, 200, 30), word(30, 1000, 5), word(1000, 3, 9)}) {
      EXPECT_EQ(issued_per_round<st::timed_time_delay<false>>(w, 300),
                issued_per_round<d::time_delay<false>>(w, 300))
          << "time knobs " << d::knob_get(w, 0) << "/" << d::knob_get(w, 1);
      EXPECT_EQ(issued_per_round<st::timed_time_delay<true>>(w, 300),
                issued_per_round<d::time_delay<true>>(w, 300))
          << "time knobs " << d::knob_get(w, 0) << "/" << d::knob_get(w, 1);
    }
    for (std::uint64_t w :
         {word(32, 2048, 12), word(1, 1, 12), word(500, 100, 40), word(1000000, 1000000, 3)}) {
      EXPECT_EQ(issued_per_round<st::timed_exp_backoff_delay>(w, 40),
                issued_per_round<d::exp_backoff_delay>(w, 40))
          << "exp_backoff knobs " << d::knob_get(w, 0) << "/" << d::knob_get(w, 1);
    }
  }
  st::t_delay_sink = nullptr;

  // Requested ns as the rule asked: time with 6 x 200 ns asks 200..1000 ns; exp_backoff 32..2048
  // asks 16..2048 ns. (The real counter times them; their lengths are not checked.)
  st::delay_sample t;
  t.hz = sample.hz;
  st::t_delay_sink = &t;
  (void)issued_per_round<st::timed_time_delay<false>>(word(6, 200, 30), 200);
  st::t_delay_sink = nullptr;
  const std::uint64_t n =
      t.accuracy[0].count() + t.accuracy[1].count() + t.accuracy[2].count() + t.accuracy_preempted;
  EXPECT_GT(n, 100u) << "about 5 in 6 of 200 rounds ask for a delay";
  EXPECT_LT(n, 200u) << "a zero-unit round asked for a delay";
  EXPECT_EQ(t.requested_min_ns, 200.0);
  EXPECT_EQ(t.requested_max_ns, 1000.0);
  st::delay_sample e;
  e.hz = sample.hz;
  st::t_delay_sink = &e;
  (void)issued_per_round<st::timed_exp_backoff_delay>(word(32, 2048, 12), 12);
  st::t_delay_sink = nullptr;
  EXPECT_GE(e.requested_min_ns, 16.0);
  EXPECT_LE(e.requested_max_ns, 2048.0);
  EXPECT_GE(e.requested_max_ns, 1024.0) << "rounds 6 and on ask for [1024, 2048] ns";
}

// Guards against a descheduled delay read as a delay 1000x too long: a delay that took more than
// twice its request plus 50 us (the library's preemption rule) is counted apart, not measured.
TEST(StressTimedRules, PreemptedDelaysAreLeftOut) {
  st::delay_sample s;
  s.hz = 1e9;                      // 1 tick = 1 ns
  s.record_request(1000, 1100);    // 1.1x
  s.record_request(1000, 51'000);  // within 2 x 1000 + 50000: slow, not preempted
  s.record_request(1000, 60'000);  // preempted
  s.record_request(100, 90);       // below 200 ns: its own band
  s.record_request(50'000, 40'000);
  EXPECT_EQ(s.accuracy_preempted, 1u);
  EXPECT_EQ(s.accuracy[0].count(), 1u);
  EXPECT_EQ(s.accuracy[1].count(), 2u);
  EXPECT_EQ(s.accuracy[2].count(), 1u);
  EXPECT_NEAR(s.accuracy[1].min(), 1.1, 1e-12);
  EXPECT_EQ(s.requested_min_ns, 100.0);
  EXPECT_EQ(s.requested_max_ns, 50'000.0);
  s.record_round(2'000'000, 10, 100.0);  // 10 relaxes of 100 ticks in 2 ms: preempted
  s.record_round(1'500, 10, 100.0);
  EXPECT_EQ(s.rounds_preempted, 1u);
  EXPECT_EQ(s.round_ticks.count(), 1u);
  EXPECT_NEAR(s.relax_stretch.max(), 1.5, 1e-12);
  s.record_request(1000, 300, /*early=*/true);  // the lock came free: not the clock's accuracy
  EXPECT_EQ(s.accuracy_early, 1u);
  EXPECT_EQ(s.accuracy[1].count(), 2u) << "an early end is not an accuracy figure";
  st::delay_sample m;
  m.merge(s);
  m.merge(s);
  EXPECT_EQ(m.accuracy_early, 2u);
  EXPECT_EQ(m.accuracy_preempted, 2u);
  EXPECT_EQ(m.accuracy[1].count(), 4u);
  EXPECT_EQ(m.requested_min_ns, 100.0);
  EXPECT_EQ(m.round_ticks.count(), 2u);
}

// --- the workload ------------------------------------------------------------------------------

// Guards against lost or doubled sub-queries and requests completing before their fan-out.
TEST(StressWorkload, StatsLockAccountsForEverySubquery) {
  const st::run_result r = run_with_work(small());
  expect_sound(r);
  EXPECT_GT(r.requests, 0u) << "no request completed in the window";
  EXPECT_EQ(r.request_rt.count, r.requests);
  EXPECT_GE(r.subqueries, r.requests * r.config.fanout - r.config.fanout * r.config.clients);
  EXPECT_EQ(r.subquery_rt.count, r.subqueries);
  EXPECT_EQ(r.acquisitions, r.subqueries) << "one latch acquisition per sub-query";
  EXPECT_GT(r.requests_per_s, 0.0);
  EXPECT_GE(r.request_rt.p99_ns, r.request_rt.p50_ns);
  EXPECT_GE(r.request_rt.max_ns, r.request_rt.p999_ns);
  EXPECT_LE(r.window_s, r.config.duration_s);
  EXPECT_LT(r.total_s, r.config.duration_s + 5.0) << "the run did not end on its own";
}

// Guards against a fan-out of one (the hot-page shape) or many clients breaking the hand-back.
// The window is held open until threads + 1 requests are counted in it: a worker runs one
// sub-query at a time, so at most `threads` counted requests began before the window, and at least
// one began inside it and counted its statements. A fixed window alone (150 ms under TSan's scale)
// counted none when a loaded CI host stalled the process through it (a request that began before
// the window completed in it, no statement began in it).
TEST(StressWorkload, HotPageLatchesTheLastPage) {
  st::workload_config c = small(st::scenario::hot_page);
  c.clients = 8;
  c.min_requests = c.threads + 1;
  c.max_duration_s = 60;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  EXPECT_GT(r.requests, 0u);
  EXPECT_GT(r.inserts, 0u);
  EXPECT_GT(r.updates, 0u);
  EXPECT_GT(r.selects, 0u);
  EXPECT_EQ(r.acquisitions, r.inserts + r.updates + r.selects);
  EXPECT_EQ(r.latch_waits, r.insert_waits + r.update_waits + r.select_waits);
  EXPECT_EQ(r.config.lock.lock, "sx_lock");
}

// Bug guarded: --list-locks showed innodb as the default of locks whose library
// default was time (a hand-written table). Each spinwise lock's default here is its library
// alias's policy, and every policy is offered once.
TEST(StressCatalog, DefaultPolicyIsTheLibrarysOwn) {
  const std::vector<std::pair<std::string, std::string_view>> library = {
      {"hybrid_mutex", spinwise::hybrid_mutex::policy::name()},
      {"ttas_mutex", spinwise::ttas_mutex::policy::name()},
      {"tas_mutex", spinwise::tas_mutex::policy::name()},
      {"ticket_mutex", spinwise::ticket_mutex::policy::name()},
      {"mcs_mutex", spinwise::mcs_mutex::policy::name()},
      {"spin_shared_mutex", spinwise::spin_shared_mutex::policy::name()},
      {"rw_spinlock", spinwise::rw_spinlock::policy::name()},
      {"hybrid_shared_mutex", spinwise::hybrid_shared_mutex::policy::name()},
      {"sx_lock", spinwise::sx_lock::policy::name()},
  };
  for (const auto& [lock, policy] : library) {
    const st::lock_info* li = st::find_lock(lock);
    ASSERT_NE(li, nullptr) << lock;
    ASSERT_FALSE(li->policies.empty()) << lock;
    EXPECT_EQ(st::to_string(li->policies.front()), policy) << lock;
    st::lock_choice c;
    c.lock = lock;
    EXPECT_EQ(st::to_string(st::resolve_policy(c)), policy) << lock << ": no --policy runs the default";
    std::set<st::policy_kind> seen(li->policies.begin(), li->policies.end());
    EXPECT_EQ(seen.size(), 5u) << lock << ": every policy once";
  }
  EXPECT_EQ(spinwise::sx_lock::policy::name(), "time");
  EXPECT_EQ(spinwise::hybrid_shared_mutex::policy::name(), "time");
  // And the listing says so.
  const st::parse_outcome out = parse({"--list-locks"});
  EXPECT_NE(out.message.find("sx_lock  [shared]  (time, innodb"), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("hybrid_mutex  (time, innodb"), std::string::npos) << out.message;
}

// Every lock the tool offers, in both scenarios: it runs, does work, and keeps the data whole.
// Guards against a catalog entry wired to the wrong operations (shared vs exclusive).
TEST(StressWorkload, EveryLockInBothScenarios) {
  for (const st::lock_info& li : st::lock_catalog()) {
    for (st::scenario sc : {st::scenario::stats_lock, st::scenario::hot_page}) {
      st::workload_config c = small(sc);
      c.lock.lock = li.name;
      c.duration_s = 0.1;  // 20 runs: keep the test near two seconds at any scale
      c.warmup_s = 0.02;
      SCOPED_TRACE(li.name + " " + std::string(st::to_string(sc)));
      const st::run_result r = run_with_work(c);
      expect_sound(r);
      EXPECT_GT(r.subqueries_executed_all, 0u);
      EXPECT_EQ(r.counted, li.spinwise);
      EXPECT_EQ(li.lock_stats, li.spinwise)
          << "a spinwise lock must record into stress_latch: its spin time is read there";
      EXPECT_EQ(r.parks_exact, li.lock_stats) << "the lock's statistics did not reach the run";
    }
  }
}

// Guards against the emulated relaxer not being the one the locks spin with: a long critical
// section and no outside work make waiters spin, and the delay loops must show up.
TEST(StressWorkload, SpinDelaysAreMeasuredAndBudgetsCounted) {
  st::workload_config c = small();
  c.work_before_ns = 0;
  c.work_after_ns = 0;
  c.cs_ns = 20000;
  c.cpu = st::cpu_model::skylake;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  EXPECT_GT(r.latch_waits, 0u);
  EXPECT_GT(r.spin_episodes, 0u);
  EXPECT_GT(r.spin_rounds + r.zero_rounds, 0u);
  EXPECT_GT(r.spin_ns, 0.0);
  EXPECT_GT(r.spin_cpu_share, 0.0);
  EXPECT_GT(r.process_cpu_ns, 0.0);
  EXPECT_FALSE(r.semaphores.empty());

  // No spin rounds at all: every wait spends its budget at once and parks.
  c.lock.spin_loops = 0;
  const st::run_result p = run_with_work(c);
  expect_sound(p);
  EXPECT_TRUE(p.parking_lock);
  EXPECT_TRUE(p.parks_exact) << "hybrid_mutex counts its parks through its statistics policy";
  EXPECT_GT(p.budgets_spent, 0u);
  EXPECT_GT(p.parks, 0u);
  EXPECT_EQ(p.spin_rounds, 0u) << "spin_loops = 0 must not delay";
}

// Guards against the time policy not delaying at all with an emulated relax (no conversion, no
// round): Four
// workers with nothing to do outside a 20 us critical section keep the latch contended, so
// waiters delay; a run in which none did is run again, longer, and after the third such run the
// test fails: a check of rounds that never happened would pass whatever the conversion.
TEST(StressWorkload, TimePolicyConvertsAtTheEmulatedLength) {
  st::workload_config c = small();
  c.work_before_ns = 0;
  c.work_after_ns = 0;
  c.cs_ns = 20000;
  c.lock.policy = st::policy_kind::time;
  c.lock.spin_wait_delay = 10;
  for (st::cpu_model m : {st::cpu_model::broadwell, st::cpu_model::skylake}) {
    st::workload_config cm = c;
    cm.cpu = m;
    st::run_result r;
    for (int attempt = 0; attempt < 3; ++attempt) {
      r = run_with_work(cm);
      if (r.spin_rounds > 0) break;
      cm.duration_s *= 2;
      cm.warmup_s *= 2;
    }
    expect_sound(r);
    ASSERT_GT(r.spin_rounds, 0u) << st::to_string(m) << ": no waiter delayed in three runs (" << r.latch_waits
                                 << " latch waits, " << r.zero_rounds
                                 << " zero-length rounds): nothing converted";
    EXPECT_GT(r.relaxes, 0u) << st::to_string(m);
    // The delays end at a deadline on the counter (clock-bounded), so how many emulated relaxes a
    // round took is a timing, which a test does not assert (under qemu or a sanitizer one relax
    // takes far longer than its nominal length). What the emulated length decides, the chunk
    // between two counter reads, is checked with an injected counter in
    // ClockBoundedDelay.* (wait_policy_test); the achieved length is measured by delay_accuracy.
    const double mean_delay_ns = static_cast<double>(r.relaxes) * r.emulated_relax_ns / r.spin_rounds;
    EXPECT_GT(mean_delay_ns, 0.0) << st::to_string(m);
    EXPECT_TRUE(std::isfinite(mean_delay_ns)) << st::to_string(m);
  }
}

TEST(StressWorkload, ResolveFillsDefaultsAndRejectsNonsense) {
  st::workload_config c;
  const st::workload_config r = st::resolve(c);
  EXPECT_EQ(r.lock.lock, "hybrid_mutex");
  EXPECT_EQ(r.fanout, 256u);
  EXPECT_EQ(r.clients, 1u);
  EXPECT_EQ(r.threads, st::default_threads(st::available_cpus()));
  EXPECT_EQ(st::default_threads(8), 100u) << "the incident's 100 threads on 8 cores";
  EXPECT_DOUBLE_EQ(r.warmup_s, 1.0);
  EXPECT_EQ(r.min_requests, 1000u);
  EXPECT_DOUBLE_EQ(r.max_duration_s, 30.0) << "3 x --duration";
  EXPECT_DOUBLE_EQ(r.calibrate_ms, 100.0);
  EXPECT_EQ(st::resolve_policy(r.lock), st::policy_kind::time) << "hybrid_mutex's library default";
  c.sc = st::scenario::hot_page;
  EXPECT_EQ(st::resolve(c).lock.lock, "sx_lock");
  EXPECT_EQ(st::resolve(c).clients, 100u);
  c.duration_s = 1;
  c.warmup_s = 1;
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
  c.warmup_s = -1;
  c.max_duration_s = 0.5;  // shorter than the duration
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
  c.max_duration_s = -1;
  c.calibrate_ms = -1;
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
  c.calibrate_ms = 0;
  c.inserts = c.updates = c.selects = 0;
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
}

// Guards against a run that reads its spin and wait figures from the wrong lock class or the
// wrong counter: the library's statistics of "stress_latch" over the window give the time in spin
// delays, relaxes, contended waits, yields and parks; the thread tally gives what the library does
// not count. Another class's counters and the process's CPU time must not leak in.
TEST(StressMeasurement, SpinAndWaitsComeFromTheStressLatchClass) {
  st::run_result r;
  r.config = st::resolve(small());  // hybrid_mutex: a parking spinwise lock with statistics
  r.window_s = 2;
  r.cpus = 4;
  st::instant a, b;
  a.cpu_ns = 1e9;
  b.cpu_ns = 3e9;  // 2 s of process CPU in the window
  const auto with = [](const char* name, std::uint64_t base) {
    spinwise::lock_class_stats c;
    c.name = name;
    c.totals.acquisitions = 1000 * base;
    c.totals.contended = 10 * base;
    c.totals.rounds = 100 * base;
    c.totals.relaxes = 5000 * base;
    c.totals.spin_ticks = spinwise::counter_frequency() / 10 * base;  // 0.1 s per base
    c.totals.yields = 7 * base;
    c.totals.parks = 3 * base;
    return c;
  };
  a.stats.classes = {with("other", 50), with("stress_latch", 1)};
  b.stats.classes = {with("other", 90), with("stress_latch", 3)};
  st::spin_tally t;
  t.delay_rounds = 150;
  t.zero_rounds = 50;
  t.preempted_rounds = 2;
  t.episodes = 25;
  t.budgets_spent = 13;
  st::add_spin_and_waits(r, a, b, t);

  EXPECT_NEAR(r.spin_ns, 0.2e9, 1e3);  // 2 x 0.1 s
  EXPECT_DOUBLE_EQ(r.process_cpu_ns, 2e9);
  EXPECT_NEAR(r.spin_cpu_share, 0.1, 1e-9);
  EXPECT_NEAR(r.spin_machine_share, 0.2 / (2 * 4), 1e-9);
  EXPECT_EQ(r.relaxes, 10000u);
  EXPECT_EQ(r.contended, 20u);
  EXPECT_EQ(r.yields, 14u);
  EXPECT_EQ(r.parks, 6u);
  EXPECT_TRUE(r.parks_exact);
  EXPECT_DOUBLE_EQ(r.parks_per_s, 3.0);
  EXPECT_EQ(r.spin_rounds, 150u);
  EXPECT_EQ(r.zero_rounds, 50u);
  EXPECT_EQ(r.clipped_rounds, 2u);
  EXPECT_EQ(r.spin_episodes, 25u);
  EXPECT_EQ(r.budgets_spent, 13u);
  EXPECT_DOUBLE_EQ(r.budgets_spent_per_s, 6.5);
  EXPECT_NE(r.semaphores.find("stress_latch"), std::string::npos);
  EXPECT_EQ(r.semaphores.find("other"), std::string::npos) << "another lock class in the run's report";

  // A reference lock has no policy: no wait figures, and nothing read from the class.
  st::run_result s;
  s.config = r.config;
  s.config.lock.lock = "std::mutex";
  s.config.lock.policy.reset();
  s.window_s = 2;
  s.cpus = 4;
  st::add_spin_and_waits(s, a, b, st::spin_tally{});
  EXPECT_FALSE(s.counted);
  EXPECT_EQ(s.spin_ns, 0.0);
  EXPECT_EQ(s.parks, 0u);
  EXPECT_TRUE(s.semaphores.empty());
}

// --- the running-thread monitor ------------------------------------------------------------------

// Guards against a /proc parser that misreads the state field (comm may contain ") ").
TEST(StressMonitor, CountsRunningTasks) {
  std::atomic<bool> stop{false};
  std::atomic<bool> spinning{false};
  // One thread that keeps running, one that sleeps: the monitor must see the first as R.
  std::thread runner([&] {
    spinning.store(true);
    while (!stop.load()) {
    }
  });
  std::thread sleeper([&] {
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!spinning.load()) std::this_thread::yield();
  const std::vector<int> fds = st::running_monitor::open_task_stats();
  int most = -1;
  for (int i = 0; i < 200 && most < 1; ++i) {
    most = std::max(most, st::running_monitor::count_running(fds));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop.store(true);
  runner.join();
  sleeper.join();
  if (fds.empty()) GTEST_SKIP() << "/proc/self/task is not readable here";
  EXPECT_GE(fds.size(), 2u);
  EXPECT_GE(most, 1) << "a spinning thread was never seen running";
  EXPECT_LE(most, static_cast<int>(fds.size()));
}

// --- the command line ----------------------------------------------------------------------------

TEST(StressCli, DefaultsAndFlagsReachTheConfig) {
  st::parse_outcome p = parse({});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.sc, st::scenario::stats_lock);
  EXPECT_EQ(p.options.workload.fanout, 256u);
  p = parse({"--scenario",
             "hot-page",
             "--lock",
             "hybrid_shared_mutex",
             "--policy",
             "time",
             "--delay-unit-ns",
             "150",
             "--spin-wait-delay",
             "9",
             "--spin-loops",
             "12",
             "--cpu-model",
             "broadwell",
             "--threads",
             "7",
             "--clients",
             "5",
             "--fanout",
             "3",
             "--duration",
             "2.5",
             "--seed",
             "42",
             "--json",
             "-"});
  ASSERT_TRUE(p.run) << p.message;
  const st::workload_config& w = p.options.workload;
  EXPECT_EQ(w.sc, st::scenario::hot_page);
  EXPECT_EQ(w.lock.lock, "hybrid_shared_mutex");
  EXPECT_EQ(*w.lock.policy, st::policy_kind::time);
  EXPECT_EQ(*w.lock.delay_unit_ns, 150u);
  EXPECT_EQ(*w.lock.spin_wait_delay, 9u);
  EXPECT_EQ(*w.lock.spin_loops, 12u);
  EXPECT_EQ(w.cpu, st::cpu_model::broadwell);
  EXPECT_EQ(w.threads, 7u);
  EXPECT_EQ(w.clients, 5u);
  EXPECT_EQ(w.fanout, 3u);
  EXPECT_DOUBLE_EQ(w.duration_s, 2.5);
  EXPECT_EQ(w.seed, 42u);
  EXPECT_EQ(p.options.json_path, "-");
  p = parse({"--relax-ns", "33.5"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.cpu, st::cpu_model::custom);
  EXPECT_DOUBLE_EQ(p.options.workload.relax_ns, 33.5);
  EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 1.0) << "no drift unless asked";
  for (const char* m : {"native", "broadwell", "skylake"}) {
    p = parse({"--cpu-model", m, "--relax-drift", "2.5"});
    ASSERT_TRUE(p.run) << p.message;
    EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 2.5) << m;
  }
  p = parse({"--relax-ns", "20", "--relax-drift", "1"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_DOUBLE_EQ(p.options.workload.relax_drift, 1.0);
  p = parse({"--help"});
  EXPECT_FALSE(p.run);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.message.find("--pause-multiplier"), std::string::npos);
  EXPECT_NE(p.message.find("--version"), std::string::npos);
}

// Guards against a --version that runs the workload, or names another version than the library's.
TEST(StressCli, VersionNamesTheLibraryVersion) {
  const st::parse_outcome p = parse({"--version"});
  EXPECT_FALSE(p.run);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.message, "spinwise-stress " + std::string(spinwise::kVersion) + "\n");
}

// Every flag is kebab-case: lower-case words joined by '-', as in spinwise's other tools.
TEST(StressCli, EveryFlagIsKebabCase) {
  const std::string help = parse({"--help"}).message;
  std::size_t flags = 0;
  for (std::size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    std::size_t end = at + 2;
    while (end < help.size() &&
           (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-' || help[end] == '_')) {
      ++end;
    }
    const std::string flag = help.substr(at, end - at);
    if (flag == "--") continue;
    ++flags;
    for (std::size_t i = 2; i < flag.size(); ++i) {
      const char c = flag[i];
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && flag[i - 1] != '-'))
          << flag << " is not kebab-case";
    }
  }
  EXPECT_GE(flags, 30u) << "the help lists fewer flags than the tool has";
}

// Guards against a bad flag that runs anyway, or fails without saying what was wrong.
TEST(StressCli, BadFlagsAreRefusedWithTheirName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bogus"}, "bogus"},
      {{"--relax-drift", "0.5"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "0"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "101"}, "--relax-drift must be in [1, 100]"},
      {{"--relax-drift", "nan"}, "--relax-drift"},
      {{"--relax-drift", "abc"}, "--relax-drift"},
      {{"--relax-drift"}, "--relax-drift"},
      {{"--spin_wait_delay", "6"}, "spin_wait_delay"},  // flags are kebab-case only
      {{"--scenario", "incident"}, "--scenario"},
      {{"--lock", "futex"}, "unknown lock"},
      {{"--policy", "adaptiv"}, "--policy"},
      {{"--policy", "adaptive", "--spin-loops", "3"},
       "--spin-loops applies to the policies with a fixed budget"},
      {{"--policy", "adaptive", "--spin-wait-delay", "3"}, "--spin-wait-delay applies to"},
      {{"--cpu-model", "zen4"}, "--cpu-model"},
      {{"--cpu-model", "skylake", "--relax-ns", "10"}, "excludes"},
      {{"--relax-ns", "0"}, "--relax-ns"},
      {{"--relax-ns", "-3"}, "--relax-ns"},
      {{"--spin-wait-delay", "1001"}, "spin_wait_delay must be in 0..1000"},
      {{"--policy", "innodb", "--pause-multiplier", "101"}, "pause_multiplier must be in 1..100"},
      {{"--spin-loops", "2000000"}, "spin_loops must be in"},
      {{"--policy", "time", "--delay-unit-ns", "0"}, "delay_unit_ns must be in"},
      {{"--policy", "innodb", "--delay-unit-ns", "100"}, "--delay-unit-ns belongs to --policy time"},
      {{"--policy", "time", "--pause-multiplier", "5"}, "--pause-multiplier applies to the innodb policy"},
      {{"--lock", "std::mutex", "--spin-loops", "3"}, "--spin-loops applies to spinwise locks"},
      {{"--lock", "std::mutex", "--policy", "innodb"}, "no wait policy"},
      {{"--lock", "ticket_mutex", "--spin-wait-delay", "4"}, "--spin-wait-delay applies to"},
      {{"--threads", "0"}, "--threads"},
      {{"--threads", "x"}, "threads"},
      {{"--clients", "0"}, "--clients"},
      {{"--fanout", "0"}, "--fanout"},
      {{"--duration", "-1"}, "--duration"},
      {{"--duration", "1", "--warmup", "2"}, "--warmup"},
      {{"--cs-ns", "-5"}, "--cs-ns"},
      {{"--pages", "0"}, "--pages"},
      {{"--inserts", "0", "--updates", "0", "--selects", "0"}, "not all 0"},
      {{"--sample-ms", "0"}, "--sample-ms"},
      {{"--png", "a.png"}, "--png needs --sweep"},
      {{"--repeat", "101"}, "--repeat must be in 1..100"},
      {{"--repeat", "0"}, "--repeat must be in 1..100"},
      {{"--order-seed", "x"}, "--order-seed"},
      {{"--min-requests", "x"}, "--min-requests"},
      {{"--duration", "2", "--max-duration", "1"}, "--max-duration must be in"},
      {{"--calibrate-ms", "-1"}, "--calibrate-ms must be in"},
      {{"--sweep", "--cpu-model", "skylake"}, "is set by --sweep"},
      {{"--sweep", "--sweep-delays", "1,x"}, "--sweep-delays"},
      {{"--sweep", "--sweep-delays", "2000"}, "--sweep-delays"},
      {{"--sweep", "--sweep-cpus", "skylake,zen"}, "--sweep-cpus"},
      {{"--sweep", "--sweep-cpus", "20xs"}, "--sweep-cpus takes broadwell, skylake, native or <n>ns"},
      {{"--sweep", "--sweep-cpus", "0ns"}, "--sweep-cpus takes"},
      {{"--sweep", "--sweep-cpus", "20ns5"}, "--sweep-cpus takes"},
      {{"--sweep", "--lock", "std::mutex"}, "--sweep needs a spinwise lock"},
      {{"--sweep", "--repeat", "0"}, "--repeat"},
  };
  for (const auto& [args, needle] : cases) {
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    const st::parse_outcome p = parse(args);
    EXPECT_FALSE(p.run) << joined;
    EXPECT_EQ(p.exit_code, 2) << joined;
    EXPECT_NE(p.message.find("error"), std::string::npos) << joined << ": " << p.message;
    EXPECT_NE(p.message.find(needle), std::string::npos) << joined << ": " << p.message;
  }
}

// Guards against a refused knob that changed the stress locks' settings anyway.
// The sweep's CPUs may be relax lengths; the adaptive policy runs without a knob.
TEST(StressCli, SweepCpusTakeRelaxLengths) {
  const st::parse_outcome p = parse({"--sweep", "--sweep-cpus", "native,2ns,100ns"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.sweep_opts.cpus, std::vector<st::cpu_model>{st::cpu_model::native});
  EXPECT_EQ(p.options.sweep_opts.relax_ns, (std::vector<double>{2, 100}));
  EXPECT_TRUE(parse({"--policy", "adaptive"}).run);
}

TEST(StressCli, ARefusedKnobChangesNothing) {
  ASSERT_TRUE(parse({"--policy", "innodb", "--spin-wait-delay", "7", "--pause-multiplier", "9"}).run);
  const auto before = st::effective_knobs(st::policy_kind::innodb);
  EXPECT_FALSE(parse({"--policy", "innodb", "--spin-wait-delay", "8", "--pause-multiplier", "0"}).run);
  EXPECT_EQ(st::effective_knobs(st::policy_kind::innodb), before);
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[0].second, 7u);
  EXPECT_EQ(before[1].second, 9u);
}

// --- outputs ---------------------------------------------------------------------------------------

// Guards against JSON and CSV drifting from what the README and the plot read.
TEST(StressReport, JsonAndCsvCarryEveryMetric) {
  st::workload_config c = small();
  c.cpu = st::cpu_model::skylake;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  const nlohmann::json doc = st::make_document({r}, {{"note", "x"}});
  EXPECT_EQ(doc.at("format"), "spinwise.stress");
  EXPECT_FALSE(doc.contains("schema")) << "the envelope key is format, as in spinwise's other tools";
  EXPECT_EQ(doc.at("version"), 2);
  EXPECT_EQ(doc.at("note"), "x");
  for (const char* k : {"cpu_model", "cpus", "kernel", "compiler", "backend", "date"}) {
    EXPECT_TRUE(doc.at("machine").contains(k)) << k;
  }
  ASSERT_EQ(doc.at("runs").size(), 1u);
  const nlohmann::json& j = doc.at("runs")[0];
  EXPECT_EQ(j.at("config").at("scenario"), "stats-lock");
  EXPECT_EQ(j.at("config").at("lock"), "hybrid_mutex");
  // the lock's default policy, whichever the catalog makes it (the library's default)
  EXPECT_EQ(j.at("config").at("policy"), std::string(st::to_string(st::resolve_policy(r.config.lock))));
  EXPECT_EQ(j.at("config").at("cpu_model"), "skylake");
  EXPECT_EQ(j.at("config").at("knobs").at("spin_wait_delay"), 6);
  EXPECT_EQ(j.at("throughput").at("requests"), r.requests);
  for (const char* lat : {"request_rt", "subquery_rt"}) {
    for (const char* k : {"count", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p999_ns", "max_ns"}) {
      EXPECT_TRUE(j.at(lat).at(k).is_number()) << lat << "." << k;
    }
  }
  EXPECT_TRUE(j.at("lock").at("hold").at("p99_ns").is_number());
  EXPECT_TRUE(j.at("spin").at("cpu_share").is_number());
  EXPECT_TRUE(j.at("waits").at("parks_per_s").is_number());
  EXPECT_TRUE(j.at("context_switches").at("voluntary").is_number());
  EXPECT_TRUE(j.at("context_switches").at("involuntary").is_number());
  EXPECT_TRUE(j.at("running_threads").at("series").is_array());
  EXPECT_TRUE(j.at("emulation").at("achieved_relax_ns").is_number());
  EXPECT_EQ(j.at("accounting").at("double_executed"), 0);
  // Round trip: what we write parses back to the same document.
  EXPECT_EQ(nlohmann::json::parse(doc.dump(2)), doc);

  const std::vector<std::string> cols = st::csv_columns();
  EXPECT_EQ(std::set<std::string>(cols.begin(), cols.end()).size(), cols.size()) << "duplicate CSV column";
  const std::string row = st::csv_row(r);
  EXPECT_EQ(static_cast<std::size_t>(std::count(row.begin(), row.end(), ',')) + 1, cols.size());
  EXPECT_EQ(row.find('\n'), std::string::npos);
  EXPECT_EQ(st::csv_header().substr(0, 9), "scenario,");
  EXPECT_EQ(row.substr(0, 11), "stats-lock,");
  EXPECT_NE(st::format_run(r).find("requests/s"), std::string::npos);
}

namespace {

// A run through the command line whose waiters delay: four workers with nothing to do outside a
// 20 us critical section. A run in which no round delayed is run again, longer, twice at most.
st::run_result contended_run(std::vector<std::string> flags) {
  const double d = std::max(0.3, 0.6 * scale());
  for (const char* f : {"--threads", "4", "--clients", "3", "--fanout", "24", "--work-before-ns", "0",
                        "--work-after-ns", "0", "--cs-ns", "20000", "--quiet"}) {
    flags.emplace_back(f);
  }
  st::run_result r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::string> a = flags;
    const double dur = d * (1 << attempt);
    for (const std::string& f :
         {std::string("--duration"), std::to_string(dur), std::string("--warmup"), std::to_string(dur / 4)}) {
      a.push_back(f);
    }
    const st::parse_outcome p = parse(a);
    EXPECT_TRUE(p.run) << p.message;
    if (!p.run) return r;
    r = st::run_workload(p.options.workload);
    if (r.spin_rounds > 0 && r.round_length.rounds > 0) break;
  }
  return r;
}

// p10 <= p50 <= p90, finite; p10 > 0 unless zero is a possible value (a round of an InnoDB delay
// draws 0 units in [0, spin_wait_delay): a zero-length round, which qemu can time as 0 ns).
bool ordered_and_finite(const nlohmann::json& j, bool zero_allowed = false) {
  const double p10 = j.at("p10"), p50 = j.at("p50"), p90 = j.at("p90");
  return std::isfinite(p10) && std::isfinite(p90) && (zero_allowed ? p10 >= 0 : p10 > 0) && p10 <= p50 &&
         p50 <= p90;
}

}  // namespace

// Guards against delay_accuracy and round_ns missing from the JSON, empty, or out of order, and
// against --relax-drift not reaching the run: a short contended run of the time policy with the
// relax drifting up to 3x reports achieved/requested percentiles in order over rounds it measured,
// by requested length, and the innodb policy reports no accuracy (its delays are no time) but its
// rounds' lengths. No timing value is asserted beyond > 0 and finite.
TEST(StressReport, DelayAccuracyAndRoundLengthsInTheJson) {
  const st::run_result t =
      contended_run({"--policy", "time", "--cpu-model", "skylake", "--relax-drift", "3"});
  expect_sound(t);
  ASSERT_GT(t.spin_rounds, 0u) << "no waiter delayed in three runs: nothing to measure";
  const nlohmann::json doc = st::make_document({t});
  const nlohmann::json& j = doc.at("runs")[0];
  EXPECT_EQ(j.at("config").at("relax_drift"), 3.0);
  EXPECT_EQ(j.at("emulation").at("drift").at("factor"), 3.0);
  const double mean = j.at("emulation").at("drift").at("window_mean_level");
  EXPECT_GE(mean, 1.0);
  EXPECT_LE(mean, 3.0);
  const nlohmann::json& a = j.at("delay_accuracy");
  ASSERT_TRUE(a.is_object()) << a;
  // Under emulation (qemu) every round can look preempted (the library's rule) and be left out.
  const std::uint64_t timed = a.at("rounds").get<std::uint64_t>();
  EXPECT_GT(timed + a.at("preempted_excluded").get<std::uint64_t>(), 0u);
  EXPECT_LE(timed, t.spin_rounds) << "more rounds timed than delayed";
  if (timed > 0) {
    EXPECT_TRUE(ordered_and_finite(a)) << a;
  }
  EXPECT_TRUE(a.at("preempted_excluded").is_number());
  EXPECT_EQ(a.at("ended_early_excluded"), 0u) << "time_policy's rounds run their course";
  EXPECT_EQ(a.at("ended_early_share"), 0.0);
  EXPECT_EQ(a.at("requested_ns").at("min"), 200.0) << "the time policy's 6 x 200 ns ask for 200..1000 ns";
  EXPECT_EQ(a.at("requested_ns").at("max"), 1000.0);
  ASSERT_EQ(a.at("by_requested").size(), 3u);
  EXPECT_EQ(a.at("by_requested")[1].at("rounds"), a.at("rounds")) << "every request lies in 200 ns..20 us";
  if (timed > 0) {
    EXPECT_TRUE(ordered_and_finite(a.at("by_requested")[1]));
  }
  EXPECT_TRUE(a.at("by_requested")[0].at("p50").is_null()) << "an empty band has no percentiles";
  if (j.at("round_ns").at("rounds").get<std::uint64_t>() > 0) {
    EXPECT_TRUE(ordered_and_finite(j.at("round_ns"), /*zero_allowed=*/true));
    EXPECT_TRUE(ordered_and_finite(j.at("round_ns").at("per_relax"), /*zero_allowed=*/true));
  }
  EXPECT_NE(st::format_run(t).find("delay accuracy (actual/requested, rounds that ran their course)"),
            std::string::npos);
  EXPECT_NE(st::format_run(t).find("drifting 1..3"), std::string::npos);
  const std::vector<std::string> cols = st::csv_columns();
  for (const char* c : {"relax_drift", "delay_accuracy_p50", "round_ns_p90"}) {
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
  }

  const st::run_result i =
      contended_run({"--policy", "innodb", "--cpu-model", "skylake", "--relax-drift", "3"});
  expect_sound(i);
  ASSERT_GT(i.spin_rounds, 0u);
  const nlohmann::json ji = st::to_json(i);
  EXPECT_TRUE(ji.at("delay_accuracy").is_null()) << "innodb's delays are instruction counts, not times";
  const nlohmann::json& rn = ji.at("round_ns");
  const std::uint64_t measured = rn.at("rounds").get<std::uint64_t>();
  EXPECT_GT(measured + rn.at("preempted_excluded").get<std::uint64_t>(), 0u) << rn;
  if (measured > 0) {
    EXPECT_TRUE(ordered_and_finite(rn, /*zero_allowed=*/true)) << rn;
    EXPECT_TRUE(ordered_and_finite(rn.at("per_relax"), /*zero_allowed=*/true)) << rn;
  }
  EXPECT_EQ(st::format_run(i).find("delay accuracy"), std::string::npos);
}

TEST(StressSweep, PointsCoverDelaysTimesCpusPlusTheTimeAndAdaptivePolicies) {
  st::sweep_options s;
  const auto pts = st::sweep_points(s);
  ASSERT_EQ(pts.size(), 9u * 3u + 3u + 3u);
  std::set<std::pair<int, int>> seen;
  std::vector<const st::sweep_point*> time, adaptive;
  for (const auto& p : pts) {
    if (p.policy == st::policy_kind::innodb)
      seen.insert({static_cast<int>(p.cpu), static_cast<int>(p.delay)});
    if (p.policy == st::policy_kind::time) time.push_back(&p);
    if (p.policy == st::policy_kind::adaptive) adaptive.push_back(&p);
  }
  EXPECT_EQ(seen.size(), 27u);
  ASSERT_EQ(time.size(), 3u);
  ASSERT_EQ(adaptive.size(), 3u);
  EXPECT_EQ(time.back()->unit_ns, 200u);

  st::workload_config base;
  base.lock.lock = "hybrid_mutex";
  base.lock.pause_multiplier = 5;
  const st::workload_config t = st::point_config(base, *time.back());
  EXPECT_FALSE(t.lock.pause_multiplier.has_value()) << "an innodb knob leaked into the time policy";
  EXPECT_EQ(*t.lock.delay_unit_ns, 200u);
  EXPECT_NO_THROW(st::resolve_policy(t.lock));
  const st::workload_config a = st::point_config(base, *adaptive.back());
  EXPECT_FALSE(a.lock.pause_multiplier || a.lock.spin_wait_delay || a.lock.delay_unit_ns || a.lock.spin_loops)
      << "a knob leaked into the adaptive policy";
  EXPECT_NO_THROW(st::resolve_policy(a.lock));
  const st::workload_config i = st::point_config(base, pts.front());
  EXPECT_EQ(*i.lock.pause_multiplier, 5u);
  EXPECT_EQ(*i.lock.policy, st::policy_kind::innodb);
  // A CPU given as a relax length runs as a custom model of that length.
  s.cpus.clear();
  s.relax_ns = {20};
  const auto custom = st::sweep_points(s);
  ASSERT_EQ(custom.size(), 9u + 2u);
  EXPECT_EQ(st::point_config(base, custom.front()).cpu, st::cpu_model::custom);
  EXPECT_EQ(st::point_config(base, custom.front()).relax_ns, 20.0);
  EXPECT_EQ(st::sweep_settings(base, s).front().label, "20ns/innodb/0");
}

// A two-point sweep end to end: table rows, and a plot script gnuplot accepts (when installed).
TEST(StressSweep, RunsAndPlots) {
  st::workload_config c = small();
  c.verify = false;
  c.duration_s = std::max(0.1, 0.2 * scale());
  c.warmup_s = c.duration_s / 5;
  st::sweep_options s;
  s.delays = {0, 30};
  s.cpus = {st::cpu_model::skylake};
  s.relax_ns = {20};  // and a CPU given as its relax length
  std::ostringstream table;
  const std::vector<st::run_result> runs = st::run_sweep(c, s, table);
  // Per CPU: two innodb delays, the time policy, the adaptive policy.
  ASSERT_EQ(runs.size(), 8u);
  for (const st::run_result& r : runs) expect_sound(r);
  std::size_t adaptive = 0;
  for (const st::run_result& r : runs) {
    if (r.policy != st::policy_kind::adaptive) continue;
    ++adaptive;
    EXPECT_FALSE(st::knob_value(r, "spin_wait_delay").has_value()) << "adaptive has no knob to sweep";
    EXPECT_GE(r.adaptive_budget_ns, 200u);
  }
  EXPECT_EQ(adaptive, 2u);
  const std::string lines = table.str();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 9) << lines;
  const std::string script = st::gnuplot_script(runs, "out.png", "title \"quoted\"");
  EXPECT_NE(script.find("set output \"out.png\""), std::string::npos);
  EXPECT_NE(script.find("skylake (innodb)"), std::string::npos);
  EXPECT_NE(script.find("skylake (time policy)"), std::string::npos);
  EXPECT_NE(script.find("20ns (innodb)"), std::string::npos) << script;
  EXPECT_NE(script.find("skylake (adaptive, no knob)"), std::string::npos) << script;
  EXPECT_NE(script.find("with yerrorlines dt 2"), std::string::npos) << "adaptive: a dashed level";
  EXPECT_EQ(script.find("\"quoted\""), std::string::npos) << "a title quote would end the gnuplot string";
  // One legend, placed under the panels (at screen coordinates): one inside a panel covers the data.
  EXPECT_NE(script.find("set key at screen"), std::string::npos) << script;
  EXPECT_EQ(script.find("set key top"), std::string::npos) << script;
  // The spread: each point's median with its interval as error bars (x y ylow yhigh per panel).
  EXPECT_NE(script.find("using 1:2:3:4 with yerrorlines"), std::string::npos) << script;
  EXPECT_NE(script.find("using 1:8:9:10 with yerrorbars"), std::string::npos) << script;
  EXPECT_NE(script.find("one run per point"), std::string::npos)
      << "one run each: no spread, and the title says so";
  {
    std::istringstream lines_in(script);
    std::size_t data_rows = 0;
    bool in_block = false;
    for (std::string line; std::getline(lines_in, line);) {
      if (line.find("<< EOD") != std::string::npos) {
        in_block = true;
      } else if (line == "EOD") {
        in_block = false;
      } else if (in_block) {
        std::istringstream f(line);
        std::vector<double> v;
        for (double x; f >> x;) v.push_back(x);
        ASSERT_EQ(v.size(), 10u) << line;
        for (std::size_t k = 1; k < 10; k += 3) {
          EXPECT_LE(v[k + 1], v[k]) << "lo above the median: " << line;
          EXPECT_LE(v[k], v[k + 2]) << "hi below the median: " << line;
        }
        ++data_rows;
      }
    }
    EXPECT_EQ(data_rows, 10u) << "per CPU: two innodb points, one time point, the adaptive level's two ends";
  }

  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const std::string png = ::testing::TempDir() + "spinwise_stress_test_sweep.png";
  std::remove(png.c_str());
  ASSERT_EQ(st::render_png(runs, png, "test"), "");
  std::ifstream f(png, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

// --- repeats, summaries and --compare -----------------------------------------------------------------
//
// Everything here runs on injected run results: the statistics, the run order and the outputs are
// checked against hand-worked answers, and no test asserts a timing.

namespace {

// A run as the engine would report it, with the figures a test chooses: nothing runs.
st::run_result injected(double rps, st::scenario sc = st::scenario::stats_lock) {
  st::workload_config c = small(sc);
  c.verify = false;
  st::run_result r;
  r.config = st::resolve(c);
  r.cpus = 2;
  r.window_s = 2;
  r.requests_per_s = rps;
  r.requests = static_cast<std::uint64_t>(rps * r.window_s);
  r.subqueries_per_s = rps * r.config.fanout;
  r.request_rt.p50_ns = 1e9 / rps;
  r.request_rt.p95_ns = 2e9 / rps;
  r.request_rt.p99_ns = 3e9 / rps;
  r.spin_cpu_share = 0.01;
  r.process_cpu_ns = 1e9;
  r.counted = true;
  r.parks_per_s = rps / 10;
  r.loop_iter_ns = 0.3;
  r.achieved_relax_ns = 20;
  return r;
}

std::vector<st::run_result> injected_runs(const std::vector<double>& rps) {
  std::vector<st::run_result> v;
  for (double x : rps) v.push_back(injected(x));
  return v;
}

// A run_fn that runs nothing: requests/s 100, 1.3x that at spin_wait_delay 30, times a factor of
// 0.98..1.02 from the seed (seeds 1..6 give 0.99, 1, 1.01, 1.02, 0.98, 0.99).
st::run_result fake_run(const st::workload_config& c) {
  const double delay_factor = c.lock.spin_wait_delay.value_or(6) == 30 ? 1.3 : 1.0;
  const double seed_factor = 1.0 + 0.01 * (static_cast<double>(c.seed % 5) - 2.0);
  st::run_result r = injected(100 * delay_factor * seed_factor);
  r.config = st::resolve(c);
  return r;
}

}  // namespace

// Guards against a summary that is not the median with its distribution-free interval: nine runs
// of 100..900 requests/s have median 500 and, as x(2)..x(8), the interval 200..800 with coverage
// 1 - 2 P(Binomial(9, 1/2) < 2) = 1 - 20/512; five runs have min..max (coverage 1 - 2/32); one
// run has no spread. A metric that applies to no run (parks/s of a lock without a policy, sub-
// queries/s at fan-out 1, insert waits outside hot-page) is left out, not reported as 0.
TEST(StressSummary, MedianIntervalAndCoverageOfInjectedRuns) {
  const st::setting_summary nine =
      st::summarize_runs(injected_runs({500, 300, 900, 100, 700, 200, 800, 400, 600}));
  EXPECT_EQ(nine.runs, 9u);
  const st::metric_summary* rps = nine.find("requests_per_s");
  ASSERT_NE(rps, nullptr);
  EXPECT_EQ(rps->ci.n, 9u);
  EXPECT_DOUBLE_EQ(rps->ci.median, 500);
  EXPECT_DOUBLE_EQ(rps->ci.min, 100);
  EXPECT_DOUBLE_EQ(rps->ci.max, 900);
  EXPECT_DOUBLE_EQ(rps->ci.lo, 200);
  EXPECT_DOUBLE_EQ(rps->ci.hi, 800);
  EXPECT_NEAR(rps->ci.coverage, 1.0 - 20.0 / 512.0, 1e-12);
  const st::metric_summary* p50 = nine.find("request_rt_p50_us");
  ASSERT_NE(p50, nullptr);
  EXPECT_DOUBLE_EQ(p50->ci.median, 1e6 / 500) << "RT p50 in us: 1e9 / 500 ns";
  EXPECT_DOUBLE_EQ(p50->ci.lo, 1e6 / 800);
  ASSERT_NE(nine.find("subqueries_per_s"), nullptr);
  EXPECT_DOUBLE_EQ(nine.find("subqueries_per_s")->ci.median, 500.0 * 24);
  ASSERT_NE(nine.find("spin_cpu_share"), nullptr);
  ASSERT_NE(nine.find("parks_per_s"), nullptr);
  EXPECT_EQ(nine.find("insert_waits_per_s"), nullptr) << "stats-lock has no inserts";

  const st::setting_summary five = st::summarize_runs(injected_runs({3, 1, 5, 2, 4}));
  const st::metric_summary* f = five.find("requests_per_s");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->ci.median, 3);
  EXPECT_DOUBLE_EQ(f->ci.lo, 1) << "below six runs the interval is min..max";
  EXPECT_DOUBLE_EQ(f->ci.hi, 5);
  EXPECT_NEAR(f->ci.coverage, 1.0 - 2.0 / 32.0, 1e-12);

  const st::setting_summary one = st::summarize_runs(injected_runs({42}));
  const st::metric_summary* o = one.find("requests_per_s");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->ci.n, 1u);
  EXPECT_DOUBLE_EQ(o->ci.lo, 42);
  EXPECT_DOUBLE_EQ(o->ci.hi, 42);

  std::vector<st::run_result> plain = injected_runs({1, 2, 3});
  for (st::run_result& r : plain) {
    r.counted = false;  // a std lock: no policy counts its parks
    r.config.fanout = 1;
  }
  const st::setting_summary s = st::summarize_runs(plain);
  EXPECT_EQ(s.find("parks_per_s"), nullptr);
  EXPECT_EQ(s.find("subqueries_per_s"), nullptr) << "fan-out 1: one sub-query per request";
  std::vector<st::run_result> hot = {injected(10, st::scenario::hot_page),
                                     injected(20, st::scenario::hot_page)};
  EXPECT_NE(st::summarize_runs(hot).find("insert_waits_per_s"), nullptr);

  // Every summarized metric is a per-run CSV column of the same name.
  const std::vector<std::string> cols = st::csv_columns();
  for (const st::summary_metric& m : st::summary_metrics()) {
    EXPECT_NE(std::find(cols.begin(), cols.end(), m.name), cols.end()) << m.name;
  }
  EXPECT_NE(st::format_summary(nine, "A:").find("500.0 [200.0-800.0]"), std::string::npos)
      << st::format_summary(nine, "A:");
}

// Guards against a --compare that calls noise a difference, or misses one: samples that differ by
// 30% beyond their spread are "higher" (and their RT "lower"), samples that overlap are "within
// noise", and a side without a ratio or with one run says why instead of judging.
TEST(StressCompare, VerdictOnInjectedSamples) {
  const std::vector<double> a = {100, 102, 98, 101, 99, 100};
  const auto ratio_of = [&](const std::vector<double>& b, const char* metric) {
    const std::vector<st::setting_ratio> r = st::compare_settings({injected_runs(a), injected_runs(b)});
    EXPECT_EQ(r.size(), 1u);
    for (const st::metric_ratio& m : r.at(0).metrics) {
      if (std::string(m.metric->name) == metric) return m;
    }
    ADD_FAILURE() << "no ratio of " << metric;
    return st::metric_ratio{};
  };
  const st::metric_ratio up = ratio_of({130, 133, 128, 131, 129, 130}, "requests_per_s");
  EXPECT_EQ(up.ratio.verdict, spinwise::runtime::difference::higher);
  EXPECT_NEAR(up.ratio.ratio, 1.30, 1e-9);
  EXPECT_GT(up.ratio.lo, 1.0);
  EXPECT_GE(up.ratio.hi, up.ratio.ratio);
  const std::string line = st::ratio_line(up, "B", "A");
  EXPECT_EQ(line.rfind("B/A requests/s 1.30x [", 0), 0u) << line;
  EXPECT_NE(line.find("]: higher, beyond noise"), std::string::npos) << line;
  EXPECT_EQ(ratio_of({130, 133, 128, 131, 129, 130}, "request_rt_p50_us").ratio.verdict,
            spinwise::runtime::difference::lower)
      << "RT is 1/rate here: it falls";

  const st::metric_ratio same = ratio_of({101, 99, 100, 102, 98, 100}, "requests_per_s");
  EXPECT_EQ(same.ratio.verdict, spinwise::runtime::difference::within_noise);
  EXPECT_NE(st::ratio_line(same, "B", "A").find(": within noise"), std::string::npos);

  EXPECT_EQ(ratio_of({70, 71, 69, 70, 72, 68}, "requests_per_s").ratio.verdict,
            spinwise::runtime::difference::lower);

  // Four runs a side whose ranges overlap: within noise, whatever the bootstrap says.
  const std::vector<st::setting_ratio> overlap =
      st::compare_settings({injected_runs({100, 110, 105, 104}), injected_runs({108, 115, 120, 117})});
  EXPECT_EQ(overlap.at(0).metrics.at(0).ratio.verdict, spinwise::runtime::difference::within_noise);
  // Two runs a side, 30% apart with disjoint ranges (issue 34: an A/A comparison at --repeat 2 did
  // this to a third of its metrics): the ratio without an interval, and no verdict.
  const st::metric_ratio few =
      st::compare_settings({injected_runs({100, 102}), injected_runs({130, 133})}).at(0).metrics.at(0);
  EXPECT_EQ(few.ratio.verdict, spinwise::runtime::difference::insufficient);
  EXPECT_EQ(st::ratio_line(few, "B", "A"),
            std::string("B/A ") + few.metric->label +
                " 1.30x: too few runs to judge (2 and 2 runs; a verdict needs 4 a side: --repeat 4)");

  // A baseline whose median is 0 has no ratio; one run a side has no verdict.
  std::vector<st::run_result> zero = injected_runs({100, 101, 102});
  for (st::run_result& r : zero) r.spin_cpu_share = 0;
  const std::vector<st::setting_ratio> from_zero =
      st::compare_settings({zero, injected_runs({100, 101, 102})});
  for (const st::metric_ratio& m : from_zero.at(0).metrics) {
    if (std::string(m.metric->name) == "spin_cpu_share") {
      EXPECT_EQ(st::verdict_text(m), "no ratio: the baseline's median is 0");
    }
  }
  const st::metric_ratio single =
      st::compare_settings({injected_runs({100}), injected_runs({200})}).at(0).metrics.at(0);
  EXPECT_EQ(st::ratio_line(single, "B", "A"),
            std::string("B/A ") + single.metric->label +
                ": too few runs to judge (1 and 1 runs; a verdict needs 4 a side: --repeat 4)");
}

// Guards against settings run back to back (A A A B B B: a machine that drifts over the session
// becomes a difference between them) and against repeats that reuse a seed: round-robin runs
// every setting once per round, a shuffled order permutes each round after the first from its
// seed, and every run's seed is its setting's seed + its repeat.
TEST(StressPlan, RunsAreInterleavedAndSeeded) {
  std::vector<st::setting> settings(3);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    settings[i].label = std::string(1, static_cast<char>('A' + i));
    settings[i].config.seed = 10 * (i + 1);
  }
  const std::vector<st::planned_run> rr = st::plan_runs(settings, {4, 0});
  ASSERT_EQ(rr.size(), 12u);
  for (std::size_t k = 0; k < rr.size(); ++k) {
    EXPECT_EQ(rr[k].setting, k % 3) << "run " << k;
    EXPECT_EQ(rr[k].repeat, k / 3) << "run " << k;
    EXPECT_EQ(rr[k].config.seed, 10 * (k % 3 + 1) + k / 3) << "run " << k;
  }
  EXPECT_EQ(st::order_text(rr, settings), "A B C A B C A B C A B C");

  const std::vector<st::planned_run> sh = st::plan_runs(settings, {4, 7});
  const std::vector<std::size_t> expected = spinwise::runtime::interleaved_order(3, 4, 7);
  ASSERT_EQ(sh.size(), expected.size());
  bool shuffled = false;
  std::vector<unsigned> seen(3, 0);
  for (std::size_t k = 0; k < sh.size(); ++k) {
    EXPECT_EQ(sh[k].setting, expected[k]);
    EXPECT_EQ(sh[k].repeat, seen[sh[k].setting]++) << "repeats count up per setting";
    EXPECT_EQ(sh[k].config.seed, settings[sh[k].setting].config.seed + sh[k].repeat);
    if (k < 3) {
      EXPECT_EQ(sh[k].setting, k) << "round 0 keeps the settings' order";
    }
    shuffled |= sh[k].setting != k % 3;
  }
  for (std::size_t r = 0; r < 4; ++r) {
    std::set<std::size_t> round;
    for (std::size_t k = 3 * r; k < 3 * r + 3; ++k) round.insert(sh[k].setting);
    EXPECT_EQ(round.size(), 3u) << "round " << r << " runs every setting once";
  }
  EXPECT_TRUE(shuffled) << "--order-seed 7 left every round in order";

  // The runs happen in the plan's order and carry their setting and repeat.
  std::vector<std::uint64_t> called;
  const std::vector<st::run_result> runs = st::run_planned(sh, [&](const st::workload_config& c) {
    called.push_back(c.seed);
    return st::run_result{};
  });
  ASSERT_EQ(runs.size(), sh.size());
  for (std::size_t k = 0; k < sh.size(); ++k) {
    EXPECT_EQ(called[k], sh[k].config.seed);
    EXPECT_EQ(runs[k].setting, sh[k].setting);
    EXPECT_EQ(runs[k].repeat, sh[k].repeat);
  }
  const auto by = st::runs_by_setting(runs, 3);
  for (const auto& g : by) EXPECT_EQ(g.size(), 4u);

  // A sweep runs every point once before any point a second time.
  st::sweep_options so;
  so.repeat = 2;
  const std::vector<st::setting> pts = st::sweep_settings(st::workload_config{}, so);
  ASSERT_EQ(pts.size(), 33u);
  const std::vector<st::planned_run> sp = st::plan_runs(pts, {so.repeat, so.order_seed});
  std::set<std::size_t> first_round;
  for (std::size_t k = 0; k < pts.size(); ++k) first_round.insert(sp[k].setting);
  EXPECT_EQ(first_round.size(), pts.size());
  std::set<std::string> labels;
  for (const st::setting& p : pts) labels.insert(p.label);
  EXPECT_EQ(labels.size(), pts.size()) << "sweep labels must tell points apart";

  // From the command line: --compare's default of 5 runs, the order --dry-run prints.
  st::parse_outcome p = parse({"--compare", "--seed 1", "--seed 5", "--repeat", "3"});
  ASSERT_TRUE(p.run) << p.message;
  st::session s = st::plan_session(p.options);
  EXPECT_EQ(st::order_text(s.plan, s.settings), "A B A B A B");
  EXPECT_NE(st::plan_text(s.plan, s.settings, s.order).find("order: A B A B A B\n"), std::string::npos);
  EXPECT_EQ(s.plan[3].config.seed, 6u) << "B's seed 5 + repeat 1";
  p = parse({"--compare", "--seed 1", "--seed 5"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.repeat, 5u) << "--compare runs each setting 5 times unless told";
  EXPECT_EQ(st::plan_session(p.options).plan.size(), 10u);
  p = parse({});
  ASSERT_TRUE(p.run);
  EXPECT_EQ(p.options.repeat, 1u);
  p = parse({"--repeat", "4", "--order-seed", "9"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(st::plan_session(p.options).plan.size(), 4u);
  p = parse({"--sweep", "--repeat", "2", "--order-seed", "9"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.sweep_opts.repeat, 2u);
  EXPECT_EQ(p.options.sweep_opts.order_seed, 9u);
}

// Guards against --compare settings parsed apart from the base flags or by another parser: each
// setting's flags land on the base configuration, override it where both give a flag, and the
// empty setting is the base itself.
TEST(StressCli, CompareSettingsParseOntoTheBase) {
  const st::parse_outcome p =
      parse({"--cpu-model", "skylake", "--duration", "2", "--spin-wait-delay", "6", "--compare", "",
             "--spin-wait-delay 30", "--policy time --cpu-model broadwell", "--repeat", "4", "--json", "-"});
  ASSERT_TRUE(p.run) << p.message;
  const std::vector<st::setting>& c = p.options.compare;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].label, "A");
  EXPECT_EQ(c[1].label, "B");
  EXPECT_EQ(c[2].label, "C");
  EXPECT_EQ(c[0].args, "");
  EXPECT_EQ(c[1].args, "--spin-wait-delay 30");
  EXPECT_EQ(*c[0].config.lock.spin_wait_delay, 6u);
  EXPECT_EQ(c[0].config.cpu, st::cpu_model::skylake);
  EXPECT_EQ(*c[1].config.lock.spin_wait_delay, 30u) << "the setting's flag wins over the base's";
  EXPECT_EQ(c[1].config.cpu, st::cpu_model::skylake);
  EXPECT_EQ(*c[2].config.lock.policy, st::policy_kind::time);
  EXPECT_EQ(c[2].config.cpu, st::cpu_model::broadwell);
  for (const st::setting& s : c) EXPECT_DOUBLE_EQ(s.config.duration_s, 2.0);
  EXPECT_EQ(p.options.repeat, 4u);
  EXPECT_EQ(p.options.json_path, "-");
  // --compare=TEXT, and settings whose values are quoted
  const st::parse_outcome q = parse({"--compare=--seed 3", "--seed '4'"});
  ASSERT_TRUE(q.run) << q.message;
  ASSERT_EQ(q.options.compare.size(), 2u);
  EXPECT_EQ(q.options.compare[0].config.seed, 3u);
  EXPECT_EQ(q.options.compare[1].config.seed, 4u);
}

// Guards against a --compare that runs anyway on bad input, or fails without saying where: exit 2
// and a message that names the setting and the flag.
TEST(StressCli, CompareBadInputIsRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--compare", "--spin-wait-delay 6", "--bogus 3"}, "--compare setting B (\"--bogus 3\")"},
      {{"--compare", "--spin-wait-delay 6", "--bogus 3"}, "bogus"},
      {{"--compare", "--spin-wait-delay 6"}, "--compare takes 2 to 26 settings"},
      {{"--compare"}, "--compare takes 2 to 26 settings"},
      {{"--sweep", "--compare", "--seed 1", "--seed 2"}, "--compare and --sweep do not go together"},
      {{"--compare", "--seed 1", "--json x.json"}, "--json is not a setting's flag"},
      {{"--compare", "--repeat 3", "--seed 2"}, "--repeat is not a setting's flag"},
      {{"--compare", "--seed 1", "--spin-wait-delay 5000"}, "setting B"},
      {{"--compare", "--seed 1", "--spin-wait-delay 5000"}, "spin_wait_delay must be in 0..1000"},
      {{"--compare", "--seed 1", "--lock std::mutex --spin-loops 3"},
       "--spin-loops applies to spinwise locks"},
      {{"--compare", "--seed '1", "--seed 2"}, "unbalanced quote"},
  };
  for (const auto& [args, needle] : cases) {
    std::string joined;
    for (const std::string& a : args) joined += "[" + a + "] ";
    const st::parse_outcome p = parse(args);
    EXPECT_FALSE(p.run) << joined;
    EXPECT_EQ(p.exit_code, 2) << joined;
    EXPECT_EQ(p.message.rfind("spinwise-stress: error: ", 0), 0u) << joined << ": " << p.message;
    EXPECT_NE(p.message.find(needle), std::string::npos) << joined << ": " << p.message;
  }
}

// Guards against JSON and CSV that lose the summary or the comparison, or carry numbers that do not
// hang together: a --compare session of injected runs (B 1.3x A) writes version 2 with a summary
// per setting (n, median, min, max, lo, hi, coverage; min <= lo <= median <= hi <= max), the run
// order, each run's setting, the ratios with their verdicts, and a CSV whose rows carry their
// setting's summary columns.
TEST(StressSession, JsonAndCsvOfAnInjectedCompare) {
  const st::parse_outcome p =
      parse({"--compare", "--spin-wait-delay 6", "--spin-wait-delay 30", "--repeat", "6", "--quiet"});
  ASSERT_TRUE(p.run) << p.message;
  st::session s = st::plan_session(p.options);
  std::ostringstream human;
  st::run_session(s, p.options, fake_run, human);
  ASSERT_EQ(s.runs.size(), 12u);
  const std::string text = human.str();
  EXPECT_NE(text.find("B/A requests/s 1.30x ["), std::string::npos) << text;
  EXPECT_NE(text.find("higher, beyond noise"), std::string::npos) << text;
  EXPECT_NE(text.find("A: --spin-wait-delay 6"), std::string::npos) << text;

  const nlohmann::json doc = st::session_document(s);
  EXPECT_EQ(doc.at("format"), "spinwise.stress");
  EXPECT_EQ(doc.at("version"), 2);
  ASSERT_EQ(doc.at("runs").size(), 12u);
  const nlohmann::json& order = doc.at("order");
  EXPECT_EQ(order.at("interleaving"), "round-robin");
  for (std::size_t k = 0; k < 12; ++k) {
    EXPECT_EQ(order.at("settings")[k], k % 2);
    EXPECT_EQ(doc.at("runs")[k].at("config").at("setting"), k % 2);
  }
  ASSERT_EQ(doc.at("settings").size(), 2u);
  for (const nlohmann::json& st_j : doc.at("settings")) {
    EXPECT_TRUE(st_j.contains("label") && st_j.contains("args"));
    EXPECT_EQ(st_j.at("runs"), 6);
    const nlohmann::json& sum = st_j.at("summary");
    for (const char* metric : {"requests_per_s", "subqueries_per_s", "request_rt_p50_us", "request_rt_p95_us",
                               "request_rt_p99_us", "spin_cpu_share", "parks_per_s"}) {
      ASSERT_TRUE(sum.contains(metric)) << metric;
      const nlohmann::json& m = sum.at(metric);
      for (const char* k : {"n", "median", "min", "max", "lo", "hi", "coverage"}) {
        EXPECT_TRUE(m.at(k).is_number()) << metric << "." << k;
      }
      EXPECT_EQ(m.at("n"), 6);
      const double lo = m.at("lo"), med = m.at("median"), hi = m.at("hi"), mn = m.at("min"), mx = m.at("max");
      EXPECT_LE(mn, lo) << metric;
      EXPECT_LE(lo, med) << metric;
      EXPECT_LE(med, hi) << metric;
      EXPECT_LE(hi, mx) << metric;
      EXPECT_NEAR(m.at("coverage").get<double>(), 1.0 - 2.0 / 64.0, 1e-12) << "six runs: x(1)..x(6)";
    }
  }
  EXPECT_DOUBLE_EQ(doc.at("settings")[0].at("summary").at("requests_per_s").at("median").get<double>(), 99.5);
  const nlohmann::json& cmp = doc.at("compare");
  EXPECT_EQ(cmp.at("baseline"), "A");
  ASSERT_EQ(cmp.at("ratios").size(), 1u);
  EXPECT_EQ(cmp.at("ratios")[0].at("of"), "B/A");
  const nlohmann::json& rr = cmp.at("ratios")[0].at("metrics").at("requests_per_s");
  EXPECT_NEAR(rr.at("ratio").get<double>(), 1.3, 1e-9);
  EXPECT_GT(rr.at("lo").get<double>(), 1.0);
  EXPECT_EQ(rr.at("difference"), "higher");
  EXPECT_EQ(rr.at("verdict"), "higher, beyond noise");
  EXPECT_EQ(nlohmann::json::parse(doc.dump(2)), doc);

  // CSV: the per-run columns, then the summary's; every row as wide as the header; a setting's
  // rows carry the same summary.
  const std::string csv = st::session_csv(s);
  std::istringstream in(csv);
  std::string header_line;
  std::getline(in, header_line);
  std::vector<std::string> header;
  {
    std::stringstream hs(header_line);
    for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  }
  EXPECT_EQ(std::set<std::string>(header.begin(), header.end()).size(), header.size()) << "duplicate column";
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  for (const st::summary_metric& m : st::summary_metrics()) {
    for (const char* part : {"_median", "_min", "_max", "_lo", "_hi"}) col(std::string(m.name) + part);
  }
  const std::size_t c_setting = col("setting"), c_runs = col("summary_runs");
  std::map<std::string, std::string> summary_of_setting;
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) f.push_back(c);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    ASSERT_EQ(f.size(), header.size()) << line;
    EXPECT_EQ(f[c_runs], "6");
    const double mn = std::stod(f[col("requests_per_s_min")]), lo = std::stod(f[col("requests_per_s_lo")]),
                 med = std::stod(f[col("requests_per_s_median")]),
                 hi = std::stod(f[col("requests_per_s_hi")]), mx = std::stod(f[col("requests_per_s_max")]);
    EXPECT_LE(mn, lo);
    EXPECT_LE(lo, med);
    EXPECT_LE(med, hi);
    EXPECT_LE(hi, mx);
    std::string cells;
    for (std::size_t k = c_runs; k < f.size(); ++k) cells += f[k] + ",";
    const auto [it, fresh] = summary_of_setting.emplace(f[c_setting], cells);
    if (!fresh) {
      EXPECT_EQ(it->second, cells) << "setting " << f[c_setting] << "'s rows disagree on its summary";
    }
  }
  EXPECT_EQ(rows, 12u);
  EXPECT_EQ(summary_of_setting.size(), 2u);
}

// Guards against --min-requests that does not lengthen a short window, or lengthens it past
// --max-duration: a window that cannot reach its requests ends at the cap, and one that can has
// them. (A run ends no earlier than the cap: that is sleep_until, not a timing of the workload.)
TEST(StressWorkload, MinRequestsLengthensAShortWindowUpToTheCap) {
  st::workload_config c = small();
  c.duration_s = 0.2;
  c.warmup_s = 0.05;
  c.min_requests = 1'000'000'000;
  c.max_duration_s = 0.4;
  st::run_result r = st::run_workload(c);
  expect_sound(r);
  EXPECT_DOUBLE_EQ(r.config.max_duration_s, 0.4);
  EXPECT_GE(r.total_s, 0.4) << "the window stopped before the cap with its requests unmet";
  EXPECT_LT(r.requests, c.min_requests);

  c.min_requests = 50;
  c.max_duration_s = 20;
  r = st::run_workload(c);
  expect_sound(r);
  EXPECT_TRUE(r.requests >= 50 || r.total_s >= 20) << r.requests << " requests in " << r.total_s << " s";
}

// Guards against a work loop calibrated anew for every run (a run's work would depend on the
// machine's state at its start) or never restored: --calibrate-ms M measures once and is reused,
// 0 brings back the process's first calibration, and runs report the figure they used.
TEST(StressRelaxer, LongLoopCalibrationIsReusedAndZeroRestoresTheFirst) {
  const double first = st::use_loop_calibration(0);
  EXPECT_GT(first, 0.0);
  EXPECT_DOUBLE_EQ(st::calibration().loop_iter_ns, first);
  const double long_ns = st::use_loop_calibration(5);
  EXPECT_GT(long_ns, 0.0);
  EXPECT_TRUE(std::isfinite(long_ns));
  EXPECT_DOUBLE_EQ(st::calibration().loop_iter_ns, long_ns);
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(5), long_ns) << "measured again instead of reused";
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(0), first);

  st::workload_config c = small();
  c.calibrate_ms = 5;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  EXPECT_DOUBLE_EQ(r.loop_iter_ns, long_ns) << "the run did not use the long calibration";
  EXPECT_DOUBLE_EQ(st::use_loop_calibration(0), first);
}

// --- faults: --stall-holder-ms and --stuck-after-ms ------------------------------------------------

// Guards against a stall that fires twice (a load and a store where one exchange belongs), or
// before it is armed: of four threads calling after the arming, exactly one call stalls.
TEST(StressFaults, HolderStallFiresOnceAfterArming) {
  st::holder_stall s(1);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(s.hold_if_armed()) << "stalled before it was armed";
  EXPECT_FALSE(s.fired());
  s.arm();
  std::atomic<int> stalls{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) stalls += s.hold_if_armed() ? 1 : 0;
    });
  }
  for (std::thread& t : ts) t.join();
  EXPECT_EQ(stalls.load(), 1);
  EXPECT_TRUE(s.fired());
  st::holder_stall off(0);
  off.arm();
  EXPECT_FALSE(off.hold_if_armed()) << "a stall of 0 ms is no stall";
}

// Guards against a stall wired into one lock's path only: it is done around the critical
// section, so every lock of --list-locks stalls, in either scenario, and keeps its data whole.
TEST(StressFaults, EveryLockStallsAHolder) {
  std::size_t i = 0;
  for (const st::lock_info& li : st::lock_catalog()) {
    const st::scenario sc = i++ % 2 == 0 ? st::scenario::stats_lock : st::scenario::hot_page;
    st::workload_config c = small(sc);
    c.lock.lock = li.name;
    c.duration_s = 0.1;
    c.warmup_s = 0.02;
    c.stall_holder_ms = 20;
    SCOPED_TRACE(li.name + " " + std::string(st::to_string(sc)));
    const st::run_result r = run_with_work(c);
    expect_sound(r);
    EXPECT_TRUE(r.holder_stalled);
    EXPECT_EQ(st::to_json(r)["holder_stalled"], true);
    EXPECT_EQ(st::to_json(r)["config"]["stall_holder_ms"], 20);
  }
}

// Guards against stuck reports that cannot say where: every acquisition (its try and its lock)
// passes the scenario's site, so the waits behind a stalled holder name scenario_hot_page.cpp for
// the waiter and the holder, and those waits are counted. Tracking is off again once the watch
// stops.
TEST(StressFaults, StuckWaitsNameTheScenarioSites) {
  st::workload_config c = small(st::scenario::hot_page);
  c.lock.lock = "sx_lock";
  c.pages = 4;
  c.stall_holder_ms = 200;
  std::vector<spinwise::stuck_wait_report> reports;
  st::run_result r;
  {
    st::stuck_watch watch(50, false);
    EXPECT_TRUE(st::stress_tracking());
    r = run_with_work(c);
    watch.stop();
    reports = watch.reports();
  }
  EXPECT_FALSE(st::stress_tracking());
  expect_sound(r);
  EXPECT_TRUE(r.holder_stalled);
  EXPECT_GT(r.latch_waits, 0u) << "the waits behind a 200 ms stall went uncounted";
  ASSERT_FALSE(reports.empty());
  bool named = false;
  for (const spinwise::stuck_wait_report& w : reports) {
    EXPECT_GE(w.waiter.ms, 50.0) << "reported below the threshold";
    EXPECT_EQ(w.waiter.lock_class, "stress_latch");
    for (const spinwise::tracked_lock& h : w.holders) {
      named |= w.waiter.site.find("scenario_hot_page.cpp:") != std::string::npos &&
               h.site.find("scenario_hot_page.cpp:") != std::string::npos;
    }
  }
  EXPECT_TRUE(named) << spinwise::format_stuck_report(reports.front());
}

// Guards against a JSON that drifts from what stuck_watch.hpp promises: the keys, the modes as
// "x" / "s" / "sx", and a report without holders as an empty list.
TEST(StressFaults, StuckReportsJson) {
  spinwise::stuck_wait_report a;
  a.waiter = {101, 0x1000, "stress_latch", spinwise::lock_mode::s, "scenario_hot_page.cpp:97", 250.5};
  a.holders.push_back(
      {102, 0x1000, "stress_latch", spinwise::lock_mode::sx, "scenario_hot_page.cpp:80", 300});
  spinwise::stuck_wait_report b;
  b.waiter = {103, 0x2000, "stress_latch", spinwise::lock_mode::x, "", 120};
  const nlohmann::json j = st::stuck_reports_json({a, b});
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["waiter_tid"], 101);
  EXPECT_EQ(j[0]["mode"], "s");
  EXPECT_EQ(j[0]["site"], "scenario_hot_page.cpp:97");
  EXPECT_DOUBLE_EQ(j[0]["waited_ms"].get<double>(), 250.5);
  EXPECT_EQ(j[0]["lock_class"], "stress_latch");
  EXPECT_EQ(j[0]["lock"], "0x1000");
  ASSERT_EQ(j[0]["holders"].size(), 1u);
  EXPECT_EQ(j[0]["holders"][0]["tid"], 102);
  EXPECT_EQ(j[0]["holders"][0]["mode"], "sx");
  EXPECT_EQ(j[0]["holders"][0]["site"], "scenario_hot_page.cpp:80");
  EXPECT_DOUBLE_EQ(j[0]["holders"][0]["held_ms"].get<double>(), 300.0);
  EXPECT_EQ(j[1]["mode"], "x");
  EXPECT_EQ(j[1]["site"], "");
  EXPECT_TRUE(j[1]["holders"].is_array());
  EXPECT_TRUE(j[1]["holders"].empty());
  EXPECT_TRUE(st::stuck_reports_json({}).is_array());
}

// Guards against the flags landing in the wrong place: --stall-holder-ms is a run's (a --compare
// setting may differ in it), --stuck-after-ms the session's.
TEST(StressFaults, FlagsParse) {
  const st::parse_outcome p = parse({"--stall-holder-ms", "300", "--stuck-after-ms", "100"});
  ASSERT_TRUE(p.run) << p.message;
  EXPECT_EQ(p.options.workload.stall_holder_ms, 300u);
  EXPECT_EQ(p.options.stuck_after_ms, 100u);
  const st::parse_outcome none = parse({});
  ASSERT_TRUE(none.run) << none.message;
  EXPECT_EQ(none.options.workload.stall_holder_ms, 0u);
  EXPECT_EQ(none.options.stuck_after_ms, 0u);
  const st::parse_outcome cmp = parse({"--compare", "--seed 1", "--stall-holder-ms 50"});
  ASSERT_TRUE(cmp.run) << cmp.message;
  ASSERT_EQ(cmp.options.compare.size(), 2u);
  EXPECT_EQ(cmp.options.compare[0].config.stall_holder_ms, 0u);
  EXPECT_EQ(cmp.options.compare[1].config.stall_holder_ms, 50u);
  for (const char* bad : {"0", "600001", "-1", "1.5", "soon", ""}) {
    const st::parse_outcome e = parse({"--stall-holder-ms", bad});
    EXPECT_FALSE(e.run) << bad;
    EXPECT_EQ(e.exit_code, 2) << bad;
  }
  st::workload_config c;
  c.stall_holder_ms = st::kMaxStallHolderMs + 1;
  EXPECT_THROW(st::resolve(c), std::invalid_argument);
}
