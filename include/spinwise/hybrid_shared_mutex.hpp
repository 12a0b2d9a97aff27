#pragma once
// hybrid_shared_mutex: a reader-writer lock that spins, yields once, then parks on a futex
// (SharedTimedLockable: the timed calls take a time point of any clock).
//
// Fairness is spin_shared_mutex's: a writer reserves the lock (no new reader enters) and then waits
// for the readers inside to leave, so readers cannot starve it; readers that find a writer
// inside or draining queue and enter by themselves once it leaves; a queued reader that spent
// its spin budget starts a readers' turn, and no writer reserves again until every queued reader
// has entered (or given up, if timed), so writers cannot starve readers either. The lock never hands itself
// to a waiting thread (which may be asleep or preempted): each one enters by itself when it runs. Writers
// among themselves race for the reservation (no FIFO).
//
// Waiting follows InnoDB: Policy rounds of randomized relax delays (time_policy by default:
// InnoDB's shape with the unit in nanoseconds, under this lock's knobs), one yield, then sleep in
// the kernel until a release wakes us; after each wake-up a fresh round of spinning. Parked
// threads cost nothing while the lock is held for long (I/O, a preempted holder), which is what a
// pure spin lock cannot offer.
//
// When not to use it: for a lock that is never contended, spin_shared_mutex is 8 bytes smaller and its
// release never checks for sleepers; for exclusive-only use, hybrid_mutex. Do not take the lock
// exclusively while holding it shared (the writer waits for itself). Cost: uncontended
// lock_shared/unlock_shared is one CAS and one fetch_sub; lock one CAS, unlock one CAS (a loop
// under contention); a release that finds sleepers adds one atomic add and one futex_wake
// syscall. Parked waiters are woken
// all at once (as InnoDB's os_event_set does): the queued readers all may enter, and of the
// writers one wins while the rest go back to sleep. 16 bytes.
//
// Lock word: detail/rw_word.hpp, with two flags of its own, plus two 32-bit futex sequence
// words (reader_seq_, writer_seq_):
//
//   bit   63 ... 44  43 ......... 24  23 ......... 4   3    2   1  0
//         unused     queued readers   readers inside   WP   RP  S  W
//
//   RP  a reader may be asleep on reader_seq_ (set by the sleeper, cleared by the waker)
//   WP  a writer may be asleep on writer_seq_
//
// Invariant, besides the word's: a queued reader sleeps only once S is set.
//
// States (W, r = readers inside, k = queued readers) and transitions:
//
//           lock_shared: r+1 (a queued reader: r+1, k-1)        lock: reserve      drained
//   (0,r,k) <---------------------------------------> (0,r,k)   (0,r,k) -------> (1,r,k) ----> (1,0,k)
//             unlock_shared: r-1                       (wakes WP when r reaches 0 under W)
//   (1,r,k)   --lock_shared: k+1 (queue)--> (1,r,k+1)
//   (.,.,k>0) --a queued reader's budget runs out--> S = 1 (then it yields once and sleeps)
//   (1,0,k,S)   --unlock--> (0,0,k,S)             wakes RP, and WP unless S; queued readers
//                                                 enter by themselves; with S no writer reserves
//   (W,r,1,S=1) --the last queued reader enters (W = 0) or gives up--> (W,r+1 or r,0,S=0)  wakes WP
//   (1,r,k)     --the draining writer times out--> (0,r,k)   wakes RP, and WP unless S
//
// Sleeping and waking: detail/futex_park.hpp's protocol (and its proof), with RP on reader_seq_
// for readers and WP on writer_seq_ for writers. A reader waits for "W clear", a writer for "W
// and S clear" and then, once it reserved, for "no reader inside"; the transitions marked
// "wakes" above are the wakers.
//
// Memory order: entering is an acquire RMW or load (for a draining writer, of "no reader
// inside") that pairs with the release RMW it observes.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex_park.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/rw_word.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/innodb_policy.hpp"  // the exact MySQL replay, selected by name
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// The algorithm (the shell, detail/lock_shell.hpp, makes it a lock). Timed calls wait as lock()
// does and withdraw at their deadline.
template <class Policy>
class hybrid_shared_raw : public raw_lock {
 public:
  using policy = Policy;

  // Racy snapshots: a writer inside (or reserved, draining the readers); a reader inside.
  bool is_locked() const noexcept { return word::writer_holds(state_.load(std::memory_order_relaxed)); }
  bool is_locked_shared() const noexcept {
    return word::readers_hold(state_.load(std::memory_order_relaxed));
  }

 protected:
  static constexpr bool kTimedWaits = true;
  static constexpr bool kTimedSharedWaits = true;

  // --- exclusive ----------------------------------------------------------------------------

  // acquire pairs with the release in release / release_shared.
  bool acquire_fast() noexcept {
    std::uint64_t s;
    return word::try_enter_writer(state_, s);
  }
  bool try_acquire() noexcept { return word::try_lock(state_); }

