#pragma once
// hybrid_shared_mutex: a reader-writer lock that spins, yields once, then parks on a futex
// (SharedTimedLockable: the timed calls take a time point of any clock).
//
// Fairness is rw_spinlock's: a waiting writer closes the door to new readers, and a writer's
// release admits every reader queued behind it (in one step) before the next writer can enter.
// Readers therefore never starve behind a stream of writers, nor writers behind a stream of
// readers. Writers among themselves race for the free lock (no FIFO).
//
// Waiting follows InnoDB: Policy rounds of randomized relax delays (InnoDB's own policy by
// default, under this lock's knobs), one yield, then sleep in the kernel until a release wakes
// us; after each wake-up a fresh round of spinning. Parked threads cost nothing while the lock
// is held for long (I/O, a preempted holder), which is what a pure spin lock cannot offer.
//
// When not to use it: for a lock that is never contended, rw_spinlock is 8 bytes smaller and its
// release never checks for sleepers; for exclusive-only use, hybrid_mutex. Cost: uncontended
// lock_shared/unlock_shared is one CAS and one fetch_sub; lock/unlock one CAS each; a release
// that finds sleepers adds one atomic add and one futex_wake syscall. Parked waiters are woken
// all at once (as InnoDB's os_event_set does): the readers of a grant all need to run, and of
// the writers one wins while the rest go back to sleep. 16 bytes.
//
// Lock word (64 bits) plus two 32-bit futex sequence words (reader_seq_, writer_seq_):
//
//   bit   63.......44 43.......24 23.......4  3   2   1  0
//         pending      waiting     readers    WP  RP  G  W
//         writers      readers     inside
//
//   W, G, readers inside, waiting readers, pending writers: as in rw_spinlock.hpp.
//   RP  a reader may be asleep on reader_seq_ (set by the sleeper, cleared by the waker)
//   WP  a writer may be asleep on writer_seq_
//
// Invariant: W => readers inside == 0. A queued reader is admitted either by a grant (G flips)
// or, once no writer is inside or pending (the last pending writer timed out), by itself.
// At most 2^20 - 1 threads may use one lock at a time.
//
// States and transitions (W, r = readers inside, k = waiting readers, p = pending writers):
//
//              lock_shared, p == 0                      lock, r == 0
//   (0,r,0,0) ---------------------> (0,r+1,0,0)   (0,0,k,p) ----------> (1,0,k,p or p-1)
//       |  lock, r > 0: p+1                             ^                     |
//       v                                               | last unlock_shared  | unlock: r = k, k = 0,
//   (0,r,k,p>0) <-- lock_shared: k+1 (door closed)      | (wakes WP)          | G ^= (k > 0)
//       |                                               |                     v (wakes RP if k > 0,
//       | last pending writer times out with W == 0: p = 0, wakes RP;       WP if k == 0)
//       v the queued readers enter by themselves: (r, k) -> (r+1, k-1)
//
// Sleeping and waking, and why no wake-up is lost. A sleeper of kind X (reader: RP on
// reader_seq_; writer: WP on writer_seq_) does, in order:
//   1. e = seq.load(acquire)
//   2. read the word; if its condition holds, do not sleep. Else if X's parked bit is clear, CAS
//      it in (acq_rel); a failed CAS goes back to the start of 2.
//   3. futex_wait(seq, e): the kernel sleeps only while seq == e.
// A waker is whoever makes the condition of an X true (the transitions marked "wakes" above):
//   a. in the same RMW that changes the state, or in a later RMW, clears X's parked bit (acq_rel);
//   b. if the bit was set: seq.fetch_add(1, release), then futex_wake_all(seq).
// Take the sleeper's last read of the word in 2 (value V: condition false, parked bit set).
// The condition can only become true by a later RMW, whose waker finds the parked bit set and
// wakes, unless some RMW between V and it cleared the bit, and that clearer bumps seq and wakes.
// Either way a bump B follows V in the word's order. If the sleeper's read of seq in 1 saw B,
// the release/acquire pair would make the clear visible to the read in 2 (message passing):
// it would not have read V. So e predates B, and futex_wait either returns at once (seq != e)
// or sleeps and is woken by B's futex_wake_all. A timed-out sleeper just leaves: wake-ups go to
// all sleepers, so none is consumed by a thread that then gives up.
//
// Memory order: entering is an acquire RMW (or, for a granted reader, an acquire load of the
// flipped G) that pairs with the release RMW of the unlock it follows.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/futex.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/innodb_policy.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise {

