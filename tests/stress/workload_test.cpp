// spinwise-stress, the workload: the time policies' timed rules, both scenarios on every lock, the
// accounting, the figures read from the library's lock statistics, and the running-thread monitor.

#include "stress_test_util.hpp"

using namespace stress_test;

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
// The window waits for work (min_requests, as HotPageLatchesTheLastPage below says why): with a
// fixed window a loaded host could let no request complete in it. The window lies inside the run;
// that it ended within its nominal duration was a timing assert (a late wake-up of 3 ms failed it,
// beside two busy loops on a 2-vCPU AMD EPYC Zen 4 guest), and a run that does not end is ctest's timeout.
TEST(StressWorkload, StatsLockAccountsForEverySubquery) {
  st::workload_config c = small();
  c.min_requests = c.threads + 1;
  c.max_duration_s = 60;
  const st::run_result r = run_with_work(c);
  expect_sound(r);
  EXPECT_GT(r.requests, 0u) << "no request completed in the window";
  EXPECT_EQ(r.request_rt.count, r.requests);
  EXPECT_GE(r.subqueries, r.requests * r.config.fanout - r.config.fanout * r.config.clients);
  EXPECT_EQ(r.subquery_rt.count, r.subqueries);
  EXPECT_EQ(r.acquisitions, r.subqueries) << "one latch acquisition per sub-query";
  EXPECT_GT(r.requests_per_s, 0.0);
  EXPECT_GE(r.request_rt.p99_ns, r.request_rt.p50_ns);
  EXPECT_GE(r.request_rt.max_ns, r.request_rt.p999_ns);
  EXPECT_GT(r.window_s, 0.0);
  EXPECT_LE(r.window_s, r.total_s);
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
// section and no outside work make waiters spin, and the delay loops must show up. Each run's
// assertions need waits in its window, which a loaded host can deny a fixed window (no park in 1
// of 7 runs on a busy 2-vCPU AMD EPYC Zen 4 guest; a spent budget is no park either: the lock may
// be free after the yield, 1 of 6 hunt runs): run_until waits for the event each part asserts.
TEST(StressWorkload, SpinDelaysAreMeasuredAndBudgetsCounted) {
  st::workload_config c = small();
  c.work_before_ns = 0;
  c.work_after_ns = 0;
  c.cs_ns = 20000;
  c.cpu = st::cpu_model::skylake;
  const st::run_result r = run_until(
      c, [](const st::run_result& x) { return x.requests > 0 && x.spin_episodes > 0; }, "spin episode");
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
  const st::run_result p = run_until(
      c, [](const st::run_result& x) { return x.requests > 0 && x.parks > 0; }, "park");
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
