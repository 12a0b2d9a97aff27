#pragma once
// The 64-bit lock word of the writer-preferring reader-writer locks (spin_shared_mutex,
// hybrid_shared_mutex), its predicates and its uncontended transitions. Each lock keeps its
// waiting (spin, or spin then park) and its state diagram in its own header.
//
//   bit   63 ...... F+40  F+39 ........ F+20  F+19 ......... F  F-1 .. 2   1   0
//         unused           queued readers (20)  readers inside (20)  lock's   S   W
//                                                                    own flags
//
//   W               a writer is inside, or has reserved the lock and waits for the readers
//                   inside to leave (no reader enters while W is set)
//   S               readers' turn: a queued reader spent its spin budget; no writer reserves
//                   until the queued readers have entered (the last of them clears S)
//   readers inside  readers holding the lock
//   queued readers  readers that found W set and wait to enter by themselves
//
// Invariant: W and readers inside > 0 only while the writer drains them; S => queued readers > 0.
// At most 2^20 - 1 threads may use one lock at a time.
//
// Memory order of the transitions here: entering is an acquire CAS that pairs with the release
// RMW of the unlock it observes.

#include <atomic>
#include <cstdint>

namespace spinwise::detail {

// kFlagBits: how many low bits the lock uses (W, S, and its own flags above them).
template <unsigned kFlagBits>
struct rw_word {
  static_assert(kFlagBits >= 2, "W and S take bits 0 and 1");
  static constexpr std::uint64_t kWriter = 1;
  static constexpr std::uint64_t kReadersTurn = 2;
  static constexpr unsigned kFieldBits = 20;
  static constexpr std::uint64_t kFieldMax = (std::uint64_t{1} << kFieldBits) - 1;
  static constexpr unsigned kReaderShift = kFlagBits;
  static constexpr unsigned kQueuedShift = kReaderShift + kFieldBits;
  static constexpr std::uint64_t kReaderOne = std::uint64_t{1} << kReaderShift;
  static constexpr std::uint64_t kQueuedOne = std::uint64_t{1} << kQueuedShift;
  static constexpr std::uint64_t kReaderMask = kFieldMax << kReaderShift;
  static constexpr std::uint64_t kQueuedMask = kFieldMax << kQueuedShift;
  static_assert(kQueuedShift + kFieldBits <= 64, "fields overflow the word");

  static constexpr bool writer_may_reserve(std::uint64_t s) noexcept {
    return (s & (kWriter | kReadersTurn)) == 0;
  }
  static constexpr bool drained(std::uint64_t s) noexcept { return (s & kReaderMask) == 0; }
  static constexpr bool writer_may_enter(std::uint64_t s) noexcept {
    return writer_may_reserve(s) && drained(s);
  }
  static constexpr bool reader_may_enter(std::uint64_t s) noexcept { return (s & kWriter) == 0; }

  // The raw locks' racy snapshots (is_locked, is_locked_shared): held in no mode is W clear and
  // no reader inside, which is what an unlock of a mode nobody holds checks first.
  static constexpr bool writer_holds(std::uint64_t s) noexcept { return (s & kWriter) != 0; }
  static constexpr bool readers_hold(std::uint64_t s) noexcept { return !drained(s); }

  // A queued reader enters by itself: (readers, queued): n,k -> n+1,k-1, and S -> 0 with k = 1.
  static constexpr std::uint64_t self_admitted(std::uint64_t s) noexcept {
    const std::uint64_t next = s + kReaderOne - kQueuedOne;
    return (next & kQueuedMask) == 0 ? next & ~kReadersTurn : next;
  }

  // A queued reader gives up: (queued): k -> k-1, and S -> 0 with k = 1.
  static constexpr std::uint64_t dequeued(std::uint64_t s) noexcept {
    const std::uint64_t next = s - kQueuedOne;
    return (next & kQueuedMask) == 0 ? next & ~kReadersTurn : next;
  }

  // lock()'s fast path. (W, readers): 0,0 -> 1,0; the first CAS guesses an idle word, the second
  // covers set flags or queued readers. On failure `s` holds the word last seen.
  static bool try_enter_writer(std::atomic<std::uint64_t>& w, std::uint64_t& s) noexcept {
    s = 0;
    return w.compare_exchange_strong(s, kWriter, std::memory_order_acquire, std::memory_order_relaxed) ||
           (writer_may_enter(s) &&
            w.compare_exchange_strong(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed));
  }

  // try_lock(): fails only while a writer is inside or reserved, a readers' turn is on, or a
  // reader is inside.
  static bool try_lock(std::atomic<std::uint64_t>& w) noexcept {
    std::uint64_t s = w.load(std::memory_order_relaxed);
    while (writer_may_enter(s)) {
      // (W, readers): 0,0 -> 1,0
      if (w.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
    return false;
  }

  // lock_shared()'s fast path: one CAS from the word last seen in `s` (updated on failure).
  static bool try_enter_reader(std::atomic<std::uint64_t>& w, std::uint64_t& s) noexcept {
    // (W, readers): 0,n -> 0,n+1
    return reader_may_enter(s) &&
           w.compare_exchange_strong(s, s + kReaderOne, std::memory_order_acquire, std::memory_order_relaxed);
  }

  // try_lock_shared(): fails while a writer is inside or draining (writer preference), never
  // spuriously otherwise.
  static bool try_lock_shared(std::atomic<std::uint64_t>& w) noexcept {
    std::uint64_t s = w.load(std::memory_order_relaxed);
    while (reader_may_enter(s)) {
      // (W, readers): 0,n -> 0,n+1
      if (w.compare_exchange_weak(s, s + kReaderOne, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
};

}  // namespace spinwise::detail