// Names hybrid_shared_mutex's own knobs: hybrid_shared_mutex::policy::set_spin_wait_delay(...).
struct hybrid_shared_mutex_tag;

template <class Policy>
class SPINWISE_CAPABILITY("mutex") hybrid_shared_mutex_t {
 public:
  using policy = Policy;

  constexpr hybrid_shared_mutex_t() noexcept = default;
  hybrid_shared_mutex_t(const hybrid_shared_mutex_t&) = delete;
  hybrid_shared_mutex_t& operator=(const hybrid_shared_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~hybrid_shared_mutex_t() { detail::tsan::destroy(this); }  // a lock reusing this address is a new mutex
#endif

  // --- exclusive ----------------------------------------------------------------------------

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    if (SPINWISE_UNLIKELY(!try_enter_writer())) lock_slow(no_deadline{});
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    bool ok = false;
    while (writer_may_enter(s)) {
      // (W, readers): 0,0 -> 1,0; acquire pairs with the release in unlock / unlock_shared.
      if (state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed)) {
        ok = true;
        break;
      }
    }
    detail::tsan::post_lock(this, try_flags(0, ok));
    return ok;
  }

  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(const std::chrono::duration<Rep, Period>& rel) noexcept
      SPINWISE_TRY_ACQUIRE(true) {
    return try_lock_until(deadline_after(rel));
  }

  // A clock that throws from now() terminates the program (these calls are noexcept).
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(const std::chrono::time_point<Clock, Duration>& at) noexcept
      SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    const bool ok = try_enter_writer() || lock_slow(clock_deadline<Clock, Duration>{at});
    detail::tsan::post_lock(this, try_flags(0, ok));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    detail::tsan::pre_unlock(this, 0);
    std::uint64_t s = kWriter;  // guess: nobody waits, G = 0; a failed CAS loads the real value
    std::uint64_t next;
    for (;;) {
      const std::uint64_t k = (s & kWaitingMask) >> kWaitingShift;
      next = s & ~(kWriter | kWaitingMask);
      if (k != 0) {
        next = ((next + k * kReaderOne) ^ kGrant) & ~kReadersParked;
      } else {
        next &= ~kWritersParked;
      }
      // (W, readers, waiting, G): 1,0,k,g -> 0,k,0,g^1 and RP -> 0 (k > 0: the queued readers are in)
      //                           1,0,0,g -> 0,0,0,g   and WP -> 0 (the lock is free)
      // release pairs with the acquire of whoever enters next; acquire orders the sleepers'
      // parked-bit CAS before our wake (see the file top).
      if (state_.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
    }
    if ((s & kWaitingMask) != 0) {
      if (s & kReadersParked) wake(reader_seq_);
    } else if (s & kWritersParked) {
      wake(writer_seq_);
    }
    detail::tsan::post_unlock(this, 0);
  }

  // --- shared -------------------------------------------------------------------------------

  void lock_shared() noexcept SPINWISE_ACQUIRE_SHARED() {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    // (W, readers, pending): 0,n,0 -> 0,n+1,0; acquire pairs with the release in unlock.
    if (SPINWISE_UNLIKELY(!reader_may_enter(s) ||
                          !state_.compare_exchange_strong(s, s + kReaderOne, std::memory_order_acquire,
                                                         std::memory_order_relaxed))) {
      lock_shared_slow(s, no_deadline{});
    }
    detail::tsan::post_lock(this, detail::tsan::kReadLock);
  }

  // Fails while a writer is inside or waiting (writer preference), never spuriously otherwise.
  [[nodiscard]] bool try_lock_shared() noexcept SPINWISE_TRY_ACQUIRE_SHARED(true) {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock | detail::tsan::kTryLock);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    bool ok = false;
    while (reader_may_enter(s)) {
      // (W, readers, pending): 0,n,0 -> 0,n+1,0; acquire pairs with the release in unlock.
      if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire, std::memory_order_relaxed)) {
        ok = true;
        break;
      }
    }
    detail::tsan::post_lock(this, try_flags(detail::tsan::kReadLock, ok));
    return ok;
  }

  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& rel) noexcept
      SPINWISE_TRY_ACQUIRE_SHARED(true) {
    return try_lock_shared_until(deadline_after(rel));
  }

  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& at) noexcept
      SPINWISE_TRY_ACQUIRE_SHARED(true) {
    detail::tsan::pre_lock(this, detail::tsan::kReadLock | detail::tsan::kTryLock);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    // (W, readers, pending): 0,n,0 -> 0,n+1,0; acquire pairs with the release in unlock.
    const bool ok = (reader_may_enter(s) && state_.compare_exchange_strong(s, s + kReaderOne, std::memory_order_acquire,
                                                                           std::memory_order_relaxed)) ||
                    lock_shared_slow(s, clock_deadline<Clock, Duration>{at});
    detail::tsan::post_lock(this, try_flags(detail::tsan::kReadLock, ok));
    return ok;
  }

  void unlock_shared() noexcept SPINWISE_RELEASE_SHARED() {
    detail::tsan::pre_unlock(this, detail::tsan::kReadLock);
    // (readers): n -> n-1; release pairs with the acquire of the writer that enters at 0.
    const std::uint64_t old = state_.fetch_sub(kReaderOne, std::memory_order_release);
    if (SPINWISE_UNLIKELY((old & (kReaderMask | kWritersParked)) == (kReaderOne | kWritersParked))) {
      wake_writers();
    }
    detail::tsan::post_unlock(this, detail::tsan::kReadLock);
  }

 private:
  static constexpr std::uint64_t kWriter = 1;
  static constexpr std::uint64_t kGrant = 2;
  static constexpr std::uint64_t kReadersParked = 4;
  static constexpr std::uint64_t kWritersParked = 8;
  static constexpr unsigned kFieldBits = 20;
  static constexpr std::uint64_t kFieldMax = (std::uint64_t{1} << kFieldBits) - 1;
  static constexpr unsigned kReaderShift = 4;
  static constexpr unsigned kWaitingShift = kReaderShift + kFieldBits;
  static constexpr unsigned kPendingShift = kWaitingShift + kFieldBits;
  static constexpr std::uint64_t kReaderOne = std::uint64_t{1} << kReaderShift;
  static constexpr std::uint64_t kWaitingOne = std::uint64_t{1} << kWaitingShift;
  static constexpr std::uint64_t kPendingOne = std::uint64_t{1} << kPendingShift;
  static constexpr std::uint64_t kReaderMask = kFieldMax << kReaderShift;
  static constexpr std::uint64_t kWaitingMask = kFieldMax << kWaitingShift;
  static constexpr std::uint64_t kPendingMask = kFieldMax << kPendingShift;
  static_assert(kPendingShift + kFieldBits <= 64, "fields overflow the word");

  static constexpr bool writer_may_enter(std::uint64_t s) noexcept { return (s & (kWriter | kReaderMask)) == 0; }
  static constexpr bool reader_may_enter(std::uint64_t s) noexcept { return (s & (kWriter | kPendingMask)) == 0; }

  static constexpr unsigned try_flags(unsigned f, bool ok) noexcept {
    return f | detail::tsan::kTryLock | (ok ? 0 : detail::tsan::kTryLockFailed);
  }

  // The end of a wait: never (lock, lock_shared) ...
  struct no_deadline {
    static constexpr bool kTimed = false;
    static constexpr bool expired() noexcept { return false; }
    static constexpr std::chrono::nanoseconds park_limit() noexcept { return std::chrono::nanoseconds(0); }
  };

  // ... or a time point of any clock.
  template <class Clock, class Duration>
  struct clock_deadline {
    static constexpr bool kTimed = true;
    const std::chrono::time_point<Clock, Duration>& at;

    bool expired() const noexcept { return !(Clock::now() < at); }

    // How long one sleep may last: the time left, capped so that a clock that can jump
    // (system_clock) is read again at least every second. Computed in double: no overflow for
    // time_point::max() or a clock with a negative now().
    std::chrono::nanoseconds park_limit() const noexcept {
      using ns_d = std::chrono::duration<double, std::nano>;
      constexpr double kCapNs = Clock::is_steady ? 3600e9 : 1e9;
      const double left = ns_d(at.time_since_epoch()).count() - ns_d(Clock::now().time_since_epoch()).count();
      if (!(left > 0)) return std::chrono::nanoseconds(0);
      return std::chrono::nanoseconds(static_cast<std::int64_t>(left < kCapNs ? left + 1 : kCapNs));
    }
  };

  // steady_clock::now() + rel, where "beyond a century" (duration::max() included) means never.
  template <class Rep, class Period>
  static std::chrono::steady_clock::time_point deadline_after(const std::chrono::duration<Rep, Period>& rel) noexcept {
    using std::chrono::steady_clock;
    if (std::chrono::duration<double>(rel).count() > 3.2e9) return steady_clock::time_point::max();
    return steady_clock::now() + std::chrono::ceil<steady_clock::duration>(rel);
  }

  bool try_enter_writer() noexcept {
    std::uint64_t s = 0;  // guess: idle with G = 0; the second CAS covers G = 1 and stale bits
    // (W, readers): 0,0 -> 1,0; acquire pairs with the release in unlock / unlock_shared.
    return state_.compare_exchange_strong(s, kWriter, std::memory_order_acquire, std::memory_order_relaxed) ||
           (writer_may_enter(s) &&
            state_.compare_exchange_strong(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed));
  }

  // Step b of the wake protocol (file top).
  static void wake(std::atomic<std::uint32_t>& seq) noexcept {
    // (seq): e -> e+1; release pairs with the sleeper's acquire load of seq.
    seq.fetch_add(1, std::memory_order_release);
    detail::futex_wake_all(seq);
  }

  SPINWISE_COLD void wake_writers() noexcept {
    // (WP): 1 -> 0; acquire: see the file top.
    if (state_.fetch_and(~kWritersParked, std::memory_order_acq_rel) & kWritersParked) wake(writer_seq_);
  }

  // Steps 1-3 of the sleep protocol (file top). Returns on a wake-up, a spurious return, a
  // timeout, or at once when ready(word) holds; the caller re-checks.
  template <class Ready, class Deadline>
  void park(std::atomic<std::uint32_t>& seq, std::uint64_t parked_bit, Ready ready, const Deadline& d) noexcept {
    // acquire pairs with the release bump in wake().
    const std::uint32_t e = seq.load(std::memory_order_acquire);
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if (ready(s)) return;
      if (s & parked_bit) break;
      // (RP or WP): 0 -> 1; release orders our read of seq before the waker's bump.
      if (state_.compare_exchange_weak(s, s | parked_bit, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
    }
    if constexpr (Deadline::kTimed) {
      detail::futex_wait_for(seq, e, d.park_limit());
    } else {
      detail::futex_wait(seq, e);
    }
  }

  // One spin episode: Policy rounds, one yield. Returns false when the episode is over and the
  // caller should park.
  struct episode {
    typename Policy::waiter w;
    bool yielded = false;

    bool pause() noexcept {
      if (!w.is_completed()) {
        w.snooze();
        return true;
      }
      if (!yielded) {
        yielded = true;
        std::this_thread::yield();
        return true;
      }
      return false;
    }
  };

  template <class Deadline>
  SPINWISE_COLD bool lock_slow(const Deadline& d) noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {  // enter if free, else announce ourselves (the door closes to new readers)
      if (writer_may_enter(s)) {
        // (W, readers): 0,0 -> 1,0; acquire pairs with the release in unlock / unlock_shared.
        if (state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed)) {
          return true;
        }
        continue;
      }
      if (d.expired()) return false;
      // (pending): p -> p+1
      if (state_.compare_exchange_weak(s, s + kPendingOne, std::memory_order_relaxed)) break;
    }
    for (;;) {
      episode ep;
      for (;;) {
        s = state_.load(std::memory_order_relaxed);
        if (writer_may_enter(s)) {
          // (W, readers, pending): 0,0,p -> 1,0,p-1; acquire pairs with the release in unlock /
          // unlock_shared.
          if (state_.compare_exchange_weak(s, (s | kWriter) - kPendingOne, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
            return true;
          }
          continue;
        }
        if (d.expired()) return withdraw_writer();
        if (!ep.pause()) break;
      }
      park(writer_seq_, kWritersParked, [](std::uint64_t v) { return writer_may_enter(v); }, d);
    }
  }

  // A pending writer's deadline passed. Takes the lock if it is free after all; otherwise leaves.
  SPINWISE_COLD bool withdraw_writer() noexcept {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if (writer_may_enter(s)) {
        // (W, readers, pending): 0,0,p -> 1,0,p-1; acquire as in lock_slow.
        if (state_.compare_exchange_weak(s, (s | kWriter) - kPendingOne, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          return true;
        }
        continue;
      }
      std::uint64_t next = s - kPendingOne;
      // The last pending writer leaves with no writer inside: the door opens for the queued
      // readers, who enter by themselves; wake those asleep.
      const bool opens = (next & (kWriter | kPendingMask)) == 0 && (next & kWaitingMask) != 0;
      if (opens) next &= ~kReadersParked;
      // (pending): p -> p-1, and RP -> 0 when the door opens; acquire: see the file top.
      if (state_.compare_exchange_weak(s, next, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        if (opens && (s & kReadersParked)) wake(reader_seq_);
        return false;
      }
    }
  }

  template <class Deadline>
  SPINWISE_COLD bool lock_shared_slow(std::uint64_t s, const Deadline& d) noexcept {
    for (;;) {  // enter if the door is open, else queue for the next grant
      if (reader_may_enter(s)) {
        // (W, readers, pending): 0,n,0 -> 0,n+1,0; acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire, std::memory_order_relaxed)) {
          return true;
        }
        continue;
      }
      if (d.expired()) return false;
      // (waiting): k -> k+1
      if (state_.compare_exchange_weak(s, s + kWaitingOne, std::memory_order_relaxed)) break;
    }
    // The grant that admits us flips G once before we notice: a second grant needs a writer
    // inside, and none enters while we count among the readers inside.
    const std::uint64_t gen = s & kGrant;
    const auto admitted = [gen](std::uint64_t v) { return (v & kGrant) != gen || reader_may_enter(v); };
    for (;;) {
      episode ep;
      for (;;) {
        // acquire pairs with the release CAS in unlock that flipped G.
        s = state_.load(std::memory_order_acquire);
        if ((s & kGrant) != gen) return true;
        if (reader_may_enter(s)) {
          // The pending writers timed out: (readers, waiting): n,k -> n+1,k-1; acquire pairs
          // with the release in unlock.
          if (state_.compare_exchange_weak(s, s + kReaderOne - kWaitingOne, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
            return true;
          }
          continue;
        }
        if (d.expired()) return withdraw_reader(gen);
        if (!ep.pause()) break;
      }
      park(reader_seq_, kReadersParked, admitted, d);
    }
  }

  // A queued reader's deadline passed. It may have been admitted meanwhile: then it holds the lock.
  SPINWISE_COLD bool withdraw_reader(std::uint64_t gen) noexcept {
    std::uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if ((s & kGrant) != gen) return true;  // granted; acquire pairs with the release in unlock
      if (reader_may_enter(s)) {
        // (readers, waiting): n,k -> n+1,k-1
        if (state_.compare_exchange_weak(s, s + kReaderOne - kWaitingOne, std::memory_order_acquire,
                                         std::memory_order_acquire)) {
          return true;
        }
        continue;
      }
      // (waiting): k -> k-1
      if (state_.compare_exchange_weak(s, s - kWaitingOne, std::memory_order_acquire, std::memory_order_acquire)) {
        return false;
      }
    }
  }

  std::atomic<std::uint64_t> state_{0};
  std::atomic<std::uint32_t> reader_seq_{0};
  std::atomic<std::uint32_t> writer_seq_{0};
};

// InnoDB's policy (6 / 50 / 30) under this lock's own knobs: hybrid_shared_mutex is the shared
// sibling of InnoDB's latches, and an engine migrating from InnoDB starts from its settings.
using hybrid_shared_mutex = hybrid_shared_mutex_t<innodb_policy<hybrid_shared_mutex_tag>>;

static_assert(sizeof(hybrid_shared_mutex) == 16, "hybrid_shared_mutex: a 64-bit word and two futex words");
static_assert(std::is_nothrow_default_constructible_v<hybrid_shared_mutex>);

}  // namespace spinwise
