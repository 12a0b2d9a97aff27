// Every timed member of the hybrid locks at the edges of its argument: zero, negative, below
// -292 years (where a nanosecond count overflows), duration::min() and max() of several
// representations, time points in the past, at time_point::min() and max(), a thousand years
// away in a coarse representation, on steady_clock, system_clock and a clock whose now() is
// negative. On a free lock each call must succeed at once (as try_lock does); on a held lock an
// expired one must fail without waiting, and a far one must wait for the release.
//
// The calls under test run each in a thread of its own, all at once, so a call that waits for
// centuries (the bug some of these guard against) costs one bound, kBound, not one per edge, and
// fails the test instead of hanging it: once the bound has passed the holder releases, and the
// call that should have failed returns true. A watchdog ends the binary if even that is lost.
//
// Also here: an expired writer deadline on hybrid_shared_mutex is a try_lock (it reserves
// nothing, so readers are never turned away), and a woken timed waiter that gives up leaves no
// sleeper stranded on a free lock (the wake-up it consumed was the others' too).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "shared_test_util.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/wait_policy.hpp"

namespace {

namespace sw = spinwise;
using namespace std::chrono;  // the edges below read as the expressions they are
using spinwise_test::eventually;
using spinwise_test::in_other_thread;
using spinwise_test::kBound;
using spinwise_test::scaled;
using spinwise_test::this_tid;
using spinwise_test::thread_state;

// --- the locks ----------------------------------------------------------------------------

struct edge_tag;      // knobs of this file's own: other tests' settings do not reach here,
struct park_now_tag;  // nor ours theirs
using park_now_time = sw::time_policy<park_now_tag>;
using park_now_innodb = sw::innodb_policy<park_now_tag>;
// spin_loops = 0: every wait parks at once, so the futex paths run on every call.
const bool kParkNowSet = park_now_time::set_spin_loops(0).ok() && park_now_innodb::set_spin_loops(0).ok();

struct edge_mutex_class {
  static constexpr std::string_view name = "test.timed_edge.hybrid_mutex";
};
struct edge_shared_class {
  static constexpr std::string_view name = "test.timed_edge.hybrid_shared_mutex";
};

using hm_innodb = sw::hybrid_mutex_t<sw::innodb_policy<edge_tag>>;
using hm_park_stats = sw::hybrid_mutex_t<park_now_time, sw::class_stats<edge_mutex_class>>;
using hsm_time = sw::hybrid_shared_mutex_t<sw::time_policy<edge_tag>>;
using hsm_park_stats = sw::hybrid_shared_mutex_t<park_now_innodb, sw::class_stats<edge_shared_class>>;

// Each lock on its default policy and parking at once with statistics; with
// SPINWISE_TEST_POLICY_VARIANTS (tests/locks/CMakeLists.txt) on another policy too.
using AllTimedLocks = ::testing::Types<
#if SPINWISE_TEST_POLICY_VARIANTS
    hm_innodb, hsm_time,
#endif
    sw::hybrid_mutex, hm_park_stats, sw::hybrid_shared_mutex, hsm_park_stats>;
using SharedTimedLocks = ::testing::Types<
#if SPINWISE_TEST_POLICY_VARIANTS
    hsm_time,
#endif
    sw::hybrid_shared_mutex, hsm_park_stats>;

template <class L>
class TimedEdge : public ::testing::Test {};
TYPED_TEST_SUITE(TimedEdge, AllTimedLocks);
template <class L>
class SharedTimedEdge : public ::testing::Test {};
TYPED_TEST_SUITE(SharedTimedEdge, SharedTimedLocks);

template <class L>
constexpr bool kIsShared = spinwise_test::is_shared_timed_lockable<L>::value;

template <class L>
void release(L& l, bool shared) {
  if constexpr (kIsShared<L>) {
    if (shared) {
      l.unlock_shared();
      return;
    }
  }
  l.unlock();
}

// --- the clocks ---------------------------------------------------------------------------

using spinwise_test::negative_clock;  // now() below zero: max() - now() overflows its rep
constexpr hours years(int n) { return hours(24 * 365 * n); }
// now() in seconds: a thousand years from it fit the representation, but not nanoseconds.
time_point<system_clock, seconds> sys_seconds_now() { return time_point_cast<seconds>(system_clock::now()); }

// --- the edges ----------------------------------------------------------------------------

template <class L>
struct edge {
  const char* name;  // the call, as written
  bool (*call)(L&);
  bool shared = false;  // a shared acquisition (released with unlock_shared)
};

// clang-format off
#define SW_EDGE(FN, ...) \
  edge<L> { #FN "(" #__VA_ARGS__ ")", [](L& l) -> bool { return l.FN(__VA_ARGS__); } }
// clang-format on

// Deadlines that have passed: each call is a try_lock.
#define SW_EXPIRED_EDGES(FOR, UNTIL)                                                                       \
  SW_EDGE(FOR, nanoseconds(0)), SW_EDGE(FOR, seconds(0)), SW_EDGE(FOR, duration<double>(0.0)),             \
      SW_EDGE(FOR, nanoseconds(-1)), SW_EDGE(FOR, hours(-1)), SW_EDGE(FOR, hours(-3'000'000)),             \
      SW_EDGE(FOR, nanoseconds::min()), SW_EDGE(FOR, microseconds::min()), SW_EDGE(FOR, seconds::min()),   \
      SW_EDGE(FOR, hours::min()), SW_EDGE(FOR, duration<std::int32_t, std::milli>::min()),                 \
      SW_EDGE(FOR, duration<double>(-1.0)), SW_EDGE(FOR, duration<double>(-1e300)),                        \
      SW_EDGE(FOR, duration<double>::min()), SW_EDGE(FOR, duration<float>::min()),                         \
      SW_EDGE(FOR, duration<long double>::min()), SW_EDGE(FOR, duration<double, std::ratio<3600>>(-1e15)), \
      SW_EDGE(UNTIL, steady_clock::now()), SW_EDGE(UNTIL, steady_clock::now() - seconds(1)),               \
      SW_EDGE(UNTIL, steady_clock::time_point::min()),                                                     \
      SW_EDGE(UNTIL, time_point<steady_clock, seconds>::min()),                                            \
      SW_EDGE(UNTIL, time_point<steady_clock, hours>(hours(-3'000'000))),                                  \
      SW_EDGE(UNTIL, time_point<steady_clock, duration<double>>::min()),                                   \
      SW_EDGE(UNTIL, system_clock::now() - seconds(1)), SW_EDGE(UNTIL, system_clock::time_point::min()),   \
      SW_EDGE(UNTIL, sys_seconds_now() - years(1000)),                                                     \
      SW_EDGE(UNTIL, time_point_cast<duration<double>>(system_clock::now()) - duration<double>(1.0)),      \
      SW_EDGE(UNTIL, negative_clock::now() - seconds(1)), SW_EDGE(UNTIL, negative_clock::time_point::min())

// Deadlines centuries away, or none at all: each call waits for the release.
#define SW_FAR_EDGES(FOR, UNTIL)                                                                        \
  SW_EDGE(FOR, nanoseconds::max()), SW_EDGE(FOR, seconds::max()), SW_EDGE(FOR, hours::max()),           \
      SW_EDGE(FOR, hours(3'000'000)), SW_EDGE(FOR, years(1000)), SW_EDGE(FOR, duration<double>::max()), \
      SW_EDGE(FOR, duration<double>(1e300)), SW_EDGE(FOR, duration<float>::max()),                      \
      SW_EDGE(FOR, duration<long double>::max()), SW_EDGE(UNTIL, steady_clock::time_point::max()),      \
      SW_EDGE(UNTIL, steady_clock::now() + hours(1)),                                                   \
      SW_EDGE(UNTIL, time_point<steady_clock, seconds>::max()),                                         \
      SW_EDGE(UNTIL, time_point<steady_clock, duration<double>>::max()),                                \
      SW_EDGE(UNTIL, system_clock::time_point::max()), SW_EDGE(UNTIL, sys_seconds_now() + years(1000)), \
      SW_EDGE(UNTIL, time_point<system_clock, hours>::max()),                                           \
      SW_EDGE(UNTIL, negative_clock::time_point::max()), SW_EDGE(UNTIL, negative_clock::now() + years(1000))

template <class L>
std::vector<edge<L>> shared_calls(std::vector<edge<L>> v) {
  for (auto& e : v) e.shared = true;
  return v;
}

template <class L, bool Shared>
std::vector<edge<L>> expired_edges() {
  if constexpr (Shared) {
    return shared_calls<L>({SW_EXPIRED_EDGES(try_lock_shared_for, try_lock_shared_until)});
  } else {
    return {SW_EXPIRED_EDGES(try_lock_for, try_lock_until)};
  }
}

template <class L, bool Shared>
std::vector<edge<L>> far_edges() {
  if constexpr (Shared) {
    return shared_calls<L>({SW_FAR_EDGES(try_lock_shared_for, try_lock_shared_until)});
  } else {
    return {SW_FAR_EDGES(try_lock_for, try_lock_until)};
  }
}

template <class L>
std::vector<edge<L>> concat(std::vector<edge<L>> a, const std::vector<edge<L>>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The exclusive calls, and the shared ones where L has them.
template <class L>
std::vector<edge<L>> all_expired_edges() {
  if constexpr (kIsShared<L>) {
    return concat(expired_edges<L, false>(), expired_edges<L, true>());
  } else {
    return expired_edges<L, false>();
  }
}
template <class L>
std::vector<edge<L>> all_far_edges() {
  if constexpr (kIsShared<L>) {
    return concat(far_edges<L, false>(), far_edges<L, true>());
  } else {
    return far_edges<L, false>();
  }
}

#undef SW_FAR_EDGES
#undef SW_EXPIRED_EDGES
#undef SW_EDGE

// --- running them -------------------------------------------------------------------------

// Each edge called in a thread of its own, all at once; a call that acquires releases at once.
template <class L>
class probe_set {
 public:
  enum : int { kPending, kAcquired, kFailed };

  explicit probe_set(L& l, std::vector<edge<L>> edges)
      : edges_(std::move(edges)), state_(new std::atomic<int>[edges_.size()]) {
    for (std::size_t i = 0; i < edges_.size(); ++i) state_[i] = kPending;
    for (std::size_t i = 0; i < edges_.size(); ++i) {
      threads_.emplace_back([this, &l, i] {
        started_.fetch_add(1);
        const bool got = edges_[i].call(l);
        if (got) release(l, edges_[i].shared);
        state_[i].store(got ? kAcquired : kFailed);
        finished_.fetch_add(1);
      });
    }
  }
  probe_set(const probe_set&) = delete;
  probe_set& operator=(const probe_set&) = delete;
  // The caller has made sure every call can return (released the lock); the watchdog covers a
  // call that still does not.
  ~probe_set() {
    for (auto& t : threads_) t.join();
  }

  std::size_t size() const { return edges_.size(); }
  bool all_started(milliseconds bound = kBound) const {
    return eventually([&] { return started_.load() == static_cast<int>(size()); }, bound);
  }
  bool all_finished(milliseconds bound = kBound) const {
    return eventually([&] { return finished_.load() == static_cast<int>(size()); }, bound);
  }
  int state(std::size_t i) const { return state_[i].load(); }
  const char* name(std::size_t i) const { return edges_[i].name; }

 private:
  std::vector<edge<L>> edges_;
  std::unique_ptr<std::atomic<int>[]> state_;
  std::atomic<int> started_{0};
  std::atomic<int> finished_{0};
  std::vector<std::thread> threads_;
};

const char* held_name(bool shared) { return shared ? "held shared" : "held exclusively"; }

// For a thread that will never return: a gtest cannot join it, so the binary ends here.
[[noreturn]] void die(const char* why) {
  std::fprintf(stderr, "FATAL: %s\n", why);
  std::fflush(stderr);
  std::_Exit(4);
}

// `l` is held by the caller (`held_shared` says how). Every edge must fail, each within kBound
// (not a timing assertion: a call whose deadline has passed must not wait at all, and one that
// is still waiting after 20 s waits for its wrong deadline, centuries away). Then `release`.
template <class L>
void expect_all_fail_while_held(L& l, std::vector<edge<L>> edges, bool held_shared,
                                const std::function<void()>& release_holder) {
  probe_set<L> p(l, std::move(edges));
  p.all_finished();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int s = p.state(i);
    if (s == probe_set<L>::kPending) {
      ADD_FAILURE() << p.name(i) << " on a lock " << held_name(held_shared) << ": still waiting after "
                    << kBound.count()
                    << " s although its deadline had passed (it waits for a deadline far away)";
    } else {
      EXPECT_EQ(s, probe_set<L>::kFailed) << p.name(i) << " acquired a lock " << held_name(held_shared);
    }
  }
  release_holder();  // a call still waiting acquires now and returns: the test goes on
  if (!p.all_finished()) die("a timed call still waits after the release; it cannot be joined");
}

// `l` is held by the caller. No edge may return before `release` (a far deadline is not one
// that passed, and the lock is not free); after it, each must acquire.
template <class L>
void expect_all_wait_for_release(L& l, std::vector<edge<L>> edges, bool held_shared,
                                 const std::function<void()>& release_holder) {
  probe_set<L> p(l, std::move(edges));
  EXPECT_TRUE(p.all_started()) << "threads did not start";
  std::this_thread::sleep_for(milliseconds(50));  // let them reach their waits (not asserted)
  std::vector<bool> early(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int s = p.state(i);
    early[i] = s != probe_set<L>::kPending;
    EXPECT_NE(s, probe_set<L>::kFailed) << p.name(i) << " on a lock " << held_name(held_shared)
                                        << ": returned false long before its deadline";
    EXPECT_NE(s, probe_set<L>::kAcquired) << p.name(i) << " acquired a lock " << held_name(held_shared);
  }
  release_holder();
  const bool all = p.all_finished();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int s = p.state(i);
    if (early[i]) continue;
    if (s == probe_set<L>::kPending) {
      ADD_FAILURE() << p.name(i) << " still waiting " << kBound.count()
                    << " s after the release (lost wake-up)";
    } else {
      EXPECT_EQ(s, probe_set<L>::kAcquired) << p.name(i) << " gave up after the release";
    }
  }
  if (!all) die("a timed call still waits after the release; it cannot be joined");
}

// The lock is free and works: try_lock in another thread, lock/unlock here.
template <class L>
void expect_usable_and_free(L& l) {
  EXPECT_TRUE(in_other_thread([&] {
    const bool ok = l.try_lock();
    if (ok) l.unlock();
    return ok;
  })) << "the lock is not free after the calls returned";
  l.lock();
  l.unlock();
}

// Thread `t` sleeps in the kernel (here: parked on the lock's futex), seen three times in a row.
bool parked(const std::atomic<pid_t>& t) {
  int seen = 0;
  return eventually([&] {
    if (t.load() == 0 || thread_state(t.load()) != 'S') {
      seen = 0;
      return false;
    }
    if (++seen < 3) std::this_thread::sleep_for(milliseconds(2));
    return seen >= 3;
  });
}

TEST(TimedEdgeSetup, ParkNowVariantsNeverSpin) {
  EXPECT_TRUE(kParkNowSet);
  EXPECT_EQ(park_now_time::spin_loops(), 0u);
  EXPECT_EQ(park_now_innodb::spin_loops(), 0u);
}

// --- every lock, exclusive and (where it has them) shared calls ---------------------------

// Bug guarded: a timed call on a free lock that does not behave as try_lock (an edge deadline
// that crashes, overflows into a refusal, or waits).
TYPED_TEST(TimedEdge, OnAFreeLockEveryEdgeSucceedsAtOnce) {
  spinwise_test::watchdog dog("OnAFreeLockEveryEdgeSucceedsAtOnce");
  TypeParam l;
  const auto check = [&l](std::vector<edge<TypeParam>> edges) {
    for (const auto& e : edges) {
      const bool ok = e.call(l);
      EXPECT_TRUE(ok) << e.name << " on a free lock";
      if (ok) release(l, e.shared);
    }
  };
  // Run in a thread of their own: the watchdog turns a wait on the free lock into a failure.
  std::thread([&] {
    check(all_expired_edges<TypeParam>());
    check(all_far_edges<TypeParam>());
  }).join();
  expect_usable_and_free(l);
}

// Bug guarded: an expired deadline that waits: now() + hours(-3'000'000) in nanoseconds is
// signed overflow (it wrapped to ~240 years ahead), a coarse time point compared in nanoseconds
// wraps, duration<double> beyond int64 is an undefined conversion. And a failed call that
// disturbs the lock: an untimed waiter parked behind the holder must still get in.
TYPED_TEST(TimedEdge, OnALockHeldExclusivelyExpiredEdgesFailPromptly) {
  spinwise_test::watchdog dog("OnALockHeldExclusivelyExpiredEdgesFailPromptly", seconds(150));
  TypeParam l;
  l.lock();
  // Untimed waiters behind the holder (a writer; and a reader where L has shared calls).
  std::atomic<int> waiters_in{0};
  const int waiters = kIsShared<TypeParam> ? 2 : 1;
  std::thread writer([&] {
    l.lock();
    waiters_in.fetch_add(1);
    l.unlock();
  });
  std::thread reader;
  if constexpr (kIsShared<TypeParam>) {
    reader = std::thread([&] {
      l.lock_shared();
      waiters_in.fetch_add(1);
      l.unlock_shared();
    });
  }
  expect_all_fail_while_held(l, all_expired_edges<TypeParam>(), false, [&] {
    EXPECT_EQ(waiters_in.load(), 0);
    l.unlock();
  });
  if (!eventually([&] { return waiters_in.load() == waiters; })) {
    die("an untimed waiter was stranded after the expired timed calls");
  }
  writer.join();
  if (reader.joinable()) reader.join();
  expect_usable_and_free(l);
}

// Bug guarded: a far deadline that is taken for a past one (time_point::max() - now() overflows
// for a clock with a negative now(); now + 1000 years in seconds wraps when compared in
// nanoseconds), so the call gives up at once; or a far wait that misses the release.
TYPED_TEST(TimedEdge, OnALockHeldExclusivelyFarEdgesWaitForTheRelease) {
  spinwise_test::watchdog dog("OnALockHeldExclusivelyFarEdgesWaitForTheRelease", seconds(150));
  TypeParam l;
  l.lock();
  expect_all_wait_for_release(l, all_far_edges<TypeParam>(), false, [&] { l.unlock(); });
  expect_usable_and_free(l);
}

// A clock that the test moves: it says the deadline has passed exactly when the test wants.
// Steady (it only ever moves forward), so a waiter sleeps until it is woken, not a 10 ms poll.
struct manual_clock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = nanoseconds;
  using time_point = std::chrono::time_point<manual_clock>;
  static constexpr bool is_steady = true;
  static inline std::atomic<rep> ticks{0};
  static time_point now() noexcept { return time_point(duration(ticks.load())); }
};

