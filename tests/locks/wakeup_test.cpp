// Wake-ups of the parking locks, with the interleavings forced rather than hoped for: a test
// policy whose waiter can stop a thread at the start of a spin episode, a test clock that can
// stop a thread between marking the lock contended and entering the kernel, and a statistics
// policy that counts the parks a wait reports. Each test names the bug it guards.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "lock_test_util.hpp"
#include "spinwise/adaptive_policy.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/hybrid_shared_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/park_behind_sleepers.hpp"
#include "spinwise/park_on_marked_word.hpp"

namespace {

using spinwise_test::await_asleep;
using spinwise_test::this_tid;

// Spins until `flag` is set, or fails the binary: a protocol bug must fail with a message.
void await_flag(const std::atomic<bool>& flag, const char* what) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "FATAL: %s did not happen within 60 s\n", what);
      std::fflush(stderr);
      std::_Exit(1);
    }
    std::this_thread::yield();
  }
}

// A policy with no spinning (every episode's budget is spent at once) whose waiter, in a thread
// that armed the gate, stops at the start of its second episode (after its first sleep) until the
// test opens the gate. That is the moment between a wake-up and the woken thread's first look at
// the lock word.
struct gated_policy {
  static inline std::atomic<bool> stopped{false};
  static inline std::atomic<bool> open{false};
  static inline thread_local bool armed = false;
  static inline thread_local int episodes = 0;

  class waiter {
   public:
    waiter() noexcept {
      if (armed && ++episodes == 2) {
        stopped.store(true);
        while (!open.load()) std::this_thread::yield();
      }
    }
    void snooze() noexcept {}
    bool is_completed() const noexcept { return true; }
    std::uint32_t rounds() const noexcept { return 0; }
    std::uint64_t relaxes() const noexcept { return 0; }
  };
};

// A steady clock the test moves by hand. In a thread that installed a hook, every now() first
// calls the hook, which returns true once it has done its work (it is then removed): a test uses
// it to stop a waiter between marking the lock word and entering the kernel, where the waiter
// reads the clock for its sleep's timeout.
struct manual_clock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<manual_clock>;
  static constexpr bool is_steady = true;

  static inline std::atomic<rep> ticks{1'000'000'000};
  static inline thread_local bool (*hook)() = nullptr;

  static time_point now() noexcept {
    if (hook != nullptr && hook()) hook = nullptr;
    return time_point(duration(ticks.load()));
  }
};

// The handshake of a hook: the waiter says it stopped, the test does its step and lets it go.
struct handshake {
  static inline std::atomic<bool> stopped{false};
  static inline std::atomic<bool> resumed{false};
  static void reset() {
    stopped = false;
    resumed = false;
  }
  static void stop_here() {
    stopped = true;
    while (!resumed.load()) std::this_thread::yield();
  }
};

// Statistics that count what the waits report, per lock type.
template <class Id>
struct counting_stats : spinwise::no_stats {
  static constexpr bool enabled = true;
  static inline std::atomic<std::uint64_t> waits{0};
  static inline std::atomic<std::uint64_t> parks{0};
  static inline std::atomic<std::uint64_t> max_wait_ticks{0};
  static void on_contended(const spinwise::wait_record& r, spinwise::lock_mode) noexcept {
    waits.fetch_add(1);
    parks.fetch_add(r.parks);
    std::uint64_t m = max_wait_ticks.load();
    while (r.wait_ticks > m && !max_wait_ticks.compare_exchange_weak(m, r.wait_ticks)) {
    }
  }
  static void reset() noexcept {
    waits = 0;
    parks = 0;
    max_wait_ticks = 0;
  }
};

// The lock word of a hybrid_mutex (its only member) or of a hybrid_shared_mutex (its first), read
// by the test.
template <class M>
const std::atomic<std::uint32_t>& word_of(const M& m) {
  static_assert(sizeof(M) == sizeof(std::atomic<std::uint32_t>));
  return *reinterpret_cast<const std::atomic<std::uint32_t>*>(&m);
}
template <class M>
const std::atomic<std::uint64_t>& state_of(const M& m) {
  return *reinterpret_cast<const std::atomic<std::uint64_t>*>(&m);
}