  void release() noexcept {
    // (W, RP): 1,x -> 0,0, and (WP): x -> 0 unless a readers' turn is on (sleeping writers could
    // not reserve yet; the reader that ends the turn wakes them). release pairs with the acquire
    // of whoever enters next; acquire orders the sleepers' parked-bit CAS before our wake (file top).
    std::uint64_t s = kWriter;  // guess: nobody waits; a failed CAS loads the real value
    while (
        !state_.compare_exchange_weak(s, released(s), std::memory_order_acq_rel, std::memory_order_relaxed)) {
    }
    wake_after_release(s);
  }

  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site) noexcept {
    park_episodes<Policy, Stats> wt(this, lock_mode::x, site);
    for (;;) {  // Reserve: wait for no writer inside or draining and no readers' turn, then take W;
                // no reader enters after.
      std::uint64_t s = state_.load(std::memory_order_relaxed);
      if (writer_may_reserve(s)) {
        // A deadline that has passed makes this a try_lock(): enter only if no reader is inside,
        // never reserve (a reservation would turn readers away and then be withdrawn, waking
        // everyone, for nothing).
        if (Deadline::kTimed && !drained(s) && d.expired()) return false;
        // (W): 0 -> 1; acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire,
                                         std::memory_order_relaxed))
          break;
        continue;
      }
      if (d.expired()) return false;
      if (!wt.pause(now(writer_may_reserve)))
        wt.next_episode(park(writer_seq_, kWritersParked, writer_may_reserve, d));
    }
    for (;;) {  // Drain: wait for the readers inside to leave.
      // acquire pairs with the release in the readers' unlock_shared.
      if (drained(state_.load(std::memory_order_acquire))) break;
      if (d.expired()) {
        if (!withdraw_reservation()) return false;
        break;
      }
      if (!wt.pause(now(drained))) wt.next_episode(park(writer_seq_, kWritersParked, drained, d));
    }
    wt.entered();
    return true;
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
    const std::uint64_t old = state_.fetch_sub(kReaderOne, std::memory_order_release);
    if (SPINWISE_UNLIKELY((old & (kReaderMask | kWriter | kWritersParked)) ==
                          (kReaderOne | kWriter | kWritersParked))) {
      wake_writers();  // the last reader left under a draining writer that may sleep
    }
  }

  // s: the word lock_shared()'s failed first attempt saw; a timed call starts from a fresh load.
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_shared_slow(const Deadline& d, lock_site site) noexcept {
    return acquire_shared_slow<Stats>(d, site, state_.load(std::memory_order_relaxed));
  }
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_shared_slow(const Deadline& d, lock_site site, std::uint64_t s) noexcept {
    park_episodes<Policy, Stats> wt(this, lock_mode::s, site);
    const auto entered = [&wt] {
      wt.entered();
      return true;
    };
    for (;;) {  // enter if no writer is inside or draining, else queue
      if (reader_may_enter(s)) {
        // (W, readers): 0,n -> 0,n+1; acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          return entered();
        }
        continue;
      }
      if (d.expired()) return false;
      // (queued): k -> k+1
      if (state_.compare_exchange_weak(s, s + kQueuedOne, std::memory_order_relaxed)) break;
    }
    for (;;) {
      s = state_.load(std::memory_order_relaxed);
      if (reader_may_enter(s)) {
        // W cleared: enter by ourselves, (readers, queued): n,k -> n+1,k-1 (S -> 0 with k = 1);
        // acquire pairs with the release in unlock.
        if (leave_queue(s, word::self_admitted(s))) return entered();
        continue;
      }
      if (d.expired()) return withdraw_reader() && entered();
      // Budget spent: (S): 0 -> 1, so that no writer reserves after this one until the queued
      // readers have entered; a reader sleeps only after this. Strong CAS: a test relies on S
      // being set once the budget is seen spent in a quiet word.
      if (!(s & kReadersTurn) && wt.w.is_completed()) {
        state_.compare_exchange_strong(s, s | kReadersTurn, std::memory_order_relaxed);
        continue;
      }
      if (!wt.pause(now(reader_may_enter)))
        wt.next_episode(park(reader_seq_, kReadersParked, reader_may_enter, d));
    }
  }

 private:
  using word = rw_word<4>;
  static constexpr std::uint64_t kWriter = word::kWriter;
  static constexpr std::uint64_t kReadersTurn = word::kReadersTurn;
  static constexpr std::uint64_t kReadersParked = 4;
  static constexpr std::uint64_t kWritersParked = 8;
  static constexpr std::uint64_t kReaderOne = word::kReaderOne;
  static constexpr std::uint64_t kQueuedOne = word::kQueuedOne;
  static constexpr std::uint64_t kReaderMask = word::kReaderMask;

  static constexpr bool writer_may_reserve(std::uint64_t s) noexcept { return word::writer_may_reserve(s); }
  static constexpr bool reader_may_enter(std::uint64_t s) noexcept { return word::reader_may_enter(s); }
  static constexpr bool drained(std::uint64_t s) noexcept { return word::drained(s); }

  // The word after a writer gives W up: readers may enter (RP cleared: they are woken); writers
  // may reserve unless a readers' turn is on (WP cleared and woken only then).
  static constexpr std::uint64_t released(std::uint64_t s) noexcept {
    return s & ~(kWriter | kReadersParked | ((s & kReadersTurn) ? 0 : kWritersParked));
  }

  // Step b of the wake protocol for a release of `old` (the word before it).
  void wake_after_release(std::uint64_t old) noexcept {
    if (old & kReadersParked) wake(reader_seq_);
    if ((old & (kWritersParked | kReadersTurn)) == kWritersParked) wake(writer_seq_);
  }

  static void wake(std::atomic<std::uint32_t>& seq) noexcept { wake_sleepers(seq); }

  SPINWISE_COLD void wake_writers() noexcept {
    // (WP): 1 -> 0; acquire: see the file top.
    if (state_.fetch_and(~kWritersParked, std::memory_order_acq_rel) & kWritersParked) wake(writer_seq_);
  }

  // "ready(word) holds now", for a spin round to end early on where the policy hands off promptly.
  template <class Ready>
  auto now(Ready ready) const noexcept {
    return [this, ready] { return ready(state_.load(std::memory_order_relaxed)); };
  }

  // Sleeps until ready(word) may hold (detail/futex_park.hpp); true if it slept.
  template <class Ready, class Deadline>
  bool park(std::atomic<std::uint32_t>& seq, std::uint64_t parked_bit, Ready ready,
            const Deadline& d) noexcept {
    return detail::park(state_, seq, parked_bit, ready, d);
  }

  // A draining writer's deadline passed. Keeps the lock if the readers have left after all;
  // otherwise gives W up. The queued readers enter by themselves, so the sleeping ones are woken.
  SPINWISE_COLD bool withdraw_reservation() noexcept {
    std::uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if (drained(s)) return true;  // acquire pairs with the readers' unlock_shared
      // As unlock; acq_rel: release for the readers that enter, acquire for the sleep protocol.
      if (state_.compare_exchange_weak(s, released(s), std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        break;
      }
    }
    wake_after_release(s);
    return false;
  }

  // A queued reader leaves the queue (CAS from `s` to `next`, acquire). When that ends a readers'
  // turn, writers that sleep until it ends are woken: (WP): 1 -> 0 in the same CAS.
  bool leave_queue(std::uint64_t& s, std::uint64_t next) noexcept {
    const bool ends_turn = (s & kReadersTurn) != 0 && (next & kReadersTurn) == 0;
    if (ends_turn) next &= ~kWritersParked;
    if (!state_.compare_exchange_weak(s, next,
                                      ends_turn ? std::memory_order_acq_rel : std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return false;
    }
    if (ends_turn && (s & kWritersParked)) wake(writer_seq_);
    return true;
  }

  // A queued reader's deadline passed. W may have cleared meanwhile: then it enters after all.
  SPINWISE_COLD bool withdraw_reader() noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if (reader_may_enter(s)) {
        if (leave_queue(s, word::self_admitted(s))) return true;
        continue;
      }
      // (queued): k -> k-1, and S -> 0 with k = 1 (the turn ends with the last queued reader)
      if (leave_queue(s, word::dequeued(s))) return false;
    }
  }

  std::atomic<std::uint64_t> state_{0};
  std::atomic<std::uint32_t> reader_seq_{0};
  std::atomic<std::uint32_t> writer_seq_{0};
};

}  // namespace detail

