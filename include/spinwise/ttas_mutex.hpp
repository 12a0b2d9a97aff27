#pragma once
// ttas_mutex: test-and-test-and-set spin lock (InnoDB's TTASMutex), the default spinwise spin lock.
//
// A waiter polls the word with plain loads, which keep its copy of the line shared, and tries
// the exchange only when the lock looks free; between polls it waits per its policy, for at most
// spin_loops rounds, then yields between polls. Unfair: a releasing thread can re-take the lock
// before a waiter notices (TTAS at 2 threads: per-thread op-count CoV 0.13-0.23 on our VM).
//
// When not to use it: when waits can be long (use hybrid_mutex, which parks), when threads
// routinely outnumber CPUs (yielding spinners still burn the slices the holder needs), or when
// you need FIFO fairness (ticket_mutex, mcs_mutex).
//
// Default policy: time_policy. It is InnoDB's algorithm (random [0, spin_wait_delay) units per
// round, 30 rounds, defaults 6 / 30) with the unit given in time, 200 ns, what it was on the CPUs
// InnoDB's defaults were tuned on; innodb_policy would make the same wait 3x longer on our
// Emerald Rapids VM and 14x on Skylake. Use ttas_mutex_t<innodb_policy<>> to replay MySQL exactly.
//
// Cost: 4 bytes. Uncontended lock+unlock = one xchg + one release store, nothing else: the
// policy is only consulted once the lock was found busy, and the lock's line stays in the owner's
// cache while no other thread touches it. A waiter polls with plain loads, so it holds a shared
// copy and moves no line while the holder keeps the lock; a release costs it one line transfer
// to see the word free and another for its exchange. Figures for one machine:
// bench/results/report.md in the spinwise repository.

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") ttas_mutex_t {
 public:
  using policy = Policy;
  using stats = Stats;
  // This lock with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): ttas_mutex::with_stats<my_class>.
  template <class Class>
  using with_stats = ttas_mutex_t<Policy, class_stats<Class>>;

  constexpr ttas_mutex_t() noexcept = default;
  ttas_mutex_t(const ttas_mutex_t&) = delete;
  ttas_mutex_t& operator=(const ttas_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~ttas_mutex_t() { detail::tsan::destroy(this); }
#endif

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    // free -> held; acquire pairs with the release store in unlock(). No load first: on an
    // uncontended lock it would only add a shared->exclusive upgrade of the line.
    if (SPINWISE_UNLIKELY(word_.exchange(kLocked, std::memory_order_acquire) != kUnlocked)) lock_slow();
    Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    // A busy lock costs a load, not a stolen line; free -> held as in lock().
    const bool ok = word_.load(std::memory_order_relaxed) == kUnlocked &&
                    word_.exchange(kLocked, std::memory_order_acquire) == kUnlocked;
    if (ok) Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    detail::tsan::pre_unlock(this, 0);
    word_.store(kUnlocked, std::memory_order_release);  // held -> free
    detail::tsan::post_unlock(this, 0);
  }

  bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != kUnlocked; }

 private:
  // Lock word: 0 = free, 1 = held. Invariant: 1 exactly while one thread owns the lock.
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;

  // InnoDB's spin: poll, wait a round, poll again; try the exchange only on a free-looking word
  // and, if another thread won it, keep going on the same budget (MySQL is_free + try_lock).
  SPINWISE_COLD void lock_slow() noexcept {
    detail::spin_then_yield<Policy, Stats> wt(
        this, lock_mode::x);  // budget spent: yield, to let a preempted holder run
    for (;;) {
      // Where the policy hands off promptly (prompt_time_policy), a round ends early once the word
      // looks free, polled every kDelayPollNs of relaxes (25 ns on x86) rather than at each
      // counter check; time_policy's rounds run their course.
      while (word_.load(std::memory_order_relaxed) != kUnlocked)
        wt.pause(detail::poll_eagerly([this] { return word_.load(std::memory_order_relaxed) == kUnlocked; }));
      if (word_.exchange(kLocked, std::memory_order_acquire) == kUnlocked) break;  // free -> held
    }
    wt.entered();
  }

  std::atomic<std::uint32_t> word_{kUnlocked};
};

struct ttas_mutex_tag;
// Knobs for every ttas_mutex: ttas_mutex::policy::set_spin_wait_delay(...) etc.
using ttas_mutex = ttas_mutex_t<time_policy<ttas_mutex_tag>>;

static_assert(sizeof(ttas_mutex) == 4, "ttas_mutex is one 32-bit word");
static_assert(sizeof(ttas_mutex::with_stats<struct ttas_mutex_tag>) == 4,
              "statistics live in per-thread shards, not in the lock");
static_assert(std::is_same_v<ttas_mutex::with_stats<struct ttas_mutex_tag>::policy, ttas_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
