#pragma once
// rw_spinlock: a writer-preferring spin reader-writer lock in one 64-bit word (SharedLockable).
//
// Readers share, writers exclude everyone. A waiting writer closes the door to new readers
// (writer preference), and a writer's release admits, in one step, every reader that queued
// behind it before the next writer may enter (the readers' turn). So neither side starves:
//   - a writer waits at most for the readers inside when it arrived, plus one batch of readers
//     that queued behind the writer before it (readers arriving later queue behind this writer);
//   - a queued reader waits at most for the writer inside and the writers' CAS race that
//     follows: the next release grants it, whoever that writer is.
// Writers among themselves are unordered (TTAS-style): a writer can lose the race for the free
// lock to other writers repeatedly, as with any test-and-set lock.
//
// Waiting spins through the Policy (rounds of randomized relax delays), then yields between
// polls for as long as it waits: progress when threads outnumber CPUs, without parking.
//
// When not to use it: critical sections that block, allocate or run long (use
// hybrid_shared_mutex, which parks); read-mostly data whose readers are so many that the shared
// counter's cache line is the bottleneck (a seqlock or a sharded lock scales, this does not).
// Cost: lock_shared and unlock_shared are one locked RMW each on the same line (CAS, fetch_sub);
// lock and unlock one CAS each, uncontended. 8 bytes.
//
// Lock word (64 bits):
//
//   bit   63 62........................42 41.......................22 21.....................2  1  0
//         -  pending writers (20 bits)     waiting readers (20 bits)     readers inside (20 bits)  G  W
//
//   W                writer inside
//   G                grant generation: flips when a releasing writer admits the waiting readers
//   readers inside   readers holding the lock (including granted readers that have not noticed)
//   waiting readers  readers queued for the next grant (arrived while W or pending writers > 0)
//   pending writers  writers waiting to enter (they close the door to new readers)
//
// Invariant: W => readers inside == 0; waiting readers > 0 => (W or pending writers > 0).
// At most 2^20 - 1 threads may use one lock at a time.
//
// States (W, readers, waiting, pending) and transitions:
//
//            lock_shared (p == 0)                  lock (r == 0, W == 0)
//   (0,r,0,0) -------------------> (0,r+1,0,0)     (0,0,k,p) --------------> (1,0,k,p')
//       |                                               ^        p' = p-1 if it was pending
//       | lock (r > 0): p+1                             |
//       v                                               | last unlock_shared: (0,1,k,p) -> (0,0,k,p)
//   (0,r,k,p>0) --lock_shared: k+1 (door closed)--> (0,r,k+1,p)
//
//   (1,0,k,p) --unlock--> (0,k,0,p) with G flipped when k > 0: the queued readers are inside;
//                                   pending writers wait for them to leave.
//   (1,0,k,p) --lock_shared: k+1--> (1,0,k+1,p)
//
// Memory order: every acquisition is an acquire RMW or load that pairs with the release RMW of
// the unlock (or grant) it observes; every release is a release RMW.

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/thread_annotations.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

// Names rw_spinlock's own knobs: rw_spinlock::policy::set_spin_loops(...) and friends.
struct rw_spinlock_tag;

template <class Policy>
class SPINWISE_CAPABILITY("mutex") rw_spinlock_t {
 public:
  using policy = Policy;

