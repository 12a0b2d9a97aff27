#pragma once
// spin_shared_mutex: a writer-preferring spin reader-writer lock in one 64-bit word
// (SharedTimedLockable). Called rw_spinlock before 0.2.0; that name stays as an alias (rw_spinlock.hpp).
//
// Readers share, writers exclude everyone. A writer first reserves the lock (the W bit: no new
// reader enters from then on) and then waits for the readers inside to leave, as InnoDB's X
// request does: a stream of readers cannot starve a writer. Readers that find W set queue; they
// enter by themselves once W clears. A writer that releases and comes straight back could keep
// W set nearly all the time, so a queued reader whose spin budget runs out marks the lock
// "readers' turn" (S): from then on no writer may reserve until every reader queued has entered
// (the last of them clears S). So:
//   - a writer waits for the writer inside (if any), then for the queued readers of a readers'
//     turn to enter, then for the readers inside when it reserves;
//   - a queued reader waits at most its spin budget plus two writers' critical sections and
//     drains (and CAS retries).
// The lock never hands itself to a waiting thread: every reader enters by itself, when it runs.
// An earlier version had the releasing writer admit all queued readers in its own step (a
// grant), which kept every other reader out until all the granted ones, most of them not
// running when threads outnumber CPUs, had been scheduled and left; at 99% reads with threads
// outnumbering CPUs its throughput fell far below std::shared_mutex's
// (bench/results/full-runs/README.md, the model 207 run). Now, while the queued
// readers of a turn get scheduled, only writers wait: W stays clear and other readers enter. Writers among
// themselves are unordered (TTAS).
//
// Waiting spins through the Policy (rounds of randomized relax delays), then yields between
// polls for as long as it waits: progress when threads outnumber CPUs, without parking.
//
// When not to use it: critical sections that block, allocate or run long (use
// hybrid_shared_mutex, which parks); read-mostly data whose readers are so many that the shared
// counter's cache line is the bottleneck (a seqlock or a sharded lock scales, this does not).
// Do not take the lock exclusively while holding it shared (the writer waits for itself).
// Cost: lock_shared and unlock_shared are one locked RMW each on the same line (CAS, fetch_sub);
// lock is one CAS and unlock one fetch_sub, uncontended. 8 bytes.
//
// Lock word: detail/rw_word.hpp (W, S, readers inside, queued readers; no flags of its own).
//
// States (W, r = readers inside, k = queued readers, S) and transitions:
//
//           lock_shared: r+1 (a queued reader: r+1, k-1)        lock: reserve      drained
//   (0,r,k) <---------------------------------------> (0,r,k)   (0,r,k) -------> (1,r,k) ----> (1,0,k)
//             unlock_shared: r-1                                                                |
//   (1,r,k)   --lock_shared: k+1 (queue)--> (1,r,k+1)                                         |
//   (.,.,k>0) --a queued reader's budget runs out--> S = 1                                     |
//   (1,0,k,S) <------------------------------------------------------------------------------+
//       | unlock: (0,0,k,S): the queued readers enter by themselves, (r, k): +1, -1 each;
//       | with S = 0 a writer may reserve first; with S = 1 none may until k = 0, which clears S
//
// Memory order: every acquisition is an acquire RMW or load that pairs with the release RMW it
// observes; every release is a release RMW.

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/rw_word.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// The algorithm (the shell, detail/lock_shell.hpp, makes it a lock). A timed call neither
// reserves nor queues: it polls try_lock / try_lock_shared (lock_shell.hpp's poll_until).
template <class Policy>
class spin_shared_raw : public raw_lock {
 public:
  using policy = Policy;

  // Racy snapshots: a writer inside (or reserved, draining the readers); a reader inside.
  bool is_locked() const noexcept { return word::writer_holds(state_.load(std::memory_order_relaxed)); }
  bool is_locked_shared() const noexcept {
    return word::readers_hold(state_.load(std::memory_order_relaxed));
  }

 protected:
  // --- exclusive ----------------------------------------------------------------------------

  // acquire pairs with the release in release / release_shared.
  first_try<std::uint64_t> acquire_fast() noexcept {
    std::uint64_t s;
    const bool ok = word::try_enter_writer(state_, s);
    return {ok, s};
  }
  bool try_acquire() noexcept { return word::try_lock(state_); }

  void release() noexcept {
    // (W): 1 -> 0; release pairs with the acquire of the next writer's or reader's CAS.
    state_.fetch_sub(kWriter, std::memory_order_release);
  }

  // --- shared -------------------------------------------------------------------------------