// Bug guarded (hybrid_mutex, a lost wake-up): timed waiter A and untimed waiter D sleep (word
// 2); the holder's unlock wakes A alone; C barges in (0 -> 1); A's deadline has passed and it
// returns false without marking the word 2 again; C's unlock finds 1 and wakes no one: D
// sleeps on a free lock. The test thread is the holder; the kernel wakes a futex's sleepers in
// arrival order, so A (asleep first) is the one woken.
TYPED_TEST(TimedEdge, AWokenTimedWaiterThatGivesUpLeavesNoSleeperStranded) {
  if (thread_state(this_tid()) == '?') GTEST_SKIP() << "/proc shows no thread states here (qemu-user)";
  spinwise_test::watchdog dog("AWokenTimedWaiterThatGivesUpLeavesNoSleeperStranded", seconds(150));
  int barged = 0;
  for (int attempt = 0; attempt < 10 && barged == 0; ++attempt) {
    TypeParam l;
    manual_clock::ticks = 0;
    l.lock();  // the holder
    std::atomic<pid_t> a_tid{0}, d_tid{0};
    std::atomic<int> a_result{-1};
    std::atomic<bool> d_done{false};
    std::thread a([&] {
      a_tid = this_tid();
      const bool got = l.try_lock_until(manual_clock::time_point(hours(1)));
      if (got) l.unlock();
      a_result = got ? 1 : 0;
    });
    if (!parked(a_tid)) die("the timed waiter never went to sleep");
    std::thread d([&] {
      d_tid = this_tid();
      l.lock();
      l.unlock();
      d_done = true;
    });
    if (!parked(d_tid)) die("the untimed waiter never went to sleep");
    // The bargers: the holder itself, which tries again right after its unlock, and C, which
    // spins on try_lock; either takes the word (as 1) while A is on its way out of the kernel.
    std::atomic<bool> c_spinning{false}, c_may_leave{false};
    std::thread c([&] {
      c_spinning = true;
      while (!l.try_lock()) {
      }
      while (!c_may_leave.load()) std::this_thread::yield();
      l.unlock();
    });
    if (!eventually([&] { return c_spinning.load(); })) die("the barging thread did not start");
    manual_clock::ticks = nanoseconds(hours(2)).count();  // A's deadline passes while it sleeps
    l.unlock();                                           // wakes A
    const bool holder_barged = l.try_lock();
    if (!eventually([&] { return a_result.load() >= 0; })) die("the timed waiter did not return");
    if (a_result.load() == 0) ++barged;  // else A was first after all: retry
    // The bargers leave (each took the word as 1): their unlocks wake D only if A put the mark
    // back before it gave up.
    if (holder_barged) l.unlock();
    c_may_leave = true;
    c.join();
    if (!eventually([&] { return d_done.load(); }, seconds(10))) {
      ADD_FAILURE() << "attempt " << attempt
                    << ": the untimed waiter is asleep on a free lock 10 s after the last "
                    << "unlock (the timed waiter returned " << (a_result.load() ? "true" : "false") << ")";
      // Rescue it, so the binary goes on: a sleeper behind the holder makes the next unlock wake.
      l.lock();
      std::atomic<pid_t> kick_tid{0};
      std::thread kick([&] {
        kick_tid = this_tid();
        l.lock();
        l.unlock();
      });
      parked(kick_tid);
      l.unlock();
      kick.join();
    }
    a.join();
    d.join();
    expect_usable_and_free(l);
  }
  // The scenario needs C to win the race with A for the freed word; say so when it never did.
  if (barged == 0) std::printf("note: the woken waiter was first to the lock in all 10 attempts\n");
}

