#pragma once
// The reader/writer protocol of spin_shared_mutex and hybrid_shared_mutex, written once over how a
// waiter waits once its fast attempt failed (the Wait: spin then yield, or spin then park). The
// word is detail/rw_word.hpp's; each lock's header says how its waiters wait and what that costs.
//
// Readers share, writers exclude everyone. A writer first reserves the lock (the W bit: no new
// reader enters from then on) and then waits for the readers inside to leave, as InnoDB's X
// request does: a stream of readers cannot starve a writer. Readers that find W set queue; they
// enter by themselves once W clears. A writer that releases and comes straight back could keep
// W set nearly all the time, so a queued reader whose spin budget runs out marks the lock
// "readers' turn" (S): from then on no writer may reserve until every reader queued has entered
// or, if timed, given up (the last of them clears S). So:
//   - a writer waits for the writer inside (if any), then for the queued readers of a readers'
//     turn to enter, then for the readers inside when it reserves;
//   - a queued reader waits at most its spin budget plus two writers' critical sections and
//     drains (and CAS retries), plus the time its wait takes to notice (a yield, or a wake-up).
// The lock never hands itself to a waiting thread: every reader enters by itself, when it runs.
// An earlier version had the releasing writer admit all queued readers in its own step (a
// grant), which kept every other reader out until all the granted ones, most of them not
// running when threads outnumber CPUs, had been scheduled and left; at 99% reads with threads
// outnumbering CPUs its throughput fell far below std::shared_mutex's
// (bench/results/full-runs/README.md, the model 207 run). Now, while the queued readers of a turn
// get scheduled, only writers wait: W stays clear and other readers enter. Writers among
// themselves are unordered (TTAS).
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
//   with a Wait that can give up (kTimed):
//   (W,r,1,S=1) --the last queued reader gives up--> (W,r,0,S=0)
//   (1,r,k)     --the draining writer's deadline passes--> (0,r,k)
//
// The SPIN models tests/models/spin_shared_mutex.pml and hybrid_shared_mutex.pml check this
// protocol with each Wait (docs/model-checking.md).
//
// Memory order: every acquisition is an acquire RMW or load (for a draining writer, of "no
// reader inside") that pairs with the release RMW it observes; every release is a release RMW.
//
// A Wait provides (a protected base of the raw lock; its members public to it):
//   word, kTimed, waiter                 from its base rw_wait_kind (below)
//   std::atomic<std::uint64_t> state_    the word (its first member: the lock's address is the word's)
//   void release(), void release_shared()                  the releases, fast paths
//   bool leave_queue(std::uint64_t& s, std::uint64_t next) a queued reader's CAS from s to next
//                                        (acquire), failing as compare_exchange_weak does
//   void pause(waiter&, rw_role, Ready ready, const Deadline&)
//                                        one step of a wait for ready(word): a round, a yield,
//                                        or a sleep until a waker may have made it true
//   with kTimed: std::uint64_t released(s) (the word after a writer gives W up) and
//                void wake_after_release(old) (the wake that goes with it)

#include <atomic>
#include <cstdint>

#include "spinwise/config.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/rw_word.hpp"
#include "spinwise/detail/wait_core.hpp"

namespace spinwise::detail {

// Whom a wait is for: a Wait that sleeps keeps readers and writers apart.
enum class rw_role { reader, writer };

// What kind a Wait is, its base: the word with kFlagBits low bits (W, S and the Wait's own
// flags); kTimed, whether its slow paths can give up at a deadline (without it the timed calls
// poll: lock_shell.hpp's poll_until); and the wait core's waiter it waits with
// (spin_then_yield or park_episodes).
template <unsigned kFlagBits, bool kCanGiveUp, template <class, class> class Waiter>
struct rw_wait_kind {
  using word = rw_word<kFlagBits>;
  static constexpr bool kTimed = kCanGiveUp;
  template <class Policy, class Stats>
  using waiter = Waiter<Policy, Stats>;
};

// The algorithm over its Wait (the shell, detail/lock_shell.hpp, makes it a lock).
template <class Policy, class Wait>
class rw_raw : public raw_lock, protected Wait {
 public:
  using policy = Policy;

  // Racy snapshots: a writer inside (or reserved, draining the readers); a reader inside.
  bool is_locked() const noexcept { return word::writer_holds(this->state_.load(std::memory_order_relaxed)); }
  bool is_locked_shared() const noexcept {
    return word::readers_hold(this->state_.load(std::memory_order_relaxed));
  }

 protected:
  static constexpr bool kTimedWaits = Wait::kTimed;
  static constexpr bool kTimedSharedWaits = Wait::kTimed;

  // --- exclusive ----------------------------------------------------------------------------

  // acquire pairs with the release in release / release_shared.
  first_try<std::uint64_t> acquire_fast() noexcept {
    std::uint64_t s;
    const bool ok = word::try_enter_writer(this->state_, s);
    return {ok, s};
  }
  bool try_acquire() noexcept { return word::try_lock(this->state_); }

