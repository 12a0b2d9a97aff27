// Wait policies: the InnoDB delay distribution, the time conversion, backoff shapes, knob
// validation, per-type overrides and live changes seen by running waiters.

#include "spinwise/wait_policy.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "lock_test_util.hpp"
#include "shared_test_util.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"

namespace {

// Records what a policy asks its Relax for, on the calling thread: a histogram of relax_n(n).
constexpr std::size_t kHist = 100'001;
thread_local std::vector<std::uint64_t>* t_hist = nullptr;
thread_local std::uint64_t t_calls = 0;
thread_local std::uint32_t t_last = 0;

struct counting_relax {
  static void relax_n(std::uint32_t n) noexcept {
    ++t_calls;
    t_last = n;
    if (t_hist != nullptr && n < kHist) ++(*t_hist)[n];
  }
};

// As counting_relax, and each relax takes exactly 10 ns of a counter of its own (1 tick = 1 ns),
// which the clock-bounded delays read: a delay of d ns is d / 10 relaxes exactly. Counts the
// conversions asked for.
thread_local std::uint64_t t_relax_ns_calls = 0;
thread_local std::uint64_t t_fake_ns = 0;
struct ten_ns_relax {
  static void relax_n(std::uint32_t n) noexcept {
    counting_relax::relax_n(n);
    t_fake_ns += 10ull * n;
  }
  static double relax_ns() noexcept {
    ++t_relax_ns_calls;
    return 10.0;
  }
  static std::uint64_t counter() noexcept { return t_fake_ns; }
  static double counter_ticks_per_ns() noexcept { return 1.0; }
};

// One round of a waiter: the relaxes it issued (a clock-bounded delay issues them in chunks).
template <class W>
std::uint64_t snooze_relaxes(W& w) {
  const std::uint64_t before = w.relaxes();
  w.snooze();
  return w.relaxes() - before;
}

struct histogram_scope {
  std::vector<std::uint64_t> hist = std::vector<std::uint64_t>(kHist, 0);
  histogram_scope() {
    t_hist = &hist;
    t_calls = 0;
  }
  ~histogram_scope() { t_hist = nullptr; }
};

// Pearson's chi-square of `observed` against a uniform spread over its bins.
double chi_square_uniform(const std::vector<std::uint64_t>& observed) {
  double total = 0;
  for (auto o : observed) total += static_cast<double>(o);
  const double expected = total / static_cast<double>(observed.size());
  double chi = 0;
  for (auto o : observed)
    chi += (static_cast<double>(o) - expected) * (static_cast<double>(o) - expected) / expected;
  return chi;
}

// Each test gets its own tags, so knob state never leaks between tests.
struct uniform_tag;
struct uniform_wide_tag;
struct mult_tag;
struct zero_tag;

// Bug guarded: a delay drawn from the wrong range (inclusive upper bound, off by one, bias), or
// a shared generator. InnoDB draws ut::random_from_interval(0, spin_wait_delay): uniform over
// [0, delay). Fixed seed, so the test is deterministic; the bound is chi-square at p = 0.001.
TEST(InnodbPolicy, DelayIsUniformOverZeroToSpinWaitDelay) {
  using P = spinwise::innodb_policy<uniform_tag, counting_relax>;
  ASSERT_TRUE(P::set({6, 1, spinwise::kMaxSpinLoops}));
  histogram_scope h;
  spinwise::seed_spin_jitter(0x5eed);
  constexpr int kRounds = 60'000;
  P::waiter w;
  for (int i = 0; i < kRounds; ++i) w.snooze();
  EXPECT_EQ(t_calls, static_cast<std::uint64_t>(kRounds));
  std::vector<std::uint64_t> bins(h.hist.begin(), h.hist.begin() + 6);
  for (std::size_t v = 0; v < bins.size(); ++v) EXPECT_GT(bins[v], 0u) << "delay " << v << " never drawn";
  std::uint64_t above = 0;
  for (std::size_t v = 6; v < kHist; ++v) above += h.hist[v];
  EXPECT_EQ(above, 0u) << "a delay at or above spin_wait_delay was drawn";
  EXPECT_LT(chi_square_uniform(bins), 20.515) << "df 5, p = 0.001";
}

TEST(InnodbPolicy, WideDelayIsUniformToo) {
  using P = spinwise::innodb_policy<uniform_wide_tag, counting_relax>;
  ASSERT_TRUE(P::set({1000, 1, spinwise::kMaxSpinLoops}));
  histogram_scope h;
  spinwise::seed_spin_jitter(42);
  P::waiter w;
  for (int i = 0; i < 100'000; ++i) w.snooze();
  std::vector<std::uint64_t> deciles(10, 0);
  for (std::size_t v = 0; v < 1000; ++v) deciles[v / 100] += h.hist[v];
  std::uint64_t above = 0;
  for (std::size_t v = 1000; v < kHist; ++v) above += h.hist[v];
  EXPECT_EQ(above, 0u);
  EXPECT_GT(h.hist[0] + h.hist[999], 0u);
  EXPECT_LT(chi_square_uniform(deciles), 27.877) << "df 9, p = 0.001";
}

// Bug guarded: the multiplier applied to the bound instead of the draw (MySQL waits
// draw x multiplier relaxes: always a multiple of it).
TEST(InnodbPolicy, DelayIsTheDrawTimesThePauseMultiplier) {
  using P = spinwise::innodb_policy<mult_tag, counting_relax>;
  ASSERT_TRUE(P::set({6, 50, 100}));
  histogram_scope h;
  spinwise::seed_spin_jitter(7);
  P::waiter w;
  for (int i = 0; i < 10'000; ++i) w.snooze();
  std::uint64_t at_multiples = 0;
  for (std::size_t v = 0; v < 6; ++v) {
    EXPECT_GT(h.hist[v * 50], 0u);
    at_multiples += h.hist[v * 50];
  }
  EXPECT_EQ(at_multiples, 10'000u);
}

// MySQL's ut_delay(0): spin_wait_delay = 0 polls without any delay.
TEST(InnodbPolicy, ZeroDelayMeansNoDelay) {
  using P = spinwise::innodb_policy<zero_tag, counting_relax>;
  ASSERT_TRUE(P::set({0, 100, 30}));
  histogram_scope h;
  P::waiter w;
  for (int i = 0; i < 100; ++i) w.snooze();
  EXPECT_EQ(h.hist[0], 100u);
}

struct loops_tag;
// Bug guarded: an unbounded or off-by-one spin budget. is_completed() turns true after exactly
// spin_loops rounds (at once for 0), for every policy.
template <class P>
void expect_budget(std::uint32_t loops) {
  ASSERT_TRUE(P::set_spin_loops(loops)) << P::name();
  typename P::waiter w;
  for (std::uint32_t i = 0; i < loops; ++i) {
    EXPECT_FALSE(w.is_completed()) << P::name() << " round " << i;
    w.snooze();
  }
  EXPECT_TRUE(w.is_completed()) << P::name();
  EXPECT_EQ(w.rounds(), loops);
}
TEST(WaitPolicies, SpinBudgetIsExactlySpinLoopsRounds) {
  for (std::uint32_t loops : {0u, 1u, 30u}) {
    expect_budget<spinwise::innodb_policy<loops_tag, counting_relax>>(loops);
    expect_budget<spinwise::time_policy<loops_tag, ten_ns_relax>>(loops);
    expect_budget<spinwise::exp_backoff_policy<loops_tag, ten_ns_relax>>(loops);
    expect_budget<spinwise::no_backoff_policy<loops_tag, counting_relax>>(loops);
  }
}

TEST(WaitPolicies, Names) {
  EXPECT_EQ(spinwise::innodb_policy<>::name(), "innodb");
  EXPECT_EQ(spinwise::time_policy<>::name(), "time");
  EXPECT_EQ(spinwise::exp_backoff_policy<>::name(), "exp_backoff");
  EXPECT_EQ(spinwise::no_backoff_policy<>::name(), "no_backoff");
}

struct time_tag;
// Bug guarded: the unit not converted through the relax cost (an instruction count again), or
// converted every round (sched_getcpu on the spin path). With a 10 ns relax and a 200 ns unit,
// every delay is draw x 20 relaxes, and the cost is asked for once per wait.
TEST(TimePolicy, DelayUnitIsConvertedOncePerWait) {
  using P = spinwise::time_policy<time_tag, ten_ns_relax>;
  ASSERT_TRUE(P::set({6, 200, spinwise::kMaxSpinLoops}));
  std::vector<std::uint64_t> hist(kHist, 0);  // relaxes per round (not per relax_n call)
  t_relax_ns_calls = 0;
  spinwise::seed_spin_jitter(99);
  for (int wait = 0; wait < 10; ++wait) {
    P::waiter w;
    for (int i = 0; i < 1000; ++i) {
      const std::uint64_t n = snooze_relaxes(w);
      if (n < kHist) ++hist[n];
    }
  }
  EXPECT_EQ(t_relax_ns_calls, 10u);
  std::uint64_t ok = 0;
  for (std::size_t v = 0; v < 6; ++v) {
    EXPECT_GT(hist[v * 20], 0u) << v;
    ok += hist[v * 20];
  }
  EXPECT_EQ(ok, 10'000u);
}

// With the real relaxer the conversion comes from relax_ns_here(): the count per unit is
// delay_unit_ns / (measured ns per relax), whatever this CPU's relax costs.
struct time_real_tag;
TEST(TimePolicy, RealRelaxConversionFollowsTheMeasuredCost) {
  const double ns = spinwise::relax_ns_here();
  ASSERT_GT(ns, 0.0);
  const std::uint32_t per_unit = spinwise::relaxes_for_ns(1000.0);
  EXPECT_NEAR(static_cast<double>(per_unit), 1000.0 / ns, 1.0);
  spinwise::time_policy<time_real_tag>::waiter w;  // runs the real relaxer: must simply return
  for (int i = 0; i < 3; ++i) w.snooze();
  EXPECT_EQ(w.rounds(), 3u);
}

struct exp_tag;
// Bug guarded: backoff that does not grow, exceeds its cap, or has no jitter. Round r waits
// [c/2, c] ns with c = min(min_delay_ns << r, max_delay_ns); 10 ns relaxes here.
TEST(ExpBackoffPolicy, GrowsExponentiallyWithJitterUpToTheCap) {
  using P = spinwise::exp_backoff_policy<exp_tag, ten_ns_relax>;
  ASSERT_TRUE(P::set({100, 3200, 40}));
  spinwise::seed_spin_jitter(3);
  std::vector<std::array<std::uint32_t, 2>> range(40, {0xffffffffu, 0});
  for (int wait = 0; wait < 200; ++wait) {
    P::waiter w;
    for (int r = 0; r < 40; ++r) {
      const auto n = static_cast<std::uint32_t>(snooze_relaxes(w));
      range[r][0] = std::min(range[r][0], n);
      range[r][1] = std::max(range[r][1], n);
    }
  }
  for (int r = 0; r < 40; ++r) {
    const std::uint32_t c = std::min<std::uint32_t>(100u << std::min(r, 20), 3200u) / 10;  // in relaxes
    EXPECT_GE(range[r][0], c / 2) << "round " << r;
    EXPECT_LE(range[r][1], c) << "round " << r;
    EXPECT_LT(range[r][0], range[r][1]) << "round " << r << ": no jitter";
  }
}

// Prompt handoff, by name only. Bugs guarded: a prompt_time_policy waiter deep in a long delay
// that finishes it before it looks at the lock again (the handoff then waits out the delay); and
// a default policy that polls the lock inside its backoff, which cut ttas_mutex's and
// hybrid_mutex's contended throughput to 0.3-0.7x on an AMD Zen 5 guest. prompt_time_policy asks
// the lock's until() after every check interval; time, exp_backoff and innodb (an instruction
// count by definition) never do.
struct until_tag;
TEST(PromptHandoff, OnlyThePromptPolicyEndsARoundOnceTheLockLooksFree) {
  namespace d = spinwise::detail;
  const std::uint64_t check = static_cast<std::uint64_t>(d::backend::kDelayCheckNs / 10);  // 10 ns relaxes
  using P = spinwise::prompt_time_policy<until_tag, ten_ns_relax>;
  using T = spinwise::time_policy<until_tag, ten_ns_relax>;
  using E = spinwise::exp_backoff_policy<until_tag, ten_ns_relax>;
  using I = spinwise::innodb_policy<until_tag, ten_ns_relax>;
  ASSERT_TRUE(T::set({1000, 10'000, 100}));  // rounds of up to 10 ms
  ASSERT_TRUE(E::set({100'000, 100'000, 100}));
  ASSERT_TRUE(I::set({1000, 100, 100}));
  spinwise::seed_spin_jitter(5);
  int asked = 0;
  const auto free_after_two = [&asked] { return ++asked >= 2; };
  static_assert(std::is_same_v<P::waiter::relax, T::waiter::relax>);
  EXPECT_EQ(P::spin_wait_delay(), 1000u) << "prompt_time_policy<Tag> shares time_policy<Tag>'s knobs";
  P::waiter p;
  asked = 0;
  for (int i = 0; i < 20 && p.relaxes() == 0; ++i) p.snooze(free_after_two);  // skip a zero draw
  EXPECT_EQ(asked, 2);
  EXPECT_LE(p.relaxes(), 2 * check);
  T::waiter t;
  asked = 0;
  for (int i = 0; i < 20 && t.relaxes() == 0; ++i) t.snooze(free_after_two);
  EXPECT_EQ(asked, 0) << "time_policy's rounds run their course";
  EXPECT_GT(t.relaxes(), 2 * check);
  E::waiter e;
  asked = 0;
  e.snooze(free_after_two);
  EXPECT_EQ(asked, 0) << "exp_backoff_policy's rounds run their course";
  EXPECT_GT(e.relaxes(), 2 * check);
  I::waiter in;
  asked = 0;
  for (int i = 0; i < 20 && in.relaxes() == 0; ++i) in.snooze(free_after_two);
  EXPECT_EQ(asked, 0) << "innodb counts instructions: it does not look";
  EXPECT_GT(in.relaxes(), 2 * check);
  T::reset();
  E::reset();
  I::reset();
}

TEST(NoBackoffPolicy, OneRelaxPerRound) {
  histogram_scope h;
  spinwise::no_backoff_policy<void, counting_relax>::waiter w;
  for (int i = 0; i < 50; ++i) w.snooze();
  EXPECT_EQ(h.hist[1], 50u);
  EXPECT_EQ(t_calls, 50u);
}

// Bug guarded: two threads drawing the same delays (a shared or identically seeded generator),
// which keeps colliding waiters in lockstep.
TEST(Jitter, ThreadsDrawDifferentSequences) {
  auto draw = [] {
    std::array<std::uint64_t, 8> v{};
    for (auto& x : v) x = spinwise::detail::jitter_next();
    return v;
  };
  std::array<std::uint64_t, 8> a{}, b{};
  std::thread([&] { a = draw(); }).join();
  std::thread([&] { b = draw(); }).join();
  EXPECT_NE(a, b);
  // And a seed makes a sequence reproducible.
  spinwise::seed_spin_jitter(1234);
  const auto c = draw();
  spinwise::seed_spin_jitter(1234);
  EXPECT_EQ(draw(), c);
}

// ---- knobs -------------------------------------------------------------------------------

struct validate_tag;
template <class P>
void expect_rejected(spinwise::knob_status s, const typename P::settings_type& before, std::errc code,
                     const char* knob) {
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(static_cast<bool>(s));
  EXPECT_EQ(s.code(), code);
  EXPECT_NE(std::string(s.message()).find(knob), std::string::npos) << s.message();
  const auto after = P::current();
  EXPECT_EQ(std::memcmp(&before, &after, sizeof before), 0) << "a rejected setter changed a knob";
}

// Bug guarded: an out-of-range knob applied (or clamped silently), or a multi-value setter that
// applies the good values before failing on a bad one. Both levels: process-wide and per Tag.
template <class Tag>
void innodb_validation() {
  using P = spinwise::innodb_policy<Tag>;
  ASSERT_TRUE(P::set({10, 20, 40}));
  const auto before = P::current();
  expect_rejected<P>(P::set_spin_wait_delay(1001), before, std::errc::argument_out_of_domain,
                     "spin_wait_delay");
  expect_rejected<P>(P::set_pause_multiplier(0), before, std::errc::argument_out_of_domain,
                     "pause_multiplier");
  expect_rejected<P>(P::set_pause_multiplier(101), before, std::errc::argument_out_of_domain,
                     "pause_multiplier");
  expect_rejected<P>(P::set_spin_loops(spinwise::kMaxSpinLoops + 1), before,
                     std::errc::argument_out_of_domain, "spin_loops");
  expect_rejected<P>(P::set({5, 0, 5}), before, std::errc::argument_out_of_domain, "pause_multiplier");
  expect_rejected<P>(P::set("spin_wait_dealy", 5), before, std::errc::invalid_argument, "spin_wait_delay");
  // The bounds themselves are accepted.
  EXPECT_TRUE(P::set({0, 1, 0}));
  EXPECT_TRUE(P::set({1000, 100, spinwise::kMaxSpinLoops}));
  const auto top = P::current();
  EXPECT_EQ(top.spin_wait_delay, 1000u);
  EXPECT_EQ(top.pause_multiplier, 100u);
  EXPECT_EQ(top.spin_loops, spinwise::kMaxSpinLoops);
  P::reset();
}
TEST(Knobs, InnodbOutOfRangeIsRejectedAndChangesNothing) {
  innodb_validation<void>();
  innodb_validation<validate_tag>();
  const spinwise::innodb_settings defaults;
  const auto now = spinwise::innodb_policy<>::current();
  EXPECT_EQ(std::memcmp(&defaults, &now, sizeof now), 0) << "reset() restores MySQL's defaults";
  EXPECT_EQ(now.spin_wait_delay, 6u);
  EXPECT_EQ(now.pause_multiplier, 50u);
  EXPECT_EQ(now.spin_loops, 30u);
}

TEST(Knobs, TimeAndBackoffOutOfRangeIsRejectedAndChangesNothing) {
  using T = spinwise::time_policy<validate_tag>;
  const auto tb = T::current();
  expect_rejected<T>(T::set_delay_unit_ns(0), tb, std::errc::argument_out_of_domain, "delay_unit_ns");
  expect_rejected<T>(T::set_delay_unit_ns(10'001), tb, std::errc::argument_out_of_domain, "delay_unit_ns");
  expect_rejected<T>(T::set_spin_wait_delay(1001), tb, std::errc::argument_out_of_domain, "spin_wait_delay");
  EXPECT_EQ(tb.delay_unit_ns, 200u);

  using E = spinwise::exp_backoff_policy<validate_tag>;
  ASSERT_TRUE(E::set({100, 1000, 10}));
  const auto eb = E::current();
  expect_rejected<E>(E::set_min_delay_ns(2000), eb, std::errc::invalid_argument, "min_delay_ns");
  expect_rejected<E>(E::set_max_delay_ns(50), eb, std::errc::invalid_argument, "max_delay_ns");
  expect_rejected<E>(E::set({2000, 1000, 10}), eb, std::errc::invalid_argument, "min_delay_ns");
  expect_rejected<E>(E::set_max_delay_ns(0), eb, std::errc::argument_out_of_domain, "max_delay_ns");
  EXPECT_TRUE(E::set({2000, 4000, 10}));  // both at once: consistent
  E::reset();

  using N = spinwise::no_backoff_policy<validate_tag>;
  const auto nb = N::current();
  expect_rejected<N>(N::set_spin_loops(spinwise::kMaxSpinLoops + 1), nb, std::errc::argument_out_of_domain,
                     "spin_loops");
}

TEST(Knobs, ByNameSetAndGet) {
  using P = spinwise::time_policy<validate_tag>;
  EXPECT_TRUE(P::set("delay_unit_ns", 75));
  std::uint32_t v = 0;
  EXPECT_TRUE(P::get("delay_unit_ns", v));
  EXPECT_EQ(v, 75u);
  EXPECT_FALSE(P::get("nope", v));
  EXPECT_EQ(v, 75u);
  EXPECT_TRUE(P::reset("delay_unit_ns"));
  EXPECT_EQ(P::delay_unit_ns(), spinwise::time_policy<>::delay_unit_ns());
  EXPECT_EQ(P::reset("nope").code(), std::errc::invalid_argument);
  P::reset();
}

struct override_a;
struct override_b;
// Bug guarded: per-type knobs that leak into other types or shadow the process-wide values
// they should fall back to.
TEST(Knobs, PerTypeOverrideFallsBackToTheGlobalValue) {
  using G = spinwise::innodb_policy<>;
  using A = spinwise::innodb_policy<override_a>;
  using B = spinwise::innodb_policy<override_b, counting_relax>;
  G::reset();
  EXPECT_FALSE(A::overridden());
  ASSERT_TRUE(A::set_spin_wait_delay(3));
  EXPECT_TRUE(A::overridden());
  EXPECT_EQ(A::spin_wait_delay(), 3u);
  EXPECT_EQ(G::spin_wait_delay(), 6u);
  EXPECT_EQ(B::spin_wait_delay(), 6u);

  ASSERT_TRUE(G::set({12, 40, 7}));
  EXPECT_EQ(A::spin_wait_delay(), 3u) << "override kept";
  EXPECT_EQ(A::pause_multiplier(), 40u) << "unset fields follow the global value";
  EXPECT_EQ(A::spin_loops(), 7u);
  EXPECT_EQ(B::spin_wait_delay(), 12u);

  // Knobs live per Tag, not per Relax: the same Tag with another Relax shares them.
  EXPECT_EQ((spinwise::innodb_policy<override_a, counting_relax>::spin_wait_delay()), 3u);

  ASSERT_TRUE(A::reset("spin_wait_delay"));
  EXPECT_FALSE(A::overridden());
  EXPECT_EQ(A::spin_wait_delay(), 12u);
  G::reset();
  EXPECT_EQ(A::spin_wait_delay(), 6u);

  // The public lock aliases each have their own Tag.
  ASSERT_TRUE(spinwise::ttas_mutex::policy::set_spin_wait_delay(1));
  EXPECT_EQ(spinwise::hybrid_mutex::policy::spin_wait_delay(), 6u);
  EXPECT_EQ(spinwise::time_policy<>::spin_wait_delay(), 6u);
  spinwise::ttas_mutex::policy::reset();
}

// Bug guarded: knobs cached for the life of a wait, so an operator's change only reaches new
// waits (a process stuck in long waits would never pick it up). A running waiter must see a
// change at its next round.
struct live_tag;
TEST(Knobs, RunningWaiterSeesAChangeAtItsNextRound) {
  using P = spinwise::innodb_policy<live_tag, counting_relax>;
  ASSERT_TRUE(P::set({1, 1, spinwise::kMaxSpinLoops}));  // delay 1: every draw is 0 relaxes
  std::atomic<std::int64_t> rounds{0};
  std::atomic<std::int64_t> first_nonzero{-1};  // the round that first waited, -1 = none yet
  std::atomic<std::uint32_t> first_value{0};
  std::atomic<bool> give_up{false};
  std::thread waiter([&] {
    P::waiter w;  // one wait, from before the change to after it
    for (std::int64_t i = 0; !give_up.load(); ++i) {
      w.snooze();
      if (t_last != 0) {
        first_value.store(t_last);
        first_nonzero.store(i);
        return;
      }
      rounds.fetch_add(1);
    }
  });
  // Rounds 0..999 have finished before the change is made.
  while (rounds.load() < 1000 && first_nonzero.load() < 0) std::this_thread::yield();
  ASSERT_TRUE(P::set({1000, 100, spinwise::kMaxSpinLoops}));
  // P(draw 0) = 1/1000 per round: a waiter that reads the knobs each round waits within a few.
  const auto give_up_at = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (first_nonzero.load() < 0 && std::chrono::steady_clock::now() < give_up_at) std::this_thread::yield();
  give_up.store(true);
  waiter.join();
  ASSERT_GE(first_nonzero.load(), 0) << "the running waiter never used the new knobs";
  EXPECT_GE(first_nonzero.load(), 1000) << "it waited before the change";
  EXPECT_EQ(first_value.load() % 100, 0u) << "a delay not made of the new multiplier";
}

// The same through a real lock. Bug guarded: a lock's slow path that reads the knobs once per
// wait (or a waiter that caches them), so a thread already blocked in lock() keeps the old delay.
// The waiter's Relax logs every round: each snooze ends in exactly one relax_n(delay draw x
// pause_multiplier). Under the old knobs (delay 1) every round asks for 0 relaxes; under the new
// ones (delay 1000, multiplier 7) a round asks for a non-zero multiple of 7 with p = 0.999. Round
// kHoldRound holds the waiter until the knobs have changed, so every later round starts after the
// change and the waiter cannot spend its budget first, however the threads get scheduled.
struct live_lock_tag;
struct lock_round_log {
  static constexpr std::uint64_t kHoldRound = 100;
  static constexpr std::uint64_t kRoundsAfter = 1000;  // P(all draw 0 under the new knobs) = 1e-3000
  static inline std::atomic<std::uint64_t> rounds{0};
  static inline std::atomic<std::uint32_t> max_before{0};    // largest relax_n before the change
  static inline std::atomic<bool> changed{false};            // the new knobs are stored
  static inline std::atomic<std::uint64_t> rounds_after{0};  // rounds after the held one
  static inline std::atomic<std::uint32_t> first_new{0};     // first non-zero relax_n after it
  static inline std::atomic<std::uint64_t> first_new_round{0};

  static void clear() {
    rounds = 0;
    max_before = 0;
    changed = false;
    rounds_after = 0;
    first_new = 0;
    first_new_round = 0;
  }
  static void relax_n(std::uint32_t n) noexcept {
    const std::uint64_t r = rounds.fetch_add(1) + 1;  // this round's number, from 1
    if (r < kHoldRound) {
      if (n > max_before.load()) max_before.store(n);
    } else if (r == kHoldRound) {
      if (n > max_before.load()) max_before.store(n);
      // Bounded, so a test that failed before the change cannot strand this thread.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!changed.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    } else {
      if (n != 0 && first_new.load() == 0) {
        first_new_round.store(rounds_after.load() + 1);
        first_new.store(n);
      }
      rounds_after.fetch_add(1);
    }
  }
};
TEST(Knobs, ThreadSpinningInLockSeesAChange) {
  using P = spinwise::innodb_policy<live_lock_tag, lock_round_log>;
  using log = lock_round_log;
  log::clear();
  ASSERT_TRUE(P::set({1, 1, spinwise::kMaxSpinLoops}));  // delay 1: every draw is 0 relaxes
  spinwise::ttas_mutex_t<P> m;
  m.lock();
  std::thread t([&] {
    m.lock();
    m.unlock();
  });
  // No ASSERT until the thread is joined: every path below releases it.
  const bool held = spinwise_test::eventually([] { return log::rounds.load() >= log::kHoldRound; });
  EXPECT_TRUE(held) << "the blocked thread never reached round " << log::kHoldRound << " of its spin";
  EXPECT_TRUE(P::set({1000, 7, spinwise::kMaxSpinLoops}));
  log::changed.store(true);
  // Either it used the new knobs, or it ran kRoundsAfter rounds without them: both end the wait.
  spinwise_test::eventually(
      [] { return log::first_new.load() != 0 || log::rounds_after.load() >= log::kRoundsAfter; });
  m.unlock();
  t.join();
  ASSERT_TRUE(held);
  EXPECT_EQ(log::max_before.load(), 0u) << "a round before the change did not use the old knobs";
  ASSERT_NE(log::first_new.load(), 0u)
      << "the thread spinning in lock() never used the changed knobs: " << log::rounds_after.load()
      << " rounds after the change all relaxed 0 times";
  EXPECT_EQ(log::first_new.load() % 7, 0u) << "a delay not made of the new pause_multiplier";
  EXPECT_LE(log::first_new_round.load(), 30u)
      << "the new knobs reached the waiter only after " << log::first_new_round.load()
      << " rounds (p = 1e-90 if read each round)";
}

// Bug guarded: the cross-field rule of exp_backoff (min_delay_ns <= max_delay_ns) held for set()
// and set(name) but could be broken by a process-wide reset(name), or by a process-wide change
// under a Tag that overrides one of the two. Every path must keep it.
struct cross_rule_tag;
TEST(Knobs, CrossFieldRuleHoldsOnEveryPath) {
  using G = spinwise::exp_backoff_policy<>;
  using T = spinwise::exp_backoff_policy<cross_rule_tag>;
  const auto holds = [](const spinwise::exp_backoff_settings& s) { return s.min_delay_ns <= s.max_delay_ns; };

  // A process-wide reset of max to its default (2048) under min = 3000: refused, nothing changed.
  ASSERT_TRUE(G::set({3000, 5000, 12}));
  const auto r = G::reset("max_delay_ns");
  EXPECT_EQ(r.code(), std::errc::invalid_argument);
  EXPECT_NE(std::string(r.message()).find("min_delay_ns"), std::string::npos) << r.message();
  EXPECT_EQ(G::max_delay_ns(), 5000u) << "a refused reset changes nothing";
  EXPECT_TRUE(holds(G::current()));
  EXPECT_TRUE(G::reset("min_delay_ns"));  // min back to 32: fine
  EXPECT_TRUE(G::reset("max_delay_ns"));  // now fine too
  EXPECT_EQ(G::current().max_delay_ns, 2048u);

  // A Tag that overrides min alone, then a process-wide max below it: the Tag's pair must hold.
  G::reset();
  ASSERT_TRUE(T::set_min_delay_ns(1500));  // under the process-wide max 2048
  EXPECT_TRUE(G::set_max_delay_ns(1000));  // legal for the process-wide values (min 32)
  EXPECT_TRUE(holds(G::current()));
  EXPECT_TRUE(holds(T::current())) << T::current().min_delay_ns << " > " << T::current().max_delay_ns;
  EXPECT_EQ(T::current().min_delay_ns, 1500u);
  EXPECT_EQ(T::current().max_delay_ns, 2048u) << "the Tag kept the max it saw when it set min";
  EXPECT_EQ(T::current().spin_loops, G::current().spin_loops) << "untied fields still follow";

  // The Tag drops its override of one of the pair: both follow the process-wide values again.
  EXPECT_TRUE(T::reset("max_delay_ns"));
  EXPECT_EQ(T::current().min_delay_ns, G::current().min_delay_ns);
  EXPECT_EQ(T::current().max_delay_ns, 1000u);
  EXPECT_TRUE(holds(T::current()));
  EXPECT_FALSE(T::overridden());
  T::reset();
  G::reset();
}

// A relax whose cost the test sets, on a counter of its own (1 tick = 1 ns), and a counter that can
// be frozen: the clock-bounded delay logic with everything injected, no timing involved.
thread_local std::uint64_t t_clock_ns = 0;
thread_local std::uint64_t t_cost_ns = 10;          // what one relax takes now
thread_local std::uint64_t t_change_after = ~0ull;  // after this many relaxes ...
thread_local std::uint64_t t_cost_then = 10;        // ... each takes this long
thread_local bool t_frozen = false;                 // the counter stops
thread_local std::uint64_t t_issued = 0;
struct drifting_relax {
  static void relax_n(std::uint32_t n) noexcept {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (t_issued++ == t_change_after) t_cost_ns = t_cost_then;
      if (!t_frozen) t_clock_ns += t_cost_ns;
    }
  }
  static double relax_ns() noexcept { return 10.0; }  // what the relax table says
  static std::uint64_t counter() noexcept { return t_clock_ns; }
  static double counter_ticks_per_ns() noexcept { return 1.0; }
};
void drift(std::uint64_t after, std::uint64_t cost_then, bool frozen = false) {
  t_clock_ns = 1'000'000;
  t_cost_ns = 10;
  t_issued = 0;
  t_change_after = after;
  t_cost_then = cost_then;
  t_frozen = frozen;
}

// Bug guarded: a time-based delay converted to a relax count once and kept when the relax cost
// changes under it (a migration to another core, a shared host): the delay must end at its
// deadline, within one check interval (100 ns of relaxes on x86 and aarch64, 200 ns generic),
// however the cost moved.
TEST(ClockBoundedDelay, EndsAtItsDeadlineWhenTheRelaxCostChanges) {
  const double check_ns = spinwise::detail::backend::kDelayCheckNs;
  for (const std::uint64_t cost_then : {30u, 3u, 10u}) {  // 3x slower, 3x faster, unchanged
    for (const double ns : {200.0, 2'000.0, 20'000.0}) {
      drift(5, cost_then);
      spinwise::detail::delay_rates rates;
      const std::uint64_t start = t_clock_ns;
      const std::uint64_t issued = spinwise::detail::relax_for_ns<drifting_relax>(ns, rates);
      const double took = static_cast<double>(t_clock_ns - start);
      SCOPED_TRACE("delay " + std::to_string(ns) + " ns, relax 10 -> " + std::to_string(cost_then) + " ns");
      EXPECT_EQ(rates.per_check, static_cast<std::uint32_t>(check_ns / 10.0 + 0.5));
      EXPECT_GE(took, ns) << "ended before its deadline";
      // One check interval's relaxes at the new cost may follow the last read before the deadline.
      EXPECT_LT(took, ns + static_cast<double>(rates.per_check * cost_then))
          << "overshot by more than one check";
      EXPECT_EQ(issued, t_issued);
    }
  }
}

// A counter that stops (a broken clock source) cannot keep a waiter in one delay forever: it ends
// after kDelayRelaxCap x the converted count. A delay shorter than one check interval issues its
// converted count only, and a zero delay reads no counter.
TEST(ClockBoundedDelay, IsCappedAndShortDelaysStayShort) {
  drift(0, 10, /*frozen=*/true);
  spinwise::detail::delay_rates rates;
  const std::uint64_t issued = spinwise::detail::relax_for_ns<drifting_relax>(1'000.0, rates);
  EXPECT_GE(issued, 100u * spinwise::detail::kDelayRelaxCap);
  EXPECT_LT(issued, 100u * spinwise::detail::kDelayRelaxCap + rates.per_check);

  drift(~0ull, 10);
  EXPECT_EQ(spinwise::detail::relax_for_ns<drifting_relax>(30.0, rates), 3u);
  EXPECT_EQ(spinwise::detail::relax_for_ns<drifting_relax>(0.0, rates), 0u);
  EXPECT_EQ(t_issued, 3u);
}

// relax_for_ns_timed gives the delay's length without a counter read of the caller's: the counter
// at the last check of a delay that ran out, that plus the last chunk at its converted cost for one
// that until() ended (exact here while the table is right), 0 for a delay that issued nothing.
TEST(ClockBoundedDelay, TimedVariantGivesTheDelaysLength) {
  spinwise::detail::delay_rates rates;
  std::uint64_t took = 1;
  drift(~0ull, 10);
  std::uint64_t start = t_clock_ns;
  EXPECT_EQ(spinwise::detail::relax_for_ns_timed<drifting_relax>(2'000.0, rates,
                                                                 spinwise::detail::never_ready{}, took),
            200u);
  EXPECT_EQ(took, t_clock_ns - start);
  EXPECT_EQ(took, 2'000u);

  int asked = 0;
  const auto third = [&] { return ++asked == 3; };
  start = t_clock_ns;
  const std::uint64_t issued =
      spinwise::detail::relax_for_ns_timed<drifting_relax>(20'000.0, rates, third, took);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(issued, 3u * rates.per_check);
  EXPECT_EQ(took, t_clock_ns - start) << "the last chunk, after the last counter read, is counted";

  drift(0, 30);  // every relax now takes 3x what the table says: the last chunk is undercounted
  start = t_clock_ns;
  asked = 0;
  spinwise::detail::relax_for_ns_timed<drifting_relax>(20'000.0, rates, third, took);
  EXPECT_EQ(took, 2 * rates.per_check * 30 + rates.per_check * 10);
  EXPECT_LT(took, t_clock_ns - start);

  EXPECT_EQ(
      spinwise::detail::relax_for_ns_timed<drifting_relax>(0.0, rates, spinwise::detail::never_ready{}, took),
      0u);
  EXPECT_EQ(took, 0u);
}

// Bug guarded: a spin lock's waiter that looks at the word only at each counter check (every
// 100 ns of relaxes), where the lock asked to be polled every kDelayPollNs (25 ns on x86): its
// handoff then waits out most of a check interval. A plain predicate keeps the check interval.
TEST(ClockBoundedDelay, EagerPredicateIsPolledBetweenCounterChecks) {
  namespace d = spinwise::detail;
  int asked = 0;
  const auto third = [&asked] { return ++asked == 3; };
  static_assert(d::polls_eagerly<decltype(d::poll_eagerly(third))>::value);
  static_assert(!d::polls_eagerly<decltype(third)>::value);
  std::uint64_t took = 0;
  // Rates set by hand (10 ns relaxes, 1 tick = 1 ns), so every backend runs the same loop: a
  // counter check every 10 relaxes, a poll every 3 or 4 (4 does not divide the chunk).
  for (const std::uint32_t per_poll : {3u, 4u}) {
    SCOPED_TRACE("poll every " + std::to_string(per_poll) + " relaxes");
    d::delay_rates rates{0.1, 1.0, 10, per_poll};
    drift(~0ull, 10);
    asked = 0;
    std::uint64_t start = t_clock_ns;
    const std::uint64_t eager =
        d::relax_for_ns_timed<drifting_relax>(20'000.0, rates, d::poll_eagerly(third), took);
    EXPECT_EQ(asked, 3);
    // Polls after 3, 6, 9 relaxes; or 4, 8 and (the chunk's last 2) 10.
    EXPECT_EQ(eager, per_poll == 3 ? 9u : 10u) << "asked after every poll interval, not every counter check";
    EXPECT_EQ(took, t_clock_ns - start) << "the relaxes after the last counter read are counted";
    asked = 0;
    start = t_clock_ns;
    EXPECT_EQ(d::relax_for_ns_timed<drifting_relax>(20'000.0, rates, third, took), 30u)
        << "a plain predicate";
    EXPECT_EQ(took, t_clock_ns - start);
  }
  // A delay shorter than one poll interval: issued whole, asked once, not cut to the interval.
  d::delay_rates rates{0.1, 1.0, 10, 4};
  drift(~0ull, 10);
  asked = 0;
  const std::uint64_t start = t_clock_ns;
  EXPECT_EQ(d::relax_for_ns_timed<drifting_relax>(20.0, rates, d::poll_eagerly(third), took), 2u);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(took, t_clock_ns - start);
  // A poll interval of 0 (rates filled in by hand) is taken as 1, not looped on forever.
  d::delay_rates zero{0.1, 1.0, 10, 0};
  asked = 0;
  EXPECT_EQ(d::relax_for_ns_timed<drifting_relax>(20'000.0, zero, d::poll_eagerly(third), took), 3u);
  // The conversion: x86 polls a spin lock's word every 25 ns between its 100 ns checks; the
  // other backends poll at their check interval.
  d::delay_rates converted;
  converted.convert<drifting_relax>();
  EXPECT_EQ(converted.per_check, d::relaxes_in(d::backend::kDelayCheckNs, 0.1));
#if defined(__x86_64__) && !defined(SPINWISE_FORCE_GENERIC)
  EXPECT_EQ(converted.per_poll, 3u) << "25 ns of 10 ns relaxes, rounded";
  EXPECT_EQ(converted.per_check, 10u);
#else
  EXPECT_EQ(converted.per_poll, converted.per_check);
#endif
}

// The policies use it: time_policy's and exp_backoff_policy's rounds keep their length in time
// when the relax gets 3x slower in the middle of a wait; innodb_policy keeps its count (its
// definition), so its rounds get 3x longer.
struct drift_time_tag;
struct drift_innodb_tag;
TEST(ClockBoundedDelay, TimePoliciesKeepTimeInnodbKeepsCount) {
  using T = spinwise::time_policy<drift_time_tag, drifting_relax>;
  using I = spinwise::innodb_policy<drift_innodb_tag, drifting_relax>;
  ASSERT_TRUE(T::set({2, 1000, 100}));  // every non-zero draw: 1000 ns
  ASSERT_TRUE(I::set({2, 100, 100}));   // every non-zero draw: 100 relaxes (1000 ns at 10 ns)
  spinwise::seed_spin_jitter(7);
  const auto lengths = [](auto& w) {
    std::vector<std::uint64_t> ns;
    for (int r = 0; r < 60; ++r) {
      const std::uint64_t t0 = t_clock_ns;
      w.snooze();
      if (t_clock_ns != t0) ns.push_back(t_clock_ns - t0);
    }
    return ns;
  };
  drift(300, 30);
  T::waiter tw;
  for (const std::uint64_t ns : lengths(tw)) {
    EXPECT_GE(ns, 1000u);
    EXPECT_LT(ns, 1000u + 30u * 10u);  // one check interval at the slower cost
  }
  drift(300, 30);
  I::waiter iw;
  const auto innodb = lengths(iw);
  ASSERT_FALSE(innodb.empty());
  EXPECT_EQ(innodb.back(), 3000u) << "innodb_policy counts instructions: 100 relaxes of 30 ns";
  T::reset();
  I::reset();
}

}  // namespace