// --- shared locks: the other half of the matrix -------------------------------------------

// Bug guarded: a shared timed call that refuses (or waits for) a lock readers hold: it must
// enter at once at every edge, expired ones included, as try_lock_shared does.
TYPED_TEST(SharedTimedEdge, OnALockHeldSharedEverySharedEdgeSucceedsAtOnce) {
  spinwise_test::watchdog dog("OnALockHeldSharedEverySharedEdgeSucceedsAtOnce", seconds(150));
  TypeParam l;
  l.lock_shared();
  {
    probe_set<TypeParam> p(l, concat(expired_edges<TypeParam, true>(), far_edges<TypeParam, true>()));
    const bool all = p.all_finished();
    for (std::size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p.state(i), probe_set<TypeParam>::kAcquired) << p.name(i) << " on a lock held shared";
    }
    if (!all) die("a shared timed call waits on a lock only readers hold");
  }
  EXPECT_FALSE(in_other_thread([&] {
    const bool ok = l.try_lock();
    if (ok) l.unlock();
    return ok;
  }));
  l.unlock_shared();
  expect_usable_and_free(l);
}

// Bug guarded: as OnALockHeldExclusivelyExpiredEdgesFailPromptly, for writers behind readers
// (where a writer also reserves and drains: an expired one must do neither).
TYPED_TEST(SharedTimedEdge, OnALockHeldSharedExpiredExclusiveEdgesFailPromptly) {
  spinwise_test::watchdog dog("OnALockHeldSharedExpiredExclusiveEdgesFailPromptly", seconds(150));
  TypeParam l;
  l.lock_shared();
  expect_all_fail_while_held(l, expired_edges<TypeParam, false>(), true, [&] { l.unlock_shared(); });
  // A reader still enters (nothing reserved), and the lock works.
  EXPECT_TRUE(in_other_thread([&] {
    const bool ok = l.try_lock_shared();
    if (ok) l.unlock_shared();
    return ok;
  }));
  expect_usable_and_free(l);
}

