// spinwise-stress, the instruments spinwise-stress measures with: the histogram behind every
// percentile, the emulated and the drifting relax, and the policy wrapper's counts.

#include "stress_test_util.hpp"

using namespace stress_test;

// --- the histogram behind every percentile ---------------------------------------------------

// Guards against percentiles off by a bucket (or by the exact/log boundary at 64).
TEST(StressHistogram, ExactBelow64AndWithin3PercentAbove) {
  spinwise::bench::latency_histogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);

  spinwise::bench::latency_histogram big;
  for (std::uint64_t v = 1000; v < 1'001'000; v += 1000) big.record(v);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    const double exact = 1000.0 * std::ceil(p / 100.0 * 1000.0);
    const double got = static_cast<double>(big.percentile(p));
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(got, exact * 1.033) << p;
  }
  for (std::size_t i = 0; i + 1 < spinwise::bench::latency_histogram::kBuckets; ++i) {
    ASSERT_EQ(spinwise::bench::latency_histogram::index(spinwise::bench::latency_histogram::upper_bound(i)),
              i);
    ASSERT_EQ(
        spinwise::bench::latency_histogram::index(spinwise::bench::latency_histogram::upper_bound(i) + 1),
        i + 1);
  }
}

TEST(StressHistogram, MergeAndEmpty) {
  spinwise::bench::latency_histogram a, b, e;
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
  spinwise::bench::ratio_histogram h;
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
  spinwise::bench::ratio_histogram edges;
  for (double v : {0.0, 1e-9, 1e9, std::nan("")}) edges.record(v);
  EXPECT_EQ(edges.count(), 4u);
  EXPECT_EQ(spinwise::bench::ratio_histogram::index(0.0), 0u);
  EXPECT_EQ(spinwise::bench::ratio_histogram::index(1e9), spinwise::bench::ratio_histogram::kBuckets - 1);
  for (std::size_t i = 0; i < spinwise::bench::ratio_histogram::kBuckets; ++i) {
    ASSERT_EQ(spinwise::bench::ratio_histogram::index(spinwise::bench::ratio_histogram::middle(i)), i);
  }
  spinwise::bench::ratio_histogram a, b;
  a.record(2.0);
  b.record(0.25);
  b.record(4.0);
  a.merge(b);
  a.merge(spinwise::bench::ratio_histogram{});
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
