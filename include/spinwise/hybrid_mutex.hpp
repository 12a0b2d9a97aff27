#pragma once
// hybrid_mutex: InnoDB's TTAS + event mutex. Spin a bounded number of randomized rounds, yield
// once, then park on a futex until the holder wakes us. Lockable and TimedLockable.
//
// This is the lock to use when unsure: short waits are caught spinning (a spin handoff is ~150-190
// ns on our 2-vCPU VM, a parked one ~20 us: perf.md §6), long ones and oversubscribed ones sleep
// in the kernel like std::mutex instead of burning CPU.
//
// When not to use it: for waits that are always long (std::mutex does not spin at all, and
// wastes nothing), or where an unlock must never make a system call (use a spin lock).
//
// Default policy: time_policy, InnoDB's shape (random [0, spin_wait_delay) units a round,
// spin_loops rounds, defaults 6 / 30) with the unit in time, 200 ns, what 50 PAUSEs took on the
// CPUs InnoDB was tuned on; ~15 us of spinning before it parks, on any CPU. Use
// hybrid_mutex_t<innodb_policy<>> to replay MySQL's instruction counts exactly.
//
// Cost: 4 bytes (a futex word). Uncontended lock+unlock = one CAS + one xchg (the unlock must
// learn atomically whether anyone sleeps). A wake-up is one futex_wake system call.
//
// Lock word: 0 free, 1 held, 2 held and a waiter may be parked (Drepper, "Futexes Are Tricky",
// mutex 3). A thread that has parked once takes the lock as 2, not 1, so the unlock that follows
// wakes the next sleeper: it cannot know it was the last.
//
//   0 --lock (CAS)--> 1 --waiter parks (xchg)--> 2
//   ^                 |                          |
//   +--unlock (xchg)--+--------------------------+--> futex_wake(1) when it was 2

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") hybrid_mutex_t {
 public:
  using policy = Policy;
  using stats = Stats;

  constexpr hybrid_mutex_t() noexcept = default;
  hybrid_mutex_t(const hybrid_mutex_t&) = delete;
  hybrid_mutex_t& operator=(const hybrid_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~hybrid_mutex_t() { detail::tsan::destroy(this); }
#endif

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    if (SPINWISE_UNLIKELY(!try_acquire())) lock_slow();
    Stats::on_acquire();
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    const bool ok = try_acquire();
    if (ok) Stats::on_acquire();
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  // Waits at most `rel` (measured on steady_clock). Returns false only once that time has passed.
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& rel) noexcept SPINWISE_TRY_ACQUIRE(true) {
    using steady = std::chrono::steady_clock;
    // A wait longer than a century is a wait without end (and now() + it would overflow).
    if (rel > std::chrono::hours(24 * 365 * 100)) {
      lock();
      return true;
    }
    return try_lock_until(steady::now() + std::chrono::ceil<steady::duration>(rel));
  }

  // Waits until `deadline` on any clock. Returns false only once Clock::now() >= deadline.
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) noexcept
      SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    const bool ok = try_acquire() || lock_slow_until(deadline);
    if (ok) Stats::on_acquire();
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    detail::tsan::pre_unlock(this, 0);
    // held -> free; release pairs with the acquire of whichever CAS/xchg takes it next.
    if (SPINWISE_UNLIKELY(word_.exchange(kFree, std::memory_order_release) == kContended)) wake();
    detail::tsan::post_unlock(this, 0);
  }

  bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != kFree; }

 private:
  // Invariant: a thread parked on word_ (or about to) has set it to 2 since its last check, so
  // the unlock that frees it after that sees 2 and wakes someone.
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kContended = 2;

  bool try_acquire() noexcept {
    std::uint32_t c = kFree;
    return word_.compare_exchange_strong(c, kHeld, std::memory_order_acquire, std::memory_order_relaxed);  // 0 -> 1
  }

  // Spins one budget: polls with loads, takes a free-looking word with a CAS 0 -> `take`.
  // Returns true with the lock held, false when the budget is spent (or `expired()` says so).
  template <class Expired>
  bool spin(std::uint32_t take, Expired expired, detail::wait_meter<Stats>& m) noexcept {
    typename Policy::waiter w;
    for (;;) {
      std::uint32_t c = word_.load(std::memory_order_relaxed);
      if (c == kFree) {
        // 0 -> take; acquire pairs with unlock()'s release exchange.
        if (word_.compare_exchange_weak(c, take, std::memory_order_acquire, std::memory_order_relaxed)) {
          m.account(w);
          return true;
        }
        continue;
      }
      if (w.is_completed() || expired()) {
        m.account(w);
        return false;
      }
      m.snooze(w);
    }
  }

  SPINWISE_COLD void lock_slow() noexcept {
    detail::wait_meter<Stats> m;
    std::uint32_t take = kHeld;
    for (;;) {
      if (spin(take, [] { return false; }, m)) break;
      m.yield();  // InnoDB yields once before the OS wait
      // 1 -> 2 (announce a sleeper), or 0 -> 2 (it was freed: ours, marked contended).
      if (word_.exchange(kContended, std::memory_order_acquire) == kFree) break;
      m.parked();
      detail::futex_wait(word_, kContended);  // returns at once unless still 2
      take = kContended;  // others may sleep behind us: our unlock must wake
    }
    m.done();
  }

  template <class Clock, class Duration>
  SPINWISE_COLD bool lock_slow_until(const std::chrono::time_point<Clock, Duration>& deadline) noexcept {
    const auto expired = [&deadline] { return !(Clock::now() < deadline); };
    detail::wait_meter<Stats> m;  // reports only waits that end in the lock
    std::uint32_t take = kHeld;
    for (;;) {
      if (spin(take, expired, m)) {
        m.done();
        return true;
      }
      if (expired()) return false;
      m.yield();
      if (word_.exchange(kContended, std::memory_order_acquire) == kFree) {  // as in lock_slow
        m.done();
        return true;
      }
      const auto left = deadline - Clock::now();
      if (left <= Duration::zero()) return false;  // a stale 2 only costs the holder a wake-up
      auto wait = std::chrono::ceil<std::chrono::nanoseconds>(left);
      // A clock that can jump (system_clock) is re-read at least every 10 ms.
      if (!Clock::is_steady) wait = std::min<std::chrono::nanoseconds>(wait, std::chrono::milliseconds(10));
      m.parked();
      detail::futex_wait_for(word_, kContended, wait);
      take = kContended;
    }
  }

  SPINWISE_COLD void wake() noexcept { detail::futex_wake_one(word_); }

  std::atomic<std::uint32_t> word_{kFree};
};

struct hybrid_mutex_tag;
// Knobs for every hybrid_mutex: hybrid_mutex::policy::set_spin_wait_delay(...) etc.
using hybrid_mutex = hybrid_mutex_t<time_policy<hybrid_mutex_tag>>;

static_assert(sizeof(hybrid_mutex) == 4, "hybrid_mutex is one futex word");
static_assert(sizeof(hybrid_mutex_t<time_policy<>, class_stats<struct hybrid_mutex_tag>>) == 4,
              "statistics live in per-thread shards, not in the lock");

}  // namespace spinwise