TYPED_TEST(SharedTimedEdge, OnALockHeldSharedFarExclusiveEdgesWaitForTheRelease) {
  spinwise_test::watchdog dog("OnALockHeldSharedFarExclusiveEdgesWaitForTheRelease", seconds(150));
  TypeParam l;
  l.lock_shared();
  expect_all_wait_for_release(l, far_edges<TypeParam, false>(), true, [&] { l.unlock_shared(); });
  expect_usable_and_free(l);
}

// A clock that, each time the lock reads it, checks from inside the timed call whether the lock
// would admit a reader right now; its time is always an hour past any deadline used with it.
template <class L>
struct reader_probe_clock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = nanoseconds;
  using time_point = std::chrono::time_point<reader_probe_clock>;
  static constexpr bool is_steady = true;
  static inline L* lock = nullptr;
  static inline std::atomic<long> reads{0};
  static inline std::atomic<long> refused{0};
  static time_point now() noexcept {
    reads.fetch_add(1);
    if (lock != nullptr) {
      if (lock->try_lock_shared()) {
        lock->unlock_shared();
      } else {
        refused.fetch_add(1);
      }
    }
    return time_point(hours(1));
  }
};

// Bug guarded: a writer whose deadline has passed reserves the lock (closing it to readers)
// before it looks at the deadline, then withdraws. An expired deadline must be a try_lock: the
// clock above sees, deterministically, whether the reservation was made before it was read.
TYPED_TEST(SharedTimedEdge, AnExpiredWriterDeadlineReservesNothing) {
  spinwise_test::watchdog dog("AnExpiredWriterDeadlineReservesNothing");
  using clock = reader_probe_clock<TypeParam>;
  TypeParam l;
  l.lock_shared();
  clock::lock = &l;
  clock::reads = 0;
  clock::refused = 0;
  const int n = scaled(200, 20);
  int acquired = 0;
  std::thread([&] {
    for (int i = 0; i < n; ++i) {
      if (l.try_lock_until(typename clock::time_point(nanoseconds(0)))) {
        ++acquired;
        l.unlock();
      }
    }
  }).join();
  clock::lock = nullptr;
  EXPECT_EQ(acquired, 0) << "a writer entered a lock readers hold";
  EXPECT_GT(clock::reads.load(), 0) << "the deadline was never read: the probe proved nothing";
  EXPECT_EQ(clock::refused.load(), 0)
      << "while the expired writer read its deadline, readers were turned away "
      << "(it had reserved the lock) in " << clock::refused.load() << " of " << clock::reads.load()
      << " reads";
  l.unlock_shared();
  expect_usable_and_free(l);
}