  // acquire pairs with the release in release().
  first_try<std::uint64_t> acquire_shared_fast() noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    const bool ok = word::try_enter_reader(state_, s);
    return {ok, s};
  }
  // Fails while a writer is inside or draining the readers (writer preference), never
  // spuriously otherwise.
  bool try_acquire_shared() noexcept { return word::try_lock_shared(state_); }

  void release_shared() noexcept {
    // (readers): n -> n-1; release pairs with the acquire of the writer that drains them.
    state_.fetch_sub(kReaderOne, std::memory_order_release);
  }

  // s: the word the failed first attempt saw (lock_shell.hpp's first_try), here and below.
  template <class Stats>
  SPINWISE_COLD bool acquire_slow(no_deadline, lock_site site, std::uint64_t s) noexcept {
    spin_then_yield<Policy, Stats> wt(this, lock_mode::x, site);
    // Reserve: wait for no writer inside or draining and no readers' turn, then (W): 0 -> 1.
    // From here no reader enters. acquire pairs with the release in unlock.
    for (;;) {
      if (word::writer_may_reserve(s)) {
        if (state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire,
                                         std::memory_order_relaxed))
          break;
        continue;
      }
      wt.pause([this] { return word::writer_may_reserve(state_.load(std::memory_order_relaxed)); });
      s = state_.load(std::memory_order_relaxed);
    }
    // Drain: wait for the readers inside to leave; acquire pairs with their unlock_shared.
    while (!word::drained(s)) {
      wt.pause([this] { return word::drained(state_.load(std::memory_order_relaxed)); });
      s = state_.load(std::memory_order_acquire);
    }
    wt.entered();
    return true;
  }

  template <class Stats>
  SPINWISE_COLD bool acquire_shared_slow(no_deadline, lock_site site, std::uint64_t s) noexcept {
    spin_then_yield<Policy, Stats> wt(this, lock_mode::s, site);
    // Enter if no writer is inside or draining; otherwise queue.
    for (;;) {
      if (word::reader_may_enter(s)) {
        // (W, readers): 0,n -> 0,n+1; acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          wt.entered();
          return true;
        }
        continue;
      }
      // (queued): k -> k+1
      if (state_.compare_exchange_weak(s, s + kQueuedOne, std::memory_order_relaxed)) break;
    }
    for (;;) {
      s = state_.load(std::memory_order_relaxed);
      if (word::reader_may_enter(s)) {
        // W cleared: enter by ourselves, (readers, queued): n,k -> n+1,k-1 (S -> 0 with k = 1);
        // acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, word::self_admitted(s), std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          wt.entered();
          return true;
        }
        continue;
      }
      // Budget spent: (S): 0 -> 1, so that no writer reserves after this one until the queued
      // readers have entered. Strong CAS: a test relies on S being set once the budget is seen
      // spent in a quiet word.
      if (!(s & kReadersTurn) && wt.w.is_completed()) {
        state_.compare_exchange_strong(s, s | kReadersTurn, std::memory_order_relaxed);
        continue;
      }
      wt.pause([this] { return word::reader_may_enter(state_.load(std::memory_order_relaxed)); });
    }
  }

 private:
  using word = rw_word<2>;
  static constexpr std::uint64_t kWriter = word::kWriter;
  static constexpr std::uint64_t kReadersTurn = word::kReadersTurn;
  static constexpr std::uint64_t kReaderOne = word::kReaderOne;
  static constexpr std::uint64_t kQueuedOne = word::kQueuedOne;

  std::atomic<std::uint64_t> state_{0};
};

}  // namespace detail

template <class Policy, class Stats = no_stats>
using spin_shared_mutex_t = detail::shared_lock_shell<detail::spin_shared_raw<Policy>, Stats>;

struct spin_shared_mutex_tag;

// The default policy is time_policy: InnoDB's randomized rounds with the unit in nanoseconds, so
// the spin budget (and with it how long a reader waits before it asks for its turn) is the same
// time on every CPU, under spin_shared_mutex's own knobs.
using spin_shared_mutex = spin_shared_mutex_t<time_policy<spin_shared_mutex_tag>>;

static_assert(sizeof(spin_shared_mutex) == 8, "spin_shared_mutex is one 64-bit word");
static_assert(sizeof(spin_shared_mutex::with_stats<struct spin_shared_mutex_tag>) == 8,
              "statistics live outside the lock");
static_assert(std::is_nothrow_default_constructible_v<spin_shared_mutex>);
static_assert(std::is_same_v<spin_shared_mutex::with_stats<struct spin_shared_mutex_tag>::policy,
                             spin_shared_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
