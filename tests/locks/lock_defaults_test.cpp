// The public lock aliases: which wait policy each defaults to (every lock that waits in delay
// units waits in time; innodb_policy is the replay, selected by name), and `with_stats<Class>`,
// which turns statistics on without losing the alias's policy, Tag and knobs.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <thread>
#include <type_traits>

#include "spinwise/spinwise.hpp"

namespace sw = spinwise;

namespace {

struct defaults_class {
  static constexpr std::string_view name = "test.lock_defaults.with_stats";
};

// ---- default policies ----------------------------------------------------------------------

// Bug guarded: hybrid_shared_mutex and sx_lock defaulted to innodb_policy, a spin
// budget counted in relax instructions (14x longer on Skylake than on the CPUs it was tuned on),
// while the other locks waited in time. A lock that waits in delay units must default to a
// policy whose delays are given in ns: time_policy (InnoDB's shape) or exp_backoff_policy.
constexpr bool time_based(std::string_view policy) { return policy == "time" || policy == "exp_backoff"; }

static_assert(sw::hybrid_mutex::policy::name() == "time");
static_assert(sw::ttas_mutex::policy::name() == "time");
static_assert(sw::spin_shared_mutex::policy::name() == "time");
static_assert(sw::rw_spinlock::policy::name() == "time");
static_assert(sw::hybrid_shared_mutex::policy::name() == "time");
static_assert(sw::sx_lock::policy::name() == "time");
static_assert(sw::tas_mutex::policy::name() == "exp_backoff");  // backoff for RMW retries, in ns
static_assert(time_based(sw::hybrid_mutex::policy::name()) && time_based(sw::ttas_mutex::policy::name()) &&
              time_based(sw::tas_mutex::policy::name()) &&
              time_based(sw::spin_shared_mutex::policy::name()) &&
              time_based(sw::hybrid_shared_mutex::policy::name()) && time_based(sw::sx_lock::policy::name()));
// The FIFO locks wait in no delay unit at all: one relax per poll (no_backoff_policy.hpp says why).
static_assert(sw::ticket_mutex::policy::name() == "no_backoff");
static_assert(sw::mcs_mutex::policy::name() == "no_backoff");

// Each alias keeps its own Tag (its own knobs), whatever the policy.
static_assert(std::is_same_v<sw::sx_lock::policy, sw::time_policy<sw::sx_lock_tag>>);
static_assert(std::is_same_v<sw::hybrid_shared_mutex::policy, sw::time_policy<sw::hybrid_shared_mutex_tag>>);
static_assert(std::is_same_v<sw::sx_lock::policy::tag, sw::sx_lock_tag>);
static_assert(std::is_same_v<sw::hybrid_shared_mutex::policy::tag, sw::hybrid_shared_mutex_tag>);

// The exact MySQL replay stays one name away, under the same Tag.
using sx_innodb = sw::sx_lock_t<sw::innodb_policy<sw::sx_lock_tag>>;
using hsm_innodb = sw::hybrid_shared_mutex_t<sw::innodb_policy<sw::hybrid_shared_mutex_tag>>;
static_assert(sx_innodb::policy::name() == "innodb");
static_assert(hsm_innodb::policy::name() == "innodb");
static_assert(sizeof(sx_innodb) == sizeof(sw::sx_lock));
static_assert(sizeof(hsm_innodb) == sizeof(sw::hybrid_shared_mutex));

// ---- with_stats ----------------------------------------------------------------------------

// Bug guarded: turning statistics on meant spelling the lock out as
// sx_lock_t<innodb_policy<>, class_stats<C>>, which silently dropped the alias's Tag and so every
// knob set through sx_lock::policy. with_stats<C> keeps the policy (and with it Tag and knobs)
// and changes only the statistics.
template <template <class, class> class Template, class Lock>
constexpr bool keeps_policy() {
  using S = typename Lock::template with_stats<defaults_class>;
  return std::is_same_v<typename S::policy, typename Lock::policy> &&
         std::is_same_v<typename S::stats, sw::class_stats<defaults_class>> &&
         std::is_same_v<S, Template<typename Lock::policy, sw::class_stats<defaults_class>>> &&
         std::is_same_v<typename Lock::stats, sw::no_stats> && sizeof(S) == sizeof(Lock);
}
static_assert(keeps_policy<sw::hybrid_mutex_t, sw::hybrid_mutex>());
static_assert(keeps_policy<sw::ttas_mutex_t, sw::ttas_mutex>());
static_assert(keeps_policy<sw::tas_mutex_t, sw::tas_mutex>());
static_assert(keeps_policy<sw::ticket_mutex_t, sw::ticket_mutex>());
static_assert(keeps_policy<sw::mcs_mutex_t, sw::mcs_mutex>());
static_assert(keeps_policy<sw::spin_shared_mutex_t, sw::spin_shared_mutex>());
static_assert(keeps_policy<sw::spin_shared_mutex_t, sw::rw_spinlock>());
static_assert(keeps_policy<sw::hybrid_shared_mutex_t, sw::hybrid_shared_mutex>());
static_assert(keeps_policy<sw::sx_lock_t, sw::sx_lock>());

// with_stats of a lock that already records: the new class replaces the old one.
static_assert(std::is_same_v<sw::sx_lock::with_stats<struct other_class>::with_stats<defaults_class>,
                             sw::sx_lock::with_stats<defaults_class>>);

using sx_counted = sw::sx_lock::with_stats<defaults_class>;

// A Relax that says when a waiter delayed (it reached its slow path and spins).
struct flag_relax {
  static inline std::atomic<bool> snoozed{false};
  static void relax_n(std::uint32_t n) noexcept {
    snoozed.store(true, std::memory_order_release);
    sw::cpu_relax_n(n);
  }
};
struct flagged_tag;
using flagged = sw::sx_lock_t<sw::time_policy<flagged_tag, flag_relax>>;
using flagged_counted = flagged::with_stats<defaults_class>;

struct counts {
  std::uint64_t acquisitions = 0, contended = 0, rounds = 0;
};

// Class defaults_class's counters so far.
counts counts_so_far() {
  counts c;
  sw::for_each_stats_class([&](std::string_view name, const sw::lock_stats_totals& t) {
    if (name == defaults_class::name) c = {t.acquisitions, t.contended, t.rounds};
  });
  return c;
}

}  // namespace