// Bug guarded: a timed waiter that was woken, lost the lock to a barging thread and then gave up
// (its deadline passed) left the word at 1. The wake-up it consumed was the other sleepers': the
// barger's unlock (1 -> 0) woke no one, and a thread parked in lock() slept on a free lock.
// Interleaving, forced: A (timed) parks, then D (untimed) parks behind it; the holder moves the
// clock past A's deadline and unlocks, which wakes A (the kernel wakes in arrival order); A stops
// before it looks at the word; the test (the barger) takes the lock; A goes on, sees it held and
// its deadline passed, and gives up; the barger unlocks. D must then get the lock.
TEST(HybridMutexWakeUp, TimedWaiterThatGivesUpAfterAWakeUpPassesItOn) {
  using lock_t = spinwise::hybrid_mutex_t<gated_policy>;
  lock_t m;
  gated_policy::stopped = false;
  gated_policy::open = false;
  std::atomic<pid_t> a_tid{0}, d_tid{0};
  std::atomic<bool> a_result{true}, a_done{false}, d_done{false};

  m.lock();
  const manual_clock::time_point deadline = manual_clock::now() + std::chrono::hours(1);
  std::thread a([&] {
    gated_policy::armed = true;
    a_tid = this_tid();
    a_result = m.try_lock_until(deadline);
    if (a_result) m.unlock();
    a_done = true;
  });
  const bool forced = await_asleep(a_tid);
  std::thread d([&] {
    d_tid = this_tid();
    m.lock();
    m.unlock();
    d_done = true;
  });
  if (forced) {
    ASSERT_TRUE(await_asleep(d_tid));
  }
  ASSERT_EQ(word_of(m).load(), 2u) << "both waiters announced themselves";

  manual_clock::ticks += std::chrono::nanoseconds(std::chrono::hours(2)).count();  // A's deadline passes
  m.unlock();  // 2 -> 0, wakes A (first in line)
  await_flag(gated_policy::stopped, "the timed waiter's wake-up");
  ASSERT_TRUE(m.try_lock()) << "the barger takes the free lock while A has not looked yet";
  gated_policy::open = true;
  a.join();
  EXPECT_FALSE(a_result.load()) << "A's deadline had passed and the lock was held";
  EXPECT_EQ(word_of(m).load(), 2u) << "A gave up after a wake-up: the word must say a sleeper remains";
  m.unlock();  // the barger leaves: must wake D

  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!d_done.load() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!d_done.load()) {
    ADD_FAILURE() << "D still sleeps 20 s after the lock was freed: lost wake-up";
    // Rescue D so the test ends: contend once more, so that an unlock finds the word at 2.
    m.lock();
    std::thread r([&] {
      m.lock();
      m.unlock();
    });
    while (word_of(m).load() != 2u) std::this_thread::yield();
    m.unlock();
    r.join();
  }
  d.join();
  EXPECT_FALSE(m.is_locked());
  if (!forced) std::printf("note: /proc does not show thread states here; the interleaving was not forced\n");
}

// Bug guarded: a park counted when futex_wait returned at once (the word changed between the
// mark and the system call): the statistics' OS-wait count was inflated. Forced: the waiter stops
// in the deadline's clock read, after it marked the word 2 and before the futex call; the holder
// unlocks there, so the futex call finds 0 and returns without sleeping.
struct hm_park_id;
TEST(HybridMutexWakeUp, AFutexWaitThatDidNotSleepIsNoPark) {
  using stats = counting_stats<hm_park_id>;
  using lock_t = spinwise::hybrid_mutex_t<gated_policy, stats>;
  static lock_t m;
  stats::reset();
  handshake::reset();
  m.lock();
  std::atomic<bool> ok{false};
  std::thread w([&] {
    const auto deadline = manual_clock::now() + std::chrono::hours(1);
    // Stop once the word says "contended": after our exchange, in the sleep's timeout.
    manual_clock::hook = [] {
      if (word_of(m).load() != 2u) return false;
      handshake::stop_here();
      return true;
    };
    ok = m.try_lock_until(deadline);
    if (ok) m.unlock();
  });
  await_flag(handshake::stopped, "the waiter's stop before its futex call");
  m.unlock();  // 2 -> 0: the futex call that follows finds 0 and returns at once
  handshake::resumed = true;
  w.join();
  EXPECT_TRUE(ok.load());
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::parks.load(), 0u) << "the futex call returned at once: no park";
}