  // s: the word the failed first attempt saw (lock_shell.hpp's first_try), here and below; a
  // timed call starts from a fresh load.
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site) noexcept {
    return acquire_slow<Stats>(d, site, this->state_.load(std::memory_order_relaxed));
  }
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site, std::uint64_t s) noexcept {
    waiter<Stats> wt(this, lock_mode::x, site);
    // Reserve: wait for no writer inside or draining and no readers' turn, then (W): 0 -> 1.
    // From here no reader enters. acquire pairs with the release in unlock.
    for (;;) {
      if (word::writer_may_reserve(s)) {
        // A deadline that has passed makes this a try_lock(): enter only if no reader is inside,
        // never reserve (a reservation would turn readers away and then be withdrawn, waking
        // everyone, for nothing).
        if (Deadline::kTimed && !word::drained(s) && d.expired()) return false;
        if (this->state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire,
                                               std::memory_order_relaxed))
          break;
        continue;
      }
      if (d.expired()) return false;
      this->pause(wt, rw_role::writer, may_reserve{}, d);
      s = this->state_.load(std::memory_order_relaxed);
    }
    // Drain: wait for the readers inside to leave; acquire pairs with their unlock_shared.
    while (!word::drained(s)) {
      if constexpr (Deadline::kTimed) {
        if (d.expired()) {
          if (!withdraw_reservation()) return false;
          break;
        }
      }
      this->pause(wt, rw_role::writer, drained{}, d);
      s = this->state_.load(std::memory_order_acquire);
    }
    wt.entered();
    return true;
  }

  // --- shared -------------------------------------------------------------------------------

  // acquire pairs with the release in release().
  first_try<std::uint64_t> acquire_shared_fast() noexcept {
    std::uint64_t s = this->state_.load(std::memory_order_relaxed);
    const bool ok = word::try_enter_reader(this->state_, s);
    return {ok, s};
  }
  // Fails while a writer is inside or draining the readers (writer preference), never
  // spuriously otherwise.
  bool try_acquire_shared() noexcept { return word::try_lock_shared(this->state_); }

  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_shared_slow(const Deadline& d, lock_site site) noexcept {
    return acquire_shared_slow<Stats>(d, site, this->state_.load(std::memory_order_relaxed));
  }
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_shared_slow(const Deadline& d, lock_site site, std::uint64_t s) noexcept {
    waiter<Stats> wt(this, lock_mode::s, site);
    const auto entered = [&wt] {
      wt.entered();
      return true;
    };
    for (;;) {  // enter if no writer is inside or draining, else queue
      if (word::reader_may_enter(s)) {
        // (W, readers): 0,n -> 0,n+1; acquire pairs with the release in unlock.
        if (this->state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                               std::memory_order_relaxed))
          return entered();
        continue;
      }
      if (d.expired()) return false;
      // (queued): k -> k+1
      if (this->state_.compare_exchange_weak(s, s + kQueuedOne, std::memory_order_relaxed)) break;
    }
    for (;;) {
      s = this->state_.load(std::memory_order_relaxed);
      if (word::reader_may_enter(s)) {
        // W cleared: enter by ourselves, (readers, queued): n,k -> n+1,k-1 (S -> 0 with k = 1);
        // acquire pairs with the release in unlock.
        if (this->leave_queue(s, word::self_admitted(s))) return entered();
        continue;
      }
      if constexpr (Deadline::kTimed) {
        if (d.expired()) return withdraw_reader() && entered();
      }
      // Budget spent: (S): 0 -> 1, so that no writer reserves after this one until the queued
      // readers have entered (a Wait that sleeps lets a reader sleep only after this). Strong
      // CAS: a test relies on S being set once the budget is seen spent in a quiet word.
      if (!(s & kReadersTurn) && wt.w.is_completed()) {
        this->state_.compare_exchange_strong(s, s | kReadersTurn, std::memory_order_relaxed);
        continue;
      }
      this->pause(wt, rw_role::reader, may_enter{}, d);
    }
  }

 private:
  using word = typename Wait::word;
  template <class Stats>
  using waiter = typename Wait::template waiter<Policy, Stats>;
  static constexpr std::uint64_t kWriter = word::kWriter;
  static constexpr std::uint64_t kReadersTurn = word::kReadersTurn;
  static constexpr std::uint64_t kReaderOne = word::kReaderOne;
  static constexpr std::uint64_t kQueuedOne = word::kQueuedOne;

  // What the waits wait for, as types: each pause inlines its own test of the word.
  struct may_reserve {
    constexpr bool operator()(std::uint64_t s) const noexcept { return word::writer_may_reserve(s); }
  };
  struct drained {
    constexpr bool operator()(std::uint64_t s) const noexcept { return word::drained(s); }
  };
  struct may_enter {
    constexpr bool operator()(std::uint64_t s) const noexcept { return word::reader_may_enter(s); }
  };

  // A draining writer's deadline passed. Keeps the lock if the readers have left after all;
  // otherwise gives W up as unlock does (the queued readers enter by themselves).
  SPINWISE_COLD bool withdraw_reservation() noexcept {
    std::uint64_t s = this->state_.load(std::memory_order_acquire);
    for (;;) {
      if (word::drained(s)) return true;  // acquire pairs with the readers' unlock_shared
      // acq_rel: release for the readers that enter, acquire for a Wait's sleep protocol.
      if (this->state_.compare_exchange_weak(s, Wait::released(s), std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
        break;
      }
    }
    this->wake_after_release(s);
    return false;
  }

  // A queued reader's deadline passed. W may have cleared meanwhile: then it enters after all.
  SPINWISE_COLD bool withdraw_reader() noexcept {
    std::uint64_t s = this->state_.load(std::memory_order_relaxed);
    for (;;) {
      if (word::reader_may_enter(s)) {
        if (this->leave_queue(s, word::self_admitted(s))) return true;
        continue;
      }
      // (queued): k -> k-1, and S -> 0 with k = 1 (the turn ends with the last queued reader)
      if (this->leave_queue(s, word::dequeued(s))) return false;
    }
  }
};

}  // namespace spinwise::detail
