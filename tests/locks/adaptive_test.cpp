// adaptive_policy: the controller's decisions on scripted outcomes (no timing anywhere), the
// class state they feed, the waiter's budget on a counter of its own, and locks that use it.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "spinwise/adaptive_policy.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/ticket_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"

namespace {

namespace d = spinwise::detail;

constexpr d::adaptive_bounds kBounds{200, 50'000, 10};

// A window of `wins` wins of `win_ns` each and `losses` losses of `budget` each.
d::adaptive_window window(std::uint32_t budget, std::uint32_t wins, std::uint64_t win_ns,
                          std::uint32_t losses) {
  d::adaptive_window w;
  for (std::uint32_t i = 0; i < wins; ++i) w.add(true, win_ns, budget);
  for (std::uint32_t i = 0; i < losses; ++i) w.add(false, budget, budget);
  return w;
}

// Plenty of process CPU: the cap does not bind.
constexpr std::uint64_t kIdleCpu = 1'000'000'000'000ull;

TEST(AdaptiveController, GrowsWhileWinsComeLateUpToItsCap) {
  std::uint32_t b = 1000;
  std::vector<std::uint32_t> seen;
  for (int i = 0; i < 10; ++i) {
    const d::adaptive_decision dec = d::adapt_budget(b, window(b, 60, b * 3 / 4, 4), kIdleCpu, kBounds);
    EXPECT_TRUE(dec.step == d::adaptive_step::grow || dec.budget_ns == kBounds.max_ns);
    b = dec.budget_ns;
    seen.push_back(b);
  }
  EXPECT_EQ(seen[0], 2000u);
  EXPECT_EQ(seen[1], 4000u);
  EXPECT_EQ(b, kBounds.max_ns) << "the budget never passes max_spin_ns";
}

TEST(AdaptiveController, ShrinksWhileSpinningFailsDownToItsFloor) {
  std::uint32_t b = 8000;
  for (int i = 0; i < 20; ++i) {
    const d::adaptive_decision dec = d::adapt_budget(b, window(b, 5, 100, 59), kIdleCpu, kBounds);
    EXPECT_LE(dec.budget_ns, b);
    b = dec.budget_ns;
  }
  EXPECT_EQ(d::adapt_budget(8000, window(8000, 5, 100, 59), kIdleCpu, kBounds).budget_ns, 4000u);
  EXPECT_EQ(b, kBounds.min_ns) << "the budget never drops below min_spin_ns";
}

TEST(AdaptiveController, TrimsToFourMeanWinsWhenWinsComeEarly) {
  // 40 wins of 300 ns, 24 losses: the budget of 8000 ns is cut to max(4 x 300, 8000 / 2).
  d::adaptive_decision dec = d::adapt_budget(8000, window(8000, 40, 300, 24), kIdleCpu, kBounds);
  EXPECT_EQ(dec.step, d::adaptive_step::trim);
  EXPECT_EQ(dec.budget_ns, 4000u);
  dec = d::adapt_budget(2000, window(2000, 40, 300, 24), kIdleCpu, kBounds);
  EXPECT_EQ(dec.budget_ns, 1200u);
  // Wins that come in the budget's first half but not all early enough to trim: held.
  dec = d::adapt_budget(1000, window(1000, 40, 400, 24), kIdleCpu, kBounds);
  EXPECT_EQ(dec.step, d::adaptive_step::hold);
  EXPECT_EQ(dec.budget_ns, 1000u);
}

TEST(AdaptiveController, NeverLetsTheSpinShareExceedTheCap) {
  // The window spun 64 x 5000 ns = 320 us of a 1 ms process CPU interval: 32% against a 10% cap.
  const d::adaptive_window w = window(5000, 32, 5000, 32);
  const d::adaptive_decision dec = d::adapt_budget(5000, w, 1'000'000, kBounds);
  EXPECT_EQ(dec.step, d::adaptive_step::cpu_capped);
  const double share = static_cast<double>(w.spin_ns) / 1e6;
  EXPECT_LE(dec.budget_ns * share / 5000, 0.10 + 1e-3) << "the next window's share, at the same rate";
  // A growth is cut to what the cap allows: 60 late wins of 750 ns under 1000 ns, 4 losses, is
  // 49 us of spinning; in 1 ms that is 4.9%, so doubling (9.8%) is allowed, in 0.6 ms (8.2%) not.
  const d::adaptive_window g = window(1000, 60, 750, 4);
  EXPECT_EQ(d::adapt_budget(1000, g, 1'000'000, kBounds).budget_ns, 2000u);
  const d::adaptive_decision capped = d::adapt_budget(1000, g, 600'000, kBounds);
  EXPECT_LT(capped.budget_ns, 2000u);
  EXPECT_GT(capped.budget_ns, 1000u);
  EXPECT_LE(capped.budget_ns * (static_cast<double>(g.spin_ns) / 600'000) / 1000, 0.10 + 1e-3);
  // spin_cpu_pct 100: no cap, so the late wins double it.
  const d::adaptive_decision free = d::adapt_budget(5000, w, 1'000'000, {200, 50'000, 100});
  EXPECT_EQ(free.step, d::adaptive_step::grow);
  EXPECT_EQ(free.budget_ns, 10'000u);
}

TEST(AdaptiveController, UnknownCpuTimeAndEmptyWindowsChangeNothingButTheClamp) {
  EXPECT_EQ(d::adapt_budget(3000, {}, kIdleCpu, kBounds).budget_ns, 3000u);
  EXPECT_EQ(d::adapt_budget(3000, {}, 0, kBounds).budget_ns, 3000u);
  EXPECT_EQ(d::adapt_budget(90'000, {}, 0, kBounds).budget_ns, kBounds.max_ns);
  EXPECT_EQ(d::adapt_budget(10, {}, 0, kBounds).budget_ns, kBounds.min_ns);
}

TEST(AdaptiveController, TheSameOutcomesGiveTheSameBudgets) {
  const auto run = [] {
    std::vector<std::uint32_t> out;
    std::uint32_t b = 8000;
    for (int i = 0; i < 30; ++i) {
      const std::uint32_t wins = static_cast<std::uint32_t>((i * 37) % 65);
      b = d::adapt_budget(b, window(b, wins, (i % 3 + 1) * b / 4, 64 - wins), 5'000'000, kBounds).budget_ns;
      out.push_back(b);
    }
    return out;
  };
  EXPECT_EQ(run(), run());
}

// --- the class state: outcomes folded per thread, a decision per window ----------------------

struct glue_tag {};
using glue = spinwise::adaptive_policy<glue_tag>;

TEST(AdaptivePolicy, DecidesOncePerWindowFromTheFoldedOutcomes) {
  ASSERT_TRUE(glue::set({100, 200, 50'000}).ok());  // no CPU cap: synthetic outcomes spend none
  glue::relearn();
  const std::uint64_t before = glue::decisions();
  const std::uint32_t b0 = glue::budget_ns();
  EXPECT_EQ(b0, d::kAdaptiveInitialNs);
  // Late wins: 63 ends are not a window yet, the 64th decides (a fold every 16).
  for (std::uint32_t i = 0; i < d::kAdaptiveWindow - 1; ++i)
    d::adaptive_record<glue_tag>(true, b0 * 3 / 4, b0);
  EXPECT_EQ(glue::decisions(), before);
  EXPECT_EQ(glue::budget_ns(), b0);
  d::adaptive_record<glue_tag>(true, b0 * 3 / 4, b0);
  EXPECT_EQ(glue::decisions(), before + 1);
  EXPECT_EQ(glue::budget_ns(), 2 * b0);
  // Then losses only: halves per window, down to min_spin_ns.
  for (int win = 0; win < 12; ++win) {
    const std::uint32_t b = glue::budget_ns();
    for (std::uint32_t i = 0; i < d::kAdaptiveWindow; ++i) d::adaptive_record<glue_tag>(false, b, b);
  }
  EXPECT_EQ(glue::budget_ns(), 200u);
  glue::reset();
  glue::relearn();
}

TEST(AdaptivePolicy, KnobsAreValidatedAllOrNothing) {
  EXPECT_FALSE(glue::set({0, 200, 50'000}).ok());
  EXPECT_FALSE(glue::set({101, 200, 50'000}).ok());
  EXPECT_FALSE(glue::set({10, 60'000, 50'000}).ok()) << "min above max";
  EXPECT_FALSE(glue::set("max_spin_ns", 2'000'000).ok());
  EXPECT_FALSE(glue::set("spin_loops", 3).ok()) << "adaptive has no spin_loops";
  EXPECT_EQ(glue::current().spin_cpu_pct, 10u);
  EXPECT_EQ(glue::current().max_spin_ns, 50'000u);
  ASSERT_TRUE(glue::set_spin_cpu_pct(25).ok());
  EXPECT_EQ(glue::spin_cpu_pct(), 25u);
  glue::reset();
  EXPECT_EQ(glue::spin_cpu_pct(), 10u);
}

// --- the waiter, on a counter of its own -----------------------------------------------------

// Each relax takes 10 ns of the test's counter (1 tick = 1 ns), so budgets are exact. What a
// relax says it costs (the cost the waiter converts its rounds with) is the test's to set.
struct clock_relax {
  static inline thread_local std::uint64_t now = 0;
  static inline thread_local double said_ns = 10.0;
  static void relax_n(std::uint32_t n) noexcept { now += 10ull * n; }
  static double relax_ns() noexcept { return said_ns; }
  static std::uint64_t counter() noexcept { return now; }
  static double counter_ticks_per_ns() noexcept { return 1.0; }
};

struct waiter_tag {};
using waiter_policy = spinwise::adaptive_policy<waiter_tag, clock_relax>;

// Rounds an adaptive wait of `budget_ns` takes at most when every round runs its course: each
// counts at least what it asked for, and round r asks at least c/2, c = min(64 ns x 2^r, 1 us).
std::uint32_t rounds_to_spend(std::uint32_t budget_ns) {
  std::uint64_t spent = 0;
  std::uint32_t rounds = 0;
  for (; spent < budget_ns; ++rounds)
    spent += std::min<std::uint64_t>(std::uint64_t{d::kAdaptiveFirstRoundNs} << std::min(rounds, 8u),
                                     d::kAdaptiveMaxRoundNs) /
             2;
  return rounds;
}

// Bug guarded: a budget that never runs out. A round was charged only what the counter measured,
// and a relax cost above ~2 us rounds every round (<= 1 us) to no relaxes, which measure 0 ns: the
// waiter never completed, whatever its budget. The relax says it costs 10 ns (right), 100 us (no
// relaxes at all: the rounds count what they asked for) or 0.05 ns (200x too many relaxes a
// round, cut at the first counter check: that round alone spends the budget).
TEST(AdaptivePolicy, AWaiterSpinsItsClassBudgetThenIsCompleted) {
  for (const double said_ns : {10.0, 100'000.0, 0.05}) {
    SCOPED_TRACE("a relax said to cost " + std::to_string(said_ns) + " ns, taking 10 ns");
    clock_relax::said_ns = said_ns;
    waiter_policy::relearn();
    spinwise::seed_spin_jitter(7);
    waiter_policy::waiter w;
    EXPECT_EQ(w.budget_ns(), d::kAdaptiveInitialNs);
    const std::uint64_t start = clock_relax::now;
    std::uint32_t rounds = 0;
    while (!w.is_completed() && rounds < 10'000) {
      w.snooze();
      ++rounds;
    }
    const double took = static_cast<double>(clock_relax::now - start);
    EXPECT_TRUE(w.is_completed());
    EXPECT_LE(rounds, rounds_to_spend(d::kAdaptiveInitialNs))
        << "each round counts at least what it asked for";
    EXPECT_GE(w.spent_ns(), d::kAdaptiveInitialNs);
    // The round that completes it overruns by at most its request and the chunk of relaxes that
    // crossed its deadline (a check interval at the stated cost: 200x longer at 0.05 ns).
    const double chunk = 10.0 * d::relaxes_in(d::backend::kDelayCheckNs, 1.0 / said_ns);
    EXPECT_LT(w.spent_ns(), d::kAdaptiveInitialNs + d::kAdaptiveMaxRoundNs + chunk);
    EXPECT_EQ(w.spun_ns(), w.spent_ns()) << "no round looked preempted";
    if (said_ns == 100'000.0) {
      EXPECT_EQ(w.relaxes(), 0u);
      EXPECT_GT(rounds, d::kAdaptiveInitialNs / d::kAdaptiveMaxRoundNs) << "rounds of at most 1 us each";
    } else {
      EXPECT_EQ(w.spent_ns(), took) << "the counter's measure";
    }
    if (said_ns == 10.0) {
      EXPECT_GT(rounds, 8u) << "rounds of at most 1 us each";
      EXPECT_EQ(w.relaxes() * 10, static_cast<std::uint64_t>(w.spent_ns()));
    }
  }
  clock_relax::said_ns = 10.0;
}

TEST(AdaptivePolicy, ARoundEndsOnceTheLockLooksFree) {
  waiter_policy::relearn();
  waiter_policy::waiter w;
  for (int i = 0; i < 6; ++i) w.snooze();  // the round ceiling is 1 us by now
  const std::uint64_t before = w.relaxes();
  int asked = 0;
  w.snooze([&] { return ++asked >= 1; });
  EXPECT_EQ(asked, 1);
  EXPECT_LE(w.relaxes() - before, d::backend::kDelayCheckNs / 10)
      << "one check interval of 10 ns relaxes, not the round (512..1024 ns)";
}

// --- locks under contention ------------------------------------------------------------------

// Every 16th critical section sleeps 20 us, so whichever threads run meanwhile wait for the lock:
// contended waits happen on a loaded machine too, where a thread may otherwise run all its
// iterations within one time slice.
template <class Lock>
void contend(int threads, int iters) {
  Lock m;
  std::uint64_t count = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < iters; ++i) {
        m.lock();
        const std::uint64_t c = count;
        if (i % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
        for (int k = 0; k < 20; ++k) spinwise::cpu_relax();
        count = c + 1;
        m.unlock();
      }
    });
  }
  for (std::thread& t : ts) t.join();
  EXPECT_EQ(count, static_cast<std::uint64_t>(threads) * iters);
}

struct hybrid_class {};
struct ttas_class {};
struct ticket_class {};

TEST(AdaptiveLocks, ExcludeAndLearnUnderContention) {
  using hybrid = spinwise::hybrid_mutex_t<spinwise::adaptive_policy<hybrid_class>>;
  using ttas = spinwise::ttas_mutex_t<spinwise::adaptive_policy<ttas_class>>;
  using ticket = spinwise::ticket_mutex_t<spinwise::adaptive_policy<ticket_class>>;
  const std::uint64_t h0 = hybrid::policy::decisions(), t0 = ttas::policy::decisions(),
                      k0 = ticket::policy::decisions();
  // Contended waits are not guaranteed on every run, so repeat until each class decided (bounded).
  // The ticket class learns from its queue heads' spins (a waiter that only yielded behind
  // others reports nothing).
  const auto undecided = [&] {
    return hybrid::policy::decisions() == h0 || ttas::policy::decisions() == t0 ||
           ticket::policy::decisions() == k0;
  };
  for (int attempt = 0; attempt < 50 && undecided(); ++attempt) {
    contend<hybrid>(4, 1'000);
    contend<ttas>(4, 1'000);
    contend<ticket>(4, 1'000);
  }
  EXPECT_GT(hybrid::policy::decisions(), h0)
      << "the hybrid class made no decision: its waits reported no ends";
  EXPECT_GT(ttas::policy::decisions(), t0) << "the ttas class made no decision";
  EXPECT_GT(ticket::policy::decisions(), k0) << "the ticket class made no decision";
  for (std::uint32_t b :
       {hybrid::policy::budget_ns(), ttas::policy::budget_ns(), ticket::policy::budget_ns()}) {
    EXPECT_GE(b, spinwise::adaptive_policy<>::min_spin_ns());
    EXPECT_LE(b, spinwise::adaptive_policy<>::max_spin_ns());
  }
}

// What one lock class's contended waits reported: how many, and their parks and yields.
struct waits_seen : spinwise::no_stats {
  static constexpr bool enabled = true;
  static inline std::atomic<std::uint64_t> contended{0}, parks{0}, yields{0};
  static void on_contended(const spinwise::wait_record& r, spinwise::lock_mode) noexcept {
    contended.fetch_add(1);
    parks.fetch_add(r.parks);
    yields.fetch_add(r.yields);
  }
  static void clear() {
    contended = 0;
    parks = 0;
    yields = 0;
  }
};

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// One contended wait: a new thread waits for `m` while this one holds it for `hold`. Returns the
// waiter's CPU time over its lock() (retried, a few times at most, until the wait was contended:
// a waiter that reached lock() only after the hold did not wait).
template <class Lock>
std::uint64_t wait_through_hold(Lock& m, std::chrono::milliseconds hold) {
  std::uint64_t cpu_ns = 0;
  for (int attempt = 0; attempt < 5 && waits_seen::contended.load() == 0; ++attempt) {
    m.lock();
    std::atomic<bool> waiting{false};
    std::thread t([&] {
      waiting.store(true);
      const std::uint64_t c0 = thread_cpu_ns();
      m.lock();
      cpu_ns = thread_cpu_ns() - c0;
      m.unlock();
    });
    while (!waiting.load()) std::this_thread::yield();
    std::this_thread::sleep_for(hold);
    m.unlock();
    t.join();
  }
  return cpu_ns;
}

// A relax table of 5 us per relax for every CPU while in scope: every adaptive round (<= 1 us) is
// then 0 relaxes, and measures 0 ns.
struct slow_relax_table {
  slow_relax_table() {
    installed = spinwise::install_relax_ns(spinwise::active_relax(), nullptr, 0, 5'000.0);
  }
  ~slow_relax_table() { spinwise::clear_relax_ns(); }
  bool installed;
};

// Bug guarded: hybrid_mutex_t<adaptive_policy<>> never parking when its rounds measure 0 (a relax
// cost of 5 us: reported as 293 ms of CPU in a 300 ms hold, against 0 ms for time_policy). Its
// waiter must spend its budget (8 us at first), yield once and park for the rest of the hold.
struct park_class {};
TEST(AdaptiveLocks, AHybridWaiterParksWhateverTheRelaxTableSays) {
  using P = spinwise::adaptive_policy<park_class>;
  const slow_relax_table table;
  ASSERT_TRUE(table.installed);
  P::relearn();
  waits_seen::clear();
  spinwise::hybrid_mutex_t<P, waits_seen> m;
  const auto hold = std::chrono::milliseconds(200);
  const std::uint64_t cpu_ns = wait_through_hold(m, hold);
  ASSERT_EQ(waits_seen::contended.load(), 1u) << "the waiter never waited for the lock";
  EXPECT_GE(waits_seen::parks.load(), 1u)
      << "the waiter spun through the hold instead of parking (" << cpu_ns / 1'000'000 << " ms of CPU)";
  // A CPU-time bound, in the direction only the bug takes: a parked waiter uses next to none.
  EXPECT_LT(cpu_ns, std::chrono::nanoseconds(hold).count() / 2);
  P::relearn();
}

// The same for a spin lock: its waiter must reach its yield phase (a yield per poll).
struct yield_class {};
TEST(AdaptiveLocks, ASpinWaiterYieldsWhateverTheRelaxTableSays) {
  using P = spinwise::adaptive_policy<yield_class>;
  const slow_relax_table table;
  ASSERT_TRUE(table.installed);
  P::relearn();
  waits_seen::clear();
  spinwise::ttas_mutex_t<P, waits_seen> m;
  wait_through_hold(m, std::chrono::milliseconds(50));
  ASSERT_EQ(waits_seen::contended.load(), 1u) << "the waiter never waited for the lock";
  EXPECT_GE(waits_seen::yields.load(), 1u) << "the waiter spun through the hold without yielding";
  P::relearn();
}

// --- first waits ------------------------------------------------------------------------------

// Bug guarded: a class's first wait waiting for another thread. A waiter finds its class's knob
// word and adaptive state in the process-wide lists on first use; that lookup sat in a
// function-local static's guard and took the lists' lock, so a thread stopped inside either held
// every first waiter of the class. Here the lists' lock is held (as by a stopped thread) while a
// thread waits, for the first time in the process, on a ttas_mutex and a hybrid_mutex of classes
// nobody has used: both waits must end once the locks are released, the lists' lock still held.
struct unseen_time_class {};
struct unseen_adaptive_class {};
TEST(FirstWait, ANewClassWaitsForNobodyInsideTheProcessWideLists) {
  using ttas = spinwise::ttas_mutex_t<spinwise::time_policy<unseen_time_class>>;
  using hybrid = spinwise::hybrid_mutex_t<spinwise::adaptive_policy<unseen_adaptive_class>>;
  ttas a;
  hybrid b;
  a.lock();
  b.lock();
  d::state_lock& lists = d::process().lists_lock;
  lists.lock();
  std::atomic<int> done{0};
  std::thread t([&] {
    a.lock();  // a contended wait: a's first waiter constructs a time_policy waiter
    a.unlock();
    done.fetch_add(1);
    b.lock();
    b.unlock();
    done.fetch_add(1);
  });
  // Bounded waits (this test must end on the old code too, to report).
  const auto within = [](auto pred) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // t is waiting for a
  a.unlock();
  within([&] { return done.load() >= 1; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // t is waiting for b
  b.unlock();
  const bool ended = within([&] { return done.load() == 2; });
  const int ended_count = done.load();
  lists.unlock();  // let a blocked thread go, so that the test ends either way
  t.join();
  EXPECT_TRUE(ended) << "the first waits ended " << ended_count << " of 2 while the lists' lock was held";
  // Once the lists are free the class has its own word: a knob set on it is read back.
  ASSERT_TRUE(ttas::policy::set_spin_loops(7).ok());
  EXPECT_EQ(ttas::policy::spin_loops(), 7u);
  ttas::policy::reset();
}

}  // namespace
