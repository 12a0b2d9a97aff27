// Every wait policy ends its spinning within its budget, whatever the relax table and the counter
// say, with its knobs anywhere in their ranges. Bug guarded: adaptive_policy's waiter charged a
// round only what it measured, and a round measures 0 when the relax table rounds it to no
// relaxes (a relax cost above ~2 us: profiles accept up to 100 us) or when the counter stands
// still; its budget then never ran out, and hybrid_mutex_t<adaptive_policy<>> burned a whole CPU
// for as long as the lock was held instead of parking (tests/locks/adaptive_test.cpp has that at
// lock level).
//
// Each policy's waiter is driven on a Relax with a counter of its own (1 tick = 1 ns, each relax
// really 10 ns, and a counter the test can stop) and no relax_ns() of its own, so the installed
// relax table converts the policies' nanoseconds as it does for cpu_relaxer. Counted in snoozes
// and relaxes, never timed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "spinwise/adaptive_policy.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/innodb_policy.hpp"
#include "spinwise/no_backoff_policy.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/time_policy.hpp"

namespace {

namespace d = spinwise::detail;

thread_local std::uint64_t t_now = 1'000'000;  // the counter, in ns
thread_local bool t_stopped = false;
thread_local std::uint64_t t_issued = 0;

struct table_relax {
  static void relax_n(std::uint32_t n) noexcept {
    t_issued += n;
    if (!t_stopped) t_now += 10ull * n;
  }
  static std::uint64_t counter() noexcept { return t_now; }
  static double counter_ticks_per_ns() noexcept { return 1.0; }
};

// An installed relax table of `ns` per relax, for every CPU, while in scope.
struct relax_table {
  explicit relax_table(double ns) {
    installed = spinwise::install_relax_ns(spinwise::active_relax(), nullptr, 0, ns);
  }
  ~relax_table() { spinwise::clear_relax_ns(); }
  bool installed;
};

// Relaxes one clock-bounded delay of `ns` issues at most with the table at `table_ns`: the
// delay's cap (kDelayRelaxCap x its converted count), plus the chunk that crossed it.
std::uint64_t delay_relaxes_cap(double ns, double table_ns) {
  const std::uint64_t planned = d::relaxes_in(ns, 1.0 / table_ns);
  if (planned == 0) return 0;
  const std::uint64_t per_check =
      std::max<std::uint32_t>(1, d::relaxes_in(d::backend::kDelayCheckNs, 1.0 / table_ns));
  return planned * d::kDelayRelaxCap + per_check;
}

// A case: a policy on table_relax under a Tag of its own, knob settings at each end of their
// ranges, and the most snoozes and the most relaxes per snooze its budget allows. A round-based
// policy's rounds number spin_loops whatever a round does, and a round's length does not depend on
// the rounds' number, so the longest rounds are tried with 30 of them and the most rounds
// (kMaxSpinLoops) with the shortest delays: a million rounds of 10 ms would take hours, not prove more.
template <class Settings>
struct named {
  const char* name;
  Settings s;
};

struct innodb_case {
  using policy = spinwise::innodb_policy<innodb_case, table_relax>;
  static constexpr named<spinwise::innodb_settings> kKnobs[] = {
      {"defaults", {}},
      {"longest rounds", {1000, 100, 30}},
      {"most rounds", {0, 1, spinwise::kMaxSpinLoops}},
      {"no spin", {1000, 100, 0}},
  };
  static bool apply(const spinwise::innodb_settings& s) { return policy::set(s).ok(); }
  static std::uint64_t max_snoozes(const policy::waiter&, bool) { return policy::spin_loops(); }
  static std::uint64_t max_round_relaxes(double) {  // an instruction count: the table plays no part
    const auto s = policy::current();
    return s.spin_wait_delay == 0 ? 0 : std::uint64_t{s.spin_wait_delay - 1} * s.pause_multiplier;
  }
};

struct time_case {
  using policy = spinwise::time_policy<time_case, table_relax>;
  static constexpr named<spinwise::time_settings> kKnobs[] = {
      {"defaults", {}},
      {"longest rounds", {1000, 10'000, 30}},
      {"most rounds", {0, 1, spinwise::kMaxSpinLoops}},
      {"no spin", {1000, 10'000, 0}},
  };
  static bool apply(const spinwise::time_settings& s) { return policy::set(s).ok(); }
  static std::uint64_t max_snoozes(const policy::waiter&, bool) { return policy::spin_loops(); }
  static std::uint64_t max_round_relaxes(double table_ns) {
    const auto s = policy::current();
    if (s.spin_wait_delay == 0) return 0;
    return delay_relaxes_cap(static_cast<double>(s.spin_wait_delay - 1) * s.delay_unit_ns, table_ns);
  }
};

struct exp_backoff_case {
  using policy = spinwise::exp_backoff_policy<exp_backoff_case, table_relax>;
  static constexpr named<spinwise::exp_backoff_settings> kKnobs[] = {
      {"defaults", {}},
      {"longest rounds", {1'000'000, 1'000'000, 30}},
      {"most rounds", {1, 1, spinwise::kMaxSpinLoops}},
      {"no spin", {1'000'000, 1'000'000, 0}},
  };
  static bool apply(const spinwise::exp_backoff_settings& s) { return policy::set(s).ok(); }
  static std::uint64_t max_snoozes(const policy::waiter&, bool) { return policy::spin_loops(); }
  static std::uint64_t max_round_relaxes(double table_ns) {
    return delay_relaxes_cap(policy::max_delay_ns(), table_ns);
  }
};

struct no_backoff_case {
  using policy = spinwise::no_backoff_policy<no_backoff_case, table_relax>;
  static constexpr named<spinwise::no_backoff_settings> kKnobs[] = {
      {"defaults", {}},
      {"most rounds", {spinwise::kMaxSpinLoops}},
      {"no spin", {0}},
  };
  static bool apply(const spinwise::no_backoff_settings& s) { return policy::set(s).ok(); }
  static std::uint64_t max_snoozes(const policy::waiter&, bool) { return policy::spin_loops(); }
  static std::uint64_t max_round_relaxes(double) { return 1; }
};

// adaptive_policy's knobs bound a budget the class learns: each setting is applied, then one
// window of losses makes the class decide (halve the budget, clamped into [min_spin_ns,
// max_spin_ns]). A budget of 0, which min_spin_ns 0 lets a CPU-capped class reach, is stored.
struct adaptive_case {
  using policy = spinwise::adaptive_policy<adaptive_case, table_relax>;
  static constexpr std::uint32_t kStoreZero = 0;  // spin_cpu_pct 0 (out of range) marks "no spin"
  static constexpr named<spinwise::adaptive_settings> kKnobs[] = {
      {"defaults", {}},
      {"largest budget", {100, 1'000'000, 1'000'000}},
      {"smallest budget", {100, 0, 1}},
      {"no spin", {kStoreZero, 0, 1}},
  };
  static bool apply(spinwise::adaptive_settings s) {
    policy::relearn();  // also forgets the last decision's CPU time: the next one is not capped
    const bool zero = s.spin_cpu_pct == kStoreZero;
    if (zero) s.spin_cpu_pct = 100;
    if (!policy::set(s).ok()) return false;
    if (zero) {
      d::adaptive_state<adaptive_case>().budget_ns.store(0);
      return true;
    }
    const std::uint32_t b = policy::budget_ns();
    for (std::uint32_t i = 0; i < d::kAdaptiveWindow; ++i) d::adaptive_record<adaptive_case>(false, b, b);
    return policy::budget_ns() == std::clamp(b / 2, s.min_spin_ns, s.max_spin_ns);
  }
  // Every round that runs its course counts at least what it asked for, and round r asks at
  // least c/2, c = min(64 ns x 2^r, 1 us): the budget is spent within these many rounds. A round
  // that until() ended counts what it measured, and then only the round cap bounds them.
  static std::uint64_t max_snoozes(const policy::waiter& w, bool looks_free) {
    if (looks_free) return w.max_rounds();
    std::uint64_t spent = 0, rounds = 0;
    while (spent < w.budget_ns()) {
      spent += std::min<std::uint64_t>(
                   std::uint64_t{d::kAdaptiveFirstRoundNs} << std::min<std::uint64_t>(rounds, 8),
                   d::kAdaptiveMaxRoundNs) /
               2;
      ++rounds;
    }
    return rounds;
  }
  static std::uint64_t max_round_relaxes(double table_ns) {
    return delay_relaxes_cap(d::kAdaptiveMaxRoundNs, table_ns);
  }
};

template <class C>
class BoundedSpin : public ::testing::Test {};
using cases = ::testing::Types<innodb_case, time_case, exp_backoff_case, no_backoff_case, adaptive_case>;
TYPED_TEST_SUITE(BoundedSpin, cases);

// Relax tables: 100 us (the most a profile or install_relax_ns accepts: a round of up to ~50 us
// is 0 relaxes), 0.05 ns (the least quick_relax_ns returns: every delay 200x too many relaxes,
// cut by the counter or by kDelayRelaxCap), and 10 ns (right). Counters: running and stopped.
// The lock word: never free, or looking free at every poll (another thread takes it each time,
// so the wait goes on).
TYPED_TEST(BoundedSpin, EveryWaitEndsWithinItsBudget) {
  using C = TypeParam;
  using P = typename C::policy;
  for (const auto& k : C::kKnobs) {
    ASSERT_TRUE(C::apply(k.s)) << k.name;
    for (const double table_ns : {100'000.0, 0.05, 10.0}) {
      const relax_table table(table_ns);
      ASSERT_TRUE(table.installed);
      const std::uint64_t round_cap = C::max_round_relaxes(table_ns);
      for (const bool stopped : {false, true}) {
        for (const bool looks_free : {false, true}) {
          SCOPED_TRACE(std::string(k.name) + ", relax table " + std::to_string(table_ns) + " ns, counter " +
                       (stopped ? "stopped" : "running") + ", lock word " +
                       (looks_free ? "looks free" : "busy"));
          t_stopped = stopped;
          spinwise::seed_spin_jitter(11);
          const auto free = d::poll_eagerly([looks_free] { return looks_free; });
          typename P::waiter w;
          const std::uint64_t bound = C::max_snoozes(w, looks_free);
          std::uint64_t snoozes = 0, longest = 0;
          while (!w.is_completed() && snoozes <= bound) {
            const std::uint64_t before = t_issued;
            w.snooze(free);
            longest = std::max(longest, t_issued - before);
            ++snoozes;
          }
          EXPECT_TRUE(w.is_completed()) << "still spinning after " << snoozes << " snoozes";
          EXPECT_LE(snoozes, bound);
          EXPECT_LE(longest, round_cap) << "a round issued more relaxes than its delay's cap";
        }
      }
    }
  }
  t_stopped = false;
  P::reset();
}

// The round cap, alone: an adaptive wait whose every round until() ends after its first poll, on
// a counter that stands still, is charged only that poll's relaxes at the table's cost (25 ns on
// x86-64, where kDelayPollNs is 25 ns: less than the shortest round, so there the cap binds).
// Still it ends within budget / 32 ns rounds.
TEST(BoundedSpinAdaptive, RoundsThatMeasureAlmostNothingStillEnd) {
  using P = adaptive_case::policy;
  ASSERT_TRUE(adaptive_case::apply({100, 50'000, 50'000}));
  const relax_table table(0.05);
  ASSERT_TRUE(table.installed);
  t_stopped = true;
  P::waiter w;
  EXPECT_EQ(w.budget_ns(), 50'000u);
  EXPECT_EQ(w.max_rounds(), 1563u) << "50 us in rounds of 32 ns, rounded up";
  const auto free = d::poll_eagerly([] { return true; });
  std::uint32_t snoozes = 0;
  while (!w.is_completed() && snoozes <= w.max_rounds()) {
    w.snooze(free);
    ++snoozes;
  }
  t_stopped = false;
  EXPECT_TRUE(w.is_completed());
  EXPECT_LE(snoozes, w.max_rounds());
  EXPECT_GT(w.spent_ns(), 0.0);
  P::reset();
  P::relearn();
}

}  // namespace