struct hsm_park_id;
TEST(HybridSharedMutexWakeUp, AFutexWaitThatDidNotSleepIsNoPark) {
  using stats = counting_stats<hsm_park_id>;
  using lock_t = spinwise::hybrid_shared_mutex_t<gated_policy, stats>;
  static lock_t m;
  stats::reset();
  handshake::reset();
  m.lock();
  std::atomic<bool> ok{false};
  std::thread r([&] {
    const auto deadline = manual_clock::now() + std::chrono::hours(1);
    // Stop once RP (bit 2 of the word) is set: the reader is about to sleep on reader_seq_.
    manual_clock::hook = [] {
      if ((state_of(m).load() & 4u) == 0) return false;
      handshake::stop_here();
      return true;
    };
    ok = m.try_lock_shared_until(deadline);
    if (ok) m.unlock_shared();
  });
  await_flag(handshake::stopped, "the reader's stop before its futex call");
  m.unlock();  // clears RP and bumps reader_seq_: the futex call returns at once
  handshake::resumed = true;
  r.join();
  EXPECT_TRUE(ok.load());
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::parks.load(), 0u) << "the futex call returned at once: no park";
}

// And a wait that did sleep is one park (the count is not simply gone).
struct hm_slept_id;
TEST(HybridMutexWakeUp, AWaitThatSleptIsOnePark) {
  using stats = counting_stats<hm_slept_id>;
  using lock_t = spinwise::hybrid_mutex_t<gated_policy, stats>;
  lock_t m;
  stats::reset();
  m.lock();
  std::atomic<pid_t> tid{0};
  std::thread w([&] {
    tid = this_tid();
    m.lock();
    m.unlock();
  });
  if (!await_asleep(tid)) {
    m.unlock();
    w.join();
    GTEST_SKIP() << "/proc does not show whether the waiter slept here";
  }
  m.unlock();
  w.join();
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::parks.load(), 1u);
}

// Bug guarded: wait_meter::done() stored read_counter() - start unclipped; a counter read on
// another CPU that is behind `start` wrapped to a wait of ~2^64 ticks.
struct meter_id;
TEST(WaitMeter, ACounterThatStepsBackIsNoHugeWait) {
  using stats = counting_stats<meter_id>;
  stats::reset();
  spinwise::detail::wait_meter<stats> m(nullptr, spinwise::lock_mode::x, {});
  m.start = spinwise::read_counter() + (std::uint64_t{1} << 40);  // "later" than any read below
  m.done();
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::max_wait_ticks.load(), 0u);
}

// --- park_behind_sleepers --------------------------------------------------------------------

// Rounds, yields and parks of a class's contended waits.
template <class Id>
struct episode_stats : spinwise::no_stats {
  static constexpr bool enabled = true;
  static inline std::atomic<std::uint64_t> waits{0}, rounds{0}, yields{0}, parks{0}, roundless{0};
  static void on_contended(const spinwise::wait_record& r, spinwise::lock_mode) noexcept {
    waits.fetch_add(1);
    rounds.fetch_add(r.rounds);
    if (r.rounds == 0) roundless.fetch_add(1);
    yields.fetch_add(r.yields);
    parks.fetch_add(r.parks);
  }
  static void reset() noexcept {
    waits = 0;
    rounds = 0;
    yields = 0;
    parks = 0;
    roundless = 0;
  }
};

// A thread that takes m (waiting as m's wait does) and releases it at once.
template <class M>
std::thread take_and_release(M& m) {
  return std::thread([&m] {
    m.lock();
    m.unlock();
  });
}

// Spins until the class counts `n` sleepers, or fails the binary.
template <class P>
void await_sleepers(std::uint32_t n) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (spinwise::detail::sleepers<P>.load() != n) {
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "FATAL: %u sleepers never counted (%u)\n", n,
                   spinwise::detail::sleepers<P>.load());
      std::fflush(stderr);
      std::_Exit(1);
    }
    std::this_thread::yield();
  }
}

