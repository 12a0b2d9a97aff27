#pragma once
// hybrid_mutex: InnoDB's TTAS + event mutex. Spin a bounded number of randomized rounds, yield
// once, then park on a futex until the holder wakes us. Lockable and TimedLockable.
//
// This is the lock to use when unsure: short waits are caught spinning (a handoff to a spinning
// waiter is a line transfer to see the word free and another for its CAS; one to a parked waiter,
// as std::mutex's, is a futex_wake system call and the scheduler's wake-up), long ones and
// oversubscribed ones sleep in the kernel like std::mutex instead of burning CPU.
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
// learn atomically whether anyone sleeps); the lock's line stays in the owner's cache while no
// other thread touches it. A wake-up is one futex_wake system call, made only when the unlock's
// xchg finds 2 (a waiter may be parked). Figures for one machine: bench/results/report.md in the
// spinwise repository.
//
// Lock word: 0 free, 1 held, 2 held and a waiter may be parked (Drepper, "Futexes Are Tricky",
// mutex 3). A thread that has parked once takes the lock as 2, not 1, so the unlock that follows
// wakes the next sleeper: it cannot know it was the last.
//
//   0 --lock (CAS)--> 1 --waiter parks (xchg)--> 2
//   ^                 |                          |
//   +--unlock (xchg)--+--------------------------+--> futex_wake(1) when it was 2
//   1 --a woken timed waiter gives up (xchg)--> 2   (0 -> 2 instead: it owns the lock)

#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// The algorithm (the shell, detail/lock_shell.hpp, makes it a lock).
template <class Policy>
class hybrid_raw : public raw_lock {
 public:
  using policy = Policy;

  bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != kFree; }

 protected:
  static constexpr bool kTimedWaits = true;

  bool try_acquire() noexcept {
    std::uint32_t c = kFree;
    return word_.compare_exchange_strong(c, kHeld, std::memory_order_acquire,
                                         std::memory_order_relaxed);  // 0 -> 1
  }
  bool acquire_fast() noexcept { return try_acquire(); }

  void release() noexcept {
    // held -> free; release pairs with the acquire of whichever CAS/xchg takes it next.
    if (SPINWISE_UNLIKELY(word_.exchange(kFree, std::memory_order_release) == kContended)) wake();
  }

  // One wait, untimed (no_deadline: lock) or timed (clock_deadline), in InnoDB's shape
  // (detail/wait_core.hpp's park_episodes): poll with loads and take a free-looking word with a
  // CAS 0 -> `take`, spinning Policy rounds between polls; once the budget is spent, yield once,
  // then mark the word and sleep; after each wake-up a fresh budget. Under a policy that hands off
  // promptly (prompt_time_policy) a round ends early once the word looks free; the default's
  // rounds run their course. Under a policy that parks on a marked word (park_on_marked_word.hpp)
  // an episode that starts on a word of 2 parks without a round. Returns true with the lock held;
  // false only for a timed wait whose deadline passed (a wait that does not end in the lock is not
  // reported).
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site) noexcept {
    park_episodes<Policy, Stats> wt(this, lock_mode::x, site);
    const auto looks_free = [this] { return word_.load(std::memory_order_relaxed) == kFree; };
    std::uint32_t take = kHeld;
    for (;;) {
      std::uint32_t c = word_.load(std::memory_order_relaxed);
      if (c == kFree) {
        // 0 -> take; acquire pairs with release()'s exchange.
        if (word_.compare_exchange_weak(c, take, std::memory_order_acquire, std::memory_order_relaxed)) break;
        continue;
      }
      if (d.expired()) {
        wt.deadline_passed();
        // A waiter that slept (take == 2) may have been woken by the unlock that freed the word,
        // and lost it to a barging thread that took it as 1. That wake-up was the one the other
        // sleepers had: leaving without a trace would let the barger's unlock (1 -> 0) wake no
        // one, a sleeper stranded on a free lock. So put the mark back, as a waiter does before it
        // sleeps: 1 -> 2 (the next unlock wakes a sleeper), or 0 -> 2 (freed meanwhile: ours).
        if (take == kContended && word_.exchange(kContended, std::memory_order_acquire) == kFree) break;
        return false;  // a thread that never slept consumed no wake-up: nothing to restore
      }
      if (wt.step(looks_free, c == kContended))
        continue;  // a round; after the budget InnoDB's one yield, then the OS wait
      // 1 -> 2 (announce a sleeper), or 0 -> 2 (it was freed: ours, marked contended).
      if (word_.exchange(kContended, std::memory_order_acquire) == kFree) break;
      bool slept;
      if constexpr (Deadline::kTimed) {
        const std::chrono::nanoseconds limit = d.park_limit();
        if (limit.count() <= 0) {
          wt.deadline_passed();
          return false;  // the word is 2 again, by us: the holder's unlock wakes
        }
        wt.sleeping();
        slept = futex_wait_for(word_, kContended, limit);
      } else {
        wt.sleeping();
        slept = futex_wait(word_, kContended);  // returns at once unless still 2
      }
      wt.next_episode(slept);
      take = kContended;  // others may sleep behind us: our unlock must wake
    }
    wt.entered();
    return true;
  }

 private:
  // Invariant: a thread parked on word_ (or about to) has set it to 2 since its last check, so
  // the unlock that frees it after that sees 2 and wakes someone. The thread woken takes that
  // duty over: it takes the lock as 2, or, if it leaves without it (a timed wait that expired),
  // sets 2 again first. The model tests/models/hybrid_mutex.pml checks this exhaustively.
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kContended = 2;

  SPINWISE_COLD void wake() noexcept { futex_wake_one(word_); }

  std::atomic<std::uint32_t> word_{kFree};
};

}  // namespace detail

// Lockable and TimedLockable, with a lock site on every call (detail/lock_shell.hpp).
template <class Policy, class Stats = no_stats>
using hybrid_mutex_t = detail::lock_shell<detail::hybrid_raw<Policy>, Stats>;

struct hybrid_mutex_tag;
// Knobs for every hybrid_mutex: hybrid_mutex::policy::set_spin_wait_delay(...) etc.
using hybrid_mutex = hybrid_mutex_t<time_policy<hybrid_mutex_tag>>;

static_assert(sizeof(hybrid_mutex) == 4, "hybrid_mutex is one futex word");
static_assert(sizeof(hybrid_mutex::with_stats<struct hybrid_mutex_tag>) == 4,
              "statistics live in per-thread shards, not in the lock");
static_assert(std::is_same_v<hybrid_mutex::with_stats<struct hybrid_mutex_tag>::policy, hybrid_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