template <class Policy, class Stats = no_stats>
using hybrid_shared_mutex_t = detail::shared_lock_shell<detail::hybrid_shared_raw<Policy>, Stats>;

struct hybrid_shared_mutex_tag;

// time_policy under this lock's own knobs: InnoDB's shape and defaults (spin_wait_delay 6,
// spin_loops 30) with the unit in time, 200 ns, so a wait spins ~15 us before it parks on every
// CPU instead of 14x longer on Skylake. hybrid_shared_mutex_t<innodb_policy<hybrid_shared_mutex_tag>>
// replays MySQL's instruction counts exactly, for an engine migrating from InnoDB's settings.
using hybrid_shared_mutex = hybrid_shared_mutex_t<time_policy<hybrid_shared_mutex_tag>>;

static_assert(sizeof(hybrid_shared_mutex) == 16, "hybrid_shared_mutex: a 64-bit word and two futex words");
static_assert(sizeof(hybrid_shared_mutex::with_stats<struct hybrid_shared_mutex_tag>) == 16,
              "statistics live outside the lock");
static_assert(sizeof(hybrid_shared_mutex_t<innodb_policy<hybrid_shared_mutex_tag>>) == 16,
              "the policy is static: the InnoDB replay is the same lock");
static_assert(std::is_same_v<hybrid_shared_mutex::with_stats<struct hybrid_shared_mutex_tag>::policy,
                             hybrid_shared_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");
static_assert(std::is_nothrow_default_constructible_v<hybrid_shared_mutex>);

}  // namespace spinwise