// The rule (park_behind_sleepers.hpp): a wait that starts while a waiter of its class sleeps
// parks at once, with no round and no yield. The first waiter spins its budget, yields and sleeps;
// the second, started once the first is counted asleep, must report no round and no yield. Bug
// guarded: the check gone (or reading another class's count), the second waiter spins 30 rounds.
struct pbs_id;
TEST(ParkBehindSleepers, AWaitBehindASleeperParksWithoutSpinning) {
  using P = spinwise::park_behind_sleepers<spinwise::hybrid_mutex::policy, pbs_id>;
  using stats = episode_stats<pbs_id>;
  static spinwise::hybrid_mutex_t<P, stats> m;
  stats::reset();
  m.lock();
  std::thread first = take_and_release(m);
  // Counted asleep is not yet parked: the unlock must find both waiters inside the futex wait, or
  // one that has not entered it yet finds the word changed, returns without a park and may spin
  // on its next try (issue 42: 231 failures in 300 runs on a Zen 5 guest, with no such wait).
  await_sleepers<P>(1);
  const bool seen = spinwise_test::await_futex_waiters(word_of(m), 2, 1);
  ASSERT_EQ(stats::waits.load(), 0u);
  const std::uint64_t rounds_first = spinwise::hybrid_mutex::policy::spin_loops();
  std::thread second = take_and_release(m);
  await_sleepers<P>(2);
  if (seen) {
    ASSERT_TRUE(spinwise_test::await_futex_waiters(word_of(m), 2, 2));
  }
  m.unlock();
  first.join();
  second.join();
  EXPECT_EQ(stats::waits.load(), 2u);
  EXPECT_EQ(stats::rounds.load(), rounds_first) << "the second waiter spun behind a sleeper";
  EXPECT_EQ(stats::yields.load(), 1u) << "only the first waiter may yield";
  if (seen) {
    EXPECT_EQ(stats::parks.load(), 2u) << "each waiter slept once, woken by the unlock before it";
  }
  EXPECT_EQ(spinwise::detail::sleepers<P>.load(), 0u) << "a sleep left counted";
  if (!seen) GTEST_SKIP() << "the kernel does not say who sleeps on a futex here: parks not checked";
}

// With no sleeper the wait is the policy's: the budget, the yield, then the futex. And another
// class's sleeper does not count (the rule is per class).
struct pbs_other_id;
TEST(ParkBehindSleepers, WithNoSleeperOfItsClassTheWaitSpins) {
  using P = spinwise::park_behind_sleepers<spinwise::hybrid_mutex::policy, pbs_other_id>;
  using Q = spinwise::park_behind_sleepers<spinwise::hybrid_mutex::policy, struct pbs_third_id>;
  using stats = episode_stats<pbs_other_id>;
  static spinwise::hybrid_mutex_t<P, stats> m;
  static spinwise::hybrid_mutex_t<Q> other;
  stats::reset();
  other.lock();
  std::thread elsewhere = take_and_release(other);
  await_sleepers<Q>(1);
  m.lock();
  std::thread waiter = take_and_release(m);
  await_sleepers<P>(1);
  m.unlock();
  waiter.join();
  other.unlock();
  elsewhere.join();
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::rounds.load(), spinwise::hybrid_mutex::policy::spin_loops());
  EXPECT_EQ(stats::yields.load(), 1u);
  EXPECT_EQ(spinwise::detail::sleepers<P>.load(), 0u);
  EXPECT_EQ(spinwise::detail::sleepers<Q>.load(), 0u);
}