// A knob set through the alias's policy is the with_stats lock's knob, at run time too: both
// read the same Tag's knob word. Bug guarded: with_stats defined over another Tag (time_policy<>,
// or a Tag of its own), which compiles and silently ignores sx_lock::policy's settings.
TEST(LockWithStats, AliasKnobsReachTheWithStatsLock) {
  ASSERT_TRUE(sw::sx_lock::policy::set_spin_wait_delay(17).ok());
  ASSERT_TRUE(sw::sx_lock::policy::set_spin_loops(3).ok());
  EXPECT_EQ(sx_counted::policy::spin_wait_delay(), 17u);
  EXPECT_EQ(sx_counted::policy::spin_loops(), 3u);
  EXPECT_EQ(sw::time_policy<>::spin_wait_delay(), 6u)
      << "the Tag's override leaked to the process-wide knobs";

  // And the other way round: what the with_stats lock's policy sets, the alias sees.
  ASSERT_TRUE(sw::hybrid_shared_mutex::with_stats<defaults_class>::policy::set_delay_unit_ns(150).ok());
  EXPECT_EQ(sw::hybrid_shared_mutex::policy::delay_unit_ns(), 150u);

  // The waiter a with_stats latch builds reads the Tag's budget: 3 rounds, then done.
  sx_counted::policy::waiter w;
  int rounds = 0;
  while (!w.is_completed() && rounds < 100) {
    w.snooze();
    ++rounds;
  }
  EXPECT_EQ(rounds, 3);

  sw::sx_lock::policy::reset();
  sw::hybrid_shared_mutex::policy::reset();
  EXPECT_EQ(sx_counted::policy::spin_wait_delay(), 6u);
}

// The with_stats latch is a working latch that records into its class: one contended S request
// (X held until the reader spun) and the two acquisitions. Bug guarded: with_stats naming a lock
// without statistics, or one recording into another class.
TEST(LockWithStats, RecordsIntoItsClass) {
  ASSERT_TRUE(flagged::policy::set_spin_loops(sw::kMaxSpinLoops).ok());  // spins until released
  flagged_counted l;
  const counts before = counts_so_far();
  l.lock();
  flag_relax::snoozed = false;
  std::thread reader([&] { std::shared_lock<flagged_counted> s(l); });
  while (!flag_relax::snoozed.load(std::memory_order_acquire)) std::this_thread::yield();
  l.unlock();
  reader.join();
  const counts after = counts_so_far();
  EXPECT_EQ(after.acquisitions - before.acquisitions, 2u);
  EXPECT_EQ(after.contended - before.contended, 1u);
  EXPECT_GT(after.rounds - before.rounds, 0u);
  flagged::policy::reset();
}

// The replay by name still works as a latch, under the alias's Tag.
TEST(LockDefaults, InnodbReplayIsSelectableByName) {
  ASSERT_TRUE(sx_innodb::policy::set_pause_multiplier(5).ok());
  EXPECT_EQ(sw::innodb_policy<sw::sx_lock_tag>::pause_multiplier(), 5u);
  EXPECT_EQ(sw::innodb_policy<>::pause_multiplier(), 50u) << "a Tag's knob leaked to the process-wide one";
  sx_innodb l;
  { std::lock_guard<sx_innodb> g(l); }
  { std::shared_lock<sx_innodb> g(l); }
  hsm_innodb h;
  { std::lock_guard<hsm_innodb> g(h); }
  sx_innodb::policy::reset();
  EXPECT_EQ(sx_innodb::policy::pause_multiplier(), 50u);
}
