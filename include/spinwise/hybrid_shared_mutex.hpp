#pragma once
// hybrid_shared_mutex: a reader-writer lock that spins, yields once, then parks on a futex
// (SharedTimedLockable: the timed calls take a time point of any clock).
//
// The reader/writer protocol is spin_shared_mutex's, written once in detail/rw_protocol.hpp (with
// its state diagram): a writer reserves the lock (no new reader enters) and then waits for the
// readers inside to leave, so readers cannot starve it; a queued reader that spent its spin budget
// starts a readers' turn, and no writer reserves again until every queued reader has entered (or
// given up, if timed), so writers cannot starve readers either. The lock never hands itself to a
// waiting thread (which may be asleep or preempted). This lock is that protocol with the wait
// below, which sleeps, and so its waits can give up at a deadline.
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
// What a sleeper waits for, and who wakes it (the protocol's transitions, rw_protocol.hpp):
//   a reader sleeps (on RP) for W clear, only once S is set: woken by unlock, and by a draining
//     writer that withdraws at its deadline;
//   a writer sleeps (on WP) for W and S clear: woken by unlock and a withdrawn reservation unless
//     S is set, and by the queued reader whose entering (or giving up) ends the readers' turn;
//     and once it reserved, for no reader inside: woken by the unlock_shared that leaves none.
//
// Sleeping and waking: detail/futex_park.hpp's protocol (and its proof), with RP on reader_seq_
// for readers and WP on writer_seq_ for writers; the wakers above clear the bit in their RMW
// (acq_rel: the acquire orders a sleeper's parked-bit CAS before the wake).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex_park.hpp"
#include "spinwise/detail/rw_protocol.hpp"
#include "spinwise/innodb_policy.hpp"  // the exact MySQL replay, selected by name
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// How a hybrid_shared_mutex waiter waits (detail/rw_protocol.hpp's Wait): park_episodes, Policy
// rounds, one yield, then a sleep on the waiter's own futex word (readers on reader_seq_ and RP,
// writers on writer_seq_ and WP) until a release may have let it in; a fresh round after each
// wake-up. Its waits can give up at a deadline, so the timed calls wait as lock() does.
struct rw_park_wait : rw_wait_kind<4, true, park_episodes> {
  std::atomic<std::uint64_t> state_{0};
  std::atomic<std::uint32_t> reader_seq_{0};
  std::atomic<std::uint32_t> writer_seq_{0};

  static constexpr std::uint64_t kReadersParked = 4;
  static constexpr std::uint64_t kWritersParked = 8;

  void release() noexcept {
    // (W, RP): 1,x -> 0,0, and (WP): x -> 0 unless a readers' turn is on (sleeping writers could
    // not reserve yet; the reader that ends the turn wakes them). release pairs with the acquire
    // of whoever enters next; acquire orders the sleepers' parked-bit CAS before our wake (file top).
    std::uint64_t s = word::kWriter;  // guess: nobody waits; a failed CAS loads the real value
    while (
        !state_.compare_exchange_weak(s, released(s), std::memory_order_acq_rel, std::memory_order_relaxed)) {
    }
    wake_after_release(s);
  }

  void release_shared() noexcept {
    // (readers): n -> n-1; release pairs with the acquire of the writer that drains them.
    const std::uint64_t old = state_.fetch_sub(word::kReaderOne, std::memory_order_release);
    if (SPINWISE_UNLIKELY((old & (word::kReaderMask | word::kWriter | kWritersParked)) ==
                          (word::kReaderOne | word::kWriter | kWritersParked))) {
      wake_writers();  // the last reader left under a draining writer that may sleep
    }
  }

  // The word after a writer gives W up: readers may enter (RP cleared: they are woken); writers
  // may reserve unless a readers' turn is on (WP cleared and woken only then).
  static constexpr std::uint64_t released(std::uint64_t s) noexcept {
    return s & ~(word::kWriter | kReadersParked | ((s & word::kReadersTurn) ? 0 : kWritersParked));
  }

  // Step b of the wake protocol for a release of `old` (the word before it).
  void wake_after_release(std::uint64_t old) noexcept {
    if (old & kReadersParked) wake_sleepers(reader_seq_);
    if ((old & (kWritersParked | word::kReadersTurn)) == kWritersParked) wake_sleepers(writer_seq_);
  }

  // A queued reader leaves the queue (CAS from `s` to `next`, acquire). When that ends a readers'
  // turn, writers that sleep until it ends are woken: (WP): 1 -> 0 in the same CAS.
  bool leave_queue(std::uint64_t& s, std::uint64_t next) noexcept {
    const bool ends_turn = (s & word::kReadersTurn) != 0 && (next & word::kReadersTurn) == 0;
    if (ends_turn) next &= ~kWritersParked;
    if (!state_.compare_exchange_weak(s, next,
                                      ends_turn ? std::memory_order_acq_rel : std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      return false;
    }
    if (ends_turn && (s & kWritersParked)) wake_sleepers(writer_seq_);
    return true;
  }

  // A round while the budget lasts (ended early once ready(word) holds, where the policy hands
  // off promptly), the episode's yield, and then a sleep until ready(word) may hold
  // (detail/futex_park.hpp) and a fresh episode.
  template <class Waiter, class Ready, class Deadline>
  void pause(Waiter& wt, rw_role who, Ready ready, const Deadline& d) noexcept {
    if (wt.pause([this, ready] { return ready(state_.load(std::memory_order_relaxed)); })) return;
    wt.next_episode(who == rw_role::reader ? park(state_, reader_seq_, kReadersParked, ready, d)
                                           : park(state_, writer_seq_, kWritersParked, ready, d));
  }

  SPINWISE_COLD void wake_writers() noexcept {
    // (WP): 1 -> 0; acquire: see the file top.
    if (state_.fetch_and(~kWritersParked, std::memory_order_acq_rel) & kWritersParked)
      wake_sleepers(writer_seq_);
  }
};

}  // namespace detail

template <class Policy, class Stats = no_stats>
using hybrid_shared_mutex_t = detail::shared_lock_shell<detail::rw_raw<Policy, detail::rw_park_wait>, Stats>;

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
