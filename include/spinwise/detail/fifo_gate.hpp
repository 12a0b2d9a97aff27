#pragma once
// The ownership word of the FIFO locks (ticket_mutex, mcs_mutex): FIFO order while the waiters
// have CPUs, and no wait for one that does not.
//
// A plain FIFO lock hands the lock to the next waiter whether it runs or not; with more threads
// than CPUs that waiter is usually descheduled and everyone waits for it (ticket and MCS fell to
// 0.03x-0.42x of std::mutex at 4-16 threads per CPU). Here the queue only decides who waits
// first; ownership is a separate word:
//
//   held_  0 free: anyone may take it          1 held
//          2 free, reserved for the queue's head (a FIFO handoff)
//   beat_  the head's heartbeat: the cycle counter when the head last polled (0: none yet)
//
// The head of the queue stamps beat_ as it polls (at most every kBeatNs). A release with waiters
// queued reserves the lock for the head if its beat is fresh (younger than the patience), which
// is a FIFO handoff; otherwise the head is not running and the lock is freed for anyone. An
// arriving thread joins the queue while it is empty or its head is fresh; when the head is stale it
// waits outside the queue and takes the lock when free, or reserved for a head that has gone
// stale since. So with a CPU per thread every head is fresh, every release a handoff and every
// arrival queued: FIFO. When threads outnumber CPUs the lock goes to threads that run, as a TTAS
// lock's does, and the queue drains as its members get CPU time.
//
// Patience (template parameter of the locks): 20 us by default, about 100 polls of a head that
// spins and longer than a yield that returns on an idle CPU; 0 never calls a head stale (strict
// FIFO, the old behaviour). Only order depends on it: exclusion is held_ alone (acquire CAS,
// release store), whatever the clock says.
//
// Its SPIN model: tests/models/fifo_gate.pml (exclusion, no waiter stranded, strict order;
// docs/model-checking.md).

#include <atomic>
#include <cstdint>

#include "spinwise/arch.hpp"

namespace spinwise::detail {

inline constexpr std::uint32_t kDefaultFifoPatienceUs = 20;
// The head stamps beat_ at most this often: a store to the lock's line per poll would be read by
// every other poller.
inline constexpr double kBeatNs = 250;

template <std::uint32_t PatienceUs>
class fifo_gate {
 public:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kReserved = 2;
  static constexpr bool kStrict = PatienceUs == 0;

  // A free, unreserved lock; acquire pairs with release().
  bool try_take_free() noexcept {
    std::uint32_t h = kFree;
    return held_.compare_exchange_strong(h, kHeld, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // The queue's head: a free or reserved lock.
  bool head_try_take() noexcept {
    std::uint32_t h = held_.load(std::memory_order_relaxed);
    return h != kHeld &&
           held_.compare_exchange_strong(h, kHeld, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // A thread waiting outside the queue: a free lock, or one reserved for a head that went stale.
  // (Its heartbeat check and its CAS are not one step: a reservation handed on to a fresh head in
  // between can be taken. That costs one FIFO handoff, never exclusion.)
  bool barger_try_take() noexcept {
    std::uint32_t h = held_.load(std::memory_order_relaxed);
    if (h == kHeld || (h == kReserved && !head_stale())) return false;
    return held_.compare_exchange_strong(h, kHeld, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // The holder lets go: with nobody queued, free; else reserved for a running head, or free.
  void release(bool queue_empty) noexcept {
    held_.store(queue_empty || head_stale() ? kFree : kReserved, std::memory_order_release);
  }

  // The head polls: stamps beat_ every `every` ticks (beat_ticks()).
  void head_beat(std::uint64_t& last, std::uint64_t every) noexcept {
    if constexpr (!kStrict) {
      const std::uint64_t now = read_counter();
      if (now - last >= every) {
        last = now;
        beat_.store(now == 0 ? 1 : now, std::memory_order_relaxed);
      }
    }
  }
  // The head has the lock and passes the queue on: the next head has not polled yet.
  void head_passed() noexcept {
    if constexpr (!kStrict) beat_.store(0, std::memory_order_relaxed);
  }
  // An arrival may join the queue: it is empty, or its head runs.
  bool queue_open(bool queue_empty) const noexcept { return queue_empty || !head_stale(); }

  // The queue head's wait, until it holds the lock: Policy rounds while the budget lasts, then a
  // yield per poll, stamping its heartbeat all along. The caller then passes the queue on.
  template <class Waiter, class Meter>
  void head_wait(Waiter& w, Meter& m) noexcept {
    std::uint64_t beat = 0;
    const std::uint64_t every = beat_ticks();
    for (;;) {
      head_beat(beat, every);
      if (head_try_take()) {
        head_passed();
        return;
      }
      if (w.is_completed()) {
        m.yield();
      } else {
        // Stamps inside the round too: a round longer than the patience must not make a spinning
        // head look stale.
        m.snooze(w, [this, &beat, every] {
          head_beat(beat, every);
          return looks_free();
        });
      }
    }
  }

  // The wait of a thread that found the queue's head stale, outside the queue: takes a free lock,
  // or one reserved for a head that has gone stale. True with the lock; false to look at the queue
  // again (it emptied, or its head runs again).
  template <class Waiter, class Meter, class QueueEmpty>
  bool barge(Waiter& w, Meter& m, QueueEmpty queue_empty) noexcept {
    for (;;) {
      if (barger_try_take()) return true;
      if (queue_empty()) return false;
      if (w.is_completed()) {
        m.yield();
      } else {
        m.snooze(w, [this] { return looks_free(); });
      }
      if (!head_stale()) return false;
    }
  }

  bool held() const noexcept { return held_.load(std::memory_order_relaxed) == kHeld; }
  // Free or reserved: worth a look by the head, or by a barger (which then checks the head).
  bool looks_free() const noexcept { return held_.load(std::memory_order_relaxed) != kHeld; }

  // The head has not polled for longer than the patience (or not at all since it became head).
  bool head_stale() const noexcept {
    if constexpr (kStrict) {
      return false;
    } else {
      const std::uint64_t b = beat_.load(std::memory_order_relaxed);
      if (b == 0) return true;
      const std::uint64_t now = read_counter();
      // A beat ahead of our counter (stamped on a CPU whose counter runs ahead) is fresh only
      // within the patience too: else a head descheduled there would look fresh for good.
      return (now > b ? now - b : b - now) > patience_ticks();
    }
  }

 private:
  // Converted at each use, not cached in a function-local static: its initialization guard would
  // make a waiter wait for a thread stopped inside it (arch/spinwise/arch/feature_bit.hpp), which
  // is what this gate exists to avoid. A relaxed load and a multiply.
  static std::uint64_t patience_ticks() noexcept {
    return static_cast<std::uint64_t>(PatienceUs * 1e-6 * static_cast<double>(counter_frequency()));
  }
  static std::uint64_t beat_ticks() noexcept {
    return static_cast<std::uint64_t>(kBeatNs * 1e-9 * static_cast<double>(counter_frequency()));
  }

  std::atomic<std::uint64_t> beat_{0};
  std::atomic<std::uint32_t> held_{kFree};
  std::uint32_t pad_ = 0;  // written by the constructor too: a lock is all zeros when free
};

}  // namespace spinwise::detail