// Every sleep counted is uncounted: timed waits that expire asleep, and many threads contending.
struct pbs_count_id;
TEST(ParkBehindSleepers, TheSleeperCountReturnsToZero) {
  using P = spinwise::park_behind_sleepers<spinwise::hybrid_mutex::policy, pbs_count_id>;
  static spinwise::hybrid_mutex_t<P> m;
  m.lock();
  std::thread timed([] { EXPECT_FALSE(m.try_lock_for(std::chrono::milliseconds(20))); });
  timed.join();
  EXPECT_EQ(spinwise::detail::sleepers<P>.load(), 0u);
  m.unlock();
  std::uint64_t counter = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&counter] {
      for (int i = 0; i < 20'000; ++i) {
        if (i % 64 == 0) {
          if (!m.try_lock_for(std::chrono::microseconds(50))) continue;
        } else {
          m.lock();
        }
        ++counter;
        m.unlock();
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_LE(counter, 8u * 20'000u);
  EXPECT_GE(counter, 8u * 20'000u * 63u / 64u);
  EXPECT_EQ(spinwise::detail::sleepers<P>.load(), 0u);
}

// --- park_on_marked_word ------------------------------------------------------------------------

// The rule (park_on_marked_word.hpp): a wait that finds its lock's word marked (a waiter may sleep
// there) parks at once. The first waiter finds the word merely held: it spins its budget, yields
// and sleeps, marking the word; the second, started once the kernel counts the first inside its
// futex wait, must report no round and no yield. Bug guarded: the marked word not passed to the
// wait's step (or the trait not read), the second waiter spins its 30 rounds too.
//
// second_behind_a_sleeper(m, between): holds m while a first waiter goes to sleep on it (the kernel
// counts it inside FUTEX_WAIT), calls between(), starts a second waiter, and releases m once the
// kernel counts both; both waiters then take and release it. False when the kernel does not say
// who sleeps on a futex here (the test skips).
template <class M, class Between>
bool second_behind_a_sleeper(M& m, Between&& between) {
  m.lock();
  std::thread first = take_and_release(m);
  if (!spinwise_test::await_futex_waiters(word_of(m), 2, 1)) {
    m.unlock();
    first.join();
    return false;
  }
  between();
  std::thread second = take_and_release(m);
  EXPECT_TRUE(spinwise_test::await_futex_waiters(word_of(m), 2, 2)) << "the second waiter never slept";
  m.unlock();
  first.join();
  second.join();
  return true;
}

// What a second waiter behind a sleeper may add under park_on_marked_word<Policy>: no yield, no
// round, one park. The first waiter's own wait is its policy's.
template <class Policy, class Id>
void expect_second_waiter_parks_at_once() {
  using stats = episode_stats<Id>;
  static spinwise::hybrid_mutex_t<spinwise::park_on_marked_word<Policy>, stats> m;
  stats::reset();
  if (!second_behind_a_sleeper(m, [] { EXPECT_EQ(stats::waits.load(), 0u); }))
    GTEST_SKIP() << "the kernel does not say who sleeps on a futex here";
  EXPECT_EQ(stats::waits.load(), 2u);
  EXPECT_EQ(stats::yields.load(), 1u) << "only the first waiter may yield: the second spent a budget";
  EXPECT_GE(stats::roundless.load(), 1u) << "the second waiter spun on a word that said a waiter sleeps";
  EXPECT_EQ(stats::parks.load(), 2u) << "each waiter slept once, woken by the unlock before it";
}

struct pom_id;
TEST(ParkOnMarkedWord, AWaitOnAMarkedWordParksWithoutSpinning) {
  expect_second_waiter_parks_at_once<spinwise::hybrid_mutex::policy, pom_id>();
  if (IsSkipped()) return;
  EXPECT_EQ(episode_stats<pom_id>::rounds.load(), spinwise::hybrid_mutex::policy::spin_loops())
      << "the first waiter spins its whole budget, the second none";
}

// The same over adaptive_policy, as the interposer's default kind composes them (its first
// waiter's budget is learnt, so only what the second adds is counted). Bug guarded: the
// composition loses the rule (a wrapper that hides the trait, or adaptive waits that do not pass
// the word's mark to the step).
struct pom_adaptive_id;
struct pom_adaptive_tag;
TEST(ParkOnMarkedWord, OverAdaptivePolicyTheSecondWaiterParksWithoutSpinning) {
  expect_second_waiter_parks_at_once<spinwise::adaptive_policy<pom_adaptive_tag>, pom_adaptive_id>();
}

// On a word merely held (no sleeper marked) the wait is the policy's: its budget, the yield, then
// the futex. Bug guarded: a rule that parks on any busy word would make this lock glibc's.
struct pom_held_id;
TEST(ParkOnMarkedWord, OnAWordMerelyHeldTheWaitSpins) {
  using P = spinwise::park_on_marked_word<spinwise::hybrid_mutex::policy>;
  using stats = episode_stats<pom_held_id>;
  static spinwise::hybrid_mutex_t<P, stats> m;
  stats::reset();
  m.lock();
  std::thread waiter = take_and_release(m);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (word_of(m).load() != 2u) {  // marked by the waiter just before it sleeps: its budget is spent
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the waiter never went to sleep";
    std::this_thread::yield();
  }
  m.unlock();
  waiter.join();
  EXPECT_EQ(stats::waits.load(), 1u);
  EXPECT_EQ(stats::rounds.load(), spinwise::hybrid_mutex::policy::spin_loops());
  EXPECT_EQ(stats::yields.load(), 1u);
}

}  // namespace