// The same bug seen from outside: a reader's try_lock_shared must never fail while only readers
// hold the lock and only expired writer calls run beside it. A second thread hammers
// try_lock_shared while the writer makes its expired calls; after each one the writer also
// checks that a reader gets in.
TYPED_TEST(SharedTimedEdge, ExpiredWriterCallsNeverTurnReadersAway) {
  spinwise_test::watchdog dog("ExpiredWriterCallsNeverTurnReadersAway");
  TypeParam l;
  l.lock_shared();
  const int n = scaled(20000, 2000);
  std::atomic<bool> writer_done{false};
  std::atomic<long> reader_tries{0}, reader_refused{0};
  long writer_acquired = 0, refused_after = 0;
  std::thread reader([&] {
    reader_tries.fetch_add(1);  // started
    while (!writer_done.load(std::memory_order_relaxed)) {
      if (l.try_lock_shared()) {
        l.unlock_shared();
      } else {
        reader_refused.fetch_add(1, std::memory_order_relaxed);
      }
      reader_tries.fetch_add(1, std::memory_order_relaxed);
    }
  });
  long overlapped = 0;  // writer calls during which the reader made a try
  std::thread writer([&] {
    // Starts once the reader runs. The window is a few instructions wide, so it takes the two
    // threads running at the same time on two CPUs: on a loaded machine they may only take
    // turns. So it goes on until n of its calls overlapped a reader's try (or 100 n calls).
    eventually([&] { return reader_tries.load() > 0; });
    for (long i = 0; i < n || (overlapped < n && i < 100L * n); ++i) {
      const long tries_before = reader_tries.load(std::memory_order_relaxed);
      bool got = false;
      switch (i % 5) {
        case 0:
          got = l.try_lock_for(nanoseconds(0));
          break;
        case 1:
          got = l.try_lock_for(milliseconds(-1));
          break;
        case 2:
          got = l.try_lock_until(steady_clock::now() - seconds(1));
          break;
        case 3:
          got = l.try_lock_until(system_clock::now());
          break;
        default:
          got = l.try_lock_until(steady_clock::time_point::min());
          break;
      }
      if (got) {
        ++writer_acquired;
        l.unlock();
      }
      if (reader_tries.load(std::memory_order_relaxed) != tries_before) ++overlapped;
      if (l.try_lock_shared()) {
        l.unlock_shared();
      } else {
        ++refused_after;
      }
    }
    writer_done = true;
  });
  writer.join();
  reader.join();
  EXPECT_EQ(writer_acquired, 0);
  EXPECT_EQ(refused_after, 0) << "a reader was refused right after an expired writer call returned";
  EXPECT_GT(reader_tries.load(), 1) << "the reader never ran beside the writer: the test proved nothing";
  if (overlapped < n) std::printf("note: only %ld writer calls overlapped a reader's try\n", overlapped);
  EXPECT_EQ(reader_refused.load(), 0) << "readers were turned away " << reader_refused.load() << " times in "
                                      << reader_tries.load() << " tries while only expired writers ran";
  l.unlock_shared();
  expect_usable_and_free(l);
}

}  // namespace