  constexpr rw_spinlock_t() noexcept = default;
  rw_spinlock_t(const rw_spinlock_t&) = delete;
  rw_spinlock_t& operator=(const rw_spinlock_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~rw_spinlock_t() { detail::tsan::destroy(this); }  // a lock reusing this address is a new mutex
#endif

  // --- exclusive ----------------------------------------------------------------------------

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    std::uint64_t s = 0;  // guess: idle with G = 0; the second CAS covers G = 1 and pending writers
    // (W, readers): 0,0 -> 1,0; acquire pairs with the release in unlock / unlock_shared.
    if (SPINWISE_UNLIKELY(!state_.compare_exchange_strong(s, kWriter, std::memory_order_acquire,
                                                          std::memory_order_relaxed)) &&
        (!writer_may_enter(s) || !state_.compare_exchange_strong(s, s | kWriter, std::memory_order_acquire,
                                                                 std::memory_order_relaxed))) {
      lock_slow(s);
    }
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
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0 : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    detail::tsan::pre_unlock(this, 0);
    std::uint64_t s = kWriter;  // guess: nobody queued, G = 0; a failed CAS loads the real value
    for (;;) {
      const std::uint64_t k = (s & kWaitingMask) >> kWaitingShift;
      std::uint64_t next = s & ~(kWriter | kWaitingMask);
      if (k != 0) next = (next + k * kReaderOne) ^ kGrant;
      // (W, readers, waiting, G): 1,0,k,g -> 0,k,0,g^1 (k > 0: the queued readers are inside)
      //                           1,0,0,g -> 0,0,0,g
      // release pairs with the acquire of the next writer's CAS and of each granted reader's load.
      if (state_.compare_exchange_weak(s, next, std::memory_order_release, std::memory_order_relaxed)) break;
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
      lock_shared_slow(s);
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
    detail::tsan::post_lock(this, detail::tsan::kReadLock | detail::tsan::kTryLock |
                                      (ok ? 0 : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock_shared() noexcept SPINWISE_RELEASE_SHARED() {
    detail::tsan::pre_unlock(this, detail::tsan::kReadLock);
    // (readers): n -> n-1; release pairs with the acquire of the writer that enters at 0.
    state_.fetch_sub(kReaderOne, std::memory_order_release);
    detail::tsan::post_unlock(this, detail::tsan::kReadLock);
  }

 private:
  static constexpr std::uint64_t kWriter = 1;
  static constexpr std::uint64_t kGrant = 2;
  static constexpr unsigned kFieldBits = 20;
  static constexpr std::uint64_t kFieldMax = (std::uint64_t{1} << kFieldBits) - 1;
  static constexpr unsigned kReaderShift = 2;
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

  // One wait step: a policy round while the budget lasts, then a yield per poll.
  static void pause(typename Policy::waiter& w) noexcept {
    if (!w.is_completed()) {
      w.snooze();
    } else {
      std::this_thread::yield();
    }
  }

  SPINWISE_COLD void lock_slow(std::uint64_t s) noexcept {
    // Enter if the lock is free; otherwise announce ourselves, which closes the door to readers.
    for (;;) {
      if (writer_may_enter(s)) {
        // (W, readers): 0,0 -> 1,0; acquire pairs with the release in unlock / unlock_shared.
        if (state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed)) return;
        continue;
      }
      // (pending): p -> p+1
      if (state_.compare_exchange_weak(s, s + kPendingOne, std::memory_order_relaxed)) break;
    }
    typename Policy::waiter w;
    for (;;) {
      pause(w);
      s = state_.load(std::memory_order_relaxed);
      while (writer_may_enter(s)) {
        // (W, readers, pending): 0,0,p -> 1,0,p-1; acquire pairs with the release in unlock /
        // unlock_shared.
        if (state_.compare_exchange_weak(s, (s | kWriter) - kPendingOne, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          return;
        }
      }
    }
  }

  SPINWISE_COLD void lock_shared_slow(std::uint64_t s) noexcept {
    // Enter if the door is open; otherwise queue for the next writer's grant.
    for (;;) {
      if (reader_may_enter(s)) {
        // (W, readers, pending): 0,n,0 -> 0,n+1,0; acquire pairs with the release in unlock.
        if (state_.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire, std::memory_order_relaxed)) {
          return;
        }
        continue;
      }
      // (waiting): k -> k+1, with W or pending writers > 0 (the invariant's second half)
      if (state_.compare_exchange_weak(s, s + kWaitingOne, std::memory_order_relaxed)) break;
    }
    // The grant that admits us flips G exactly once before we leave: a second grant needs a
    // writer inside, and no writer enters while we count among the readers inside.
    const std::uint64_t gen = s & kGrant;
    typename Policy::waiter w;
    for (;;) {
      pause(w);
      // acquire pairs with the release CAS in unlock that flipped G.
      if ((state_.load(std::memory_order_acquire) & kGrant) != gen) return;
    }
  }

  std::atomic<std::uint64_t> state_{0};
};

// The default policy is time_policy: InnoDB's randomized rounds with the unit in nanoseconds, so
// the spin budget is the same time on every CPU (README, "the incident"), under rw_spinlock's own
// knobs. Readers wait on a grant, not on the word's every change, so an exponential backoff
// would only stretch their wait after the grant.
using rw_spinlock = rw_spinlock_t<time_policy<rw_spinlock_tag>>;

static_assert(sizeof(rw_spinlock) == 8, "rw_spinlock is one 64-bit word");
static_assert(std::is_nothrow_default_constructible_v<rw_spinlock>);

}  // namespace spinwise
