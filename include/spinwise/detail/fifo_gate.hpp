#pragma once
// The ownership word of the FIFO locks (ticket_mutex, mcs_mutex): FIFO order while the waiters
// have CPUs, and no wait for one that does not.
//
// A plain FIFO lock hands the lock to the next waiter whether it runs or not; with more threads
// than CPUs that waiter is usually descheduled and everyone waits for it (ticket and MCS
// collapsed against std::mutex once threads outnumbered CPUs: bench/results/full-runs/README.md).
// Here the queue only decides who waits first; ownership is a separate word:
//
//   held_  0 free: anyone may take it          1 held
//          2 free, reserved for the queue's head (a FIFO handoff)
//   beat_  the head's heartbeat: a beat (beat_now()) from when it last showed it runs (0: none);
//          bits 0-47 the counter, bit 48 kAlone (the head has its CPU to itself, below)
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
// A new head is never without a beat: the lock vouches for it (vouch()) with the last beat it
// showed itself. An arrival into an empty queue stamps beat_ before its place in the queue is
// visible; a head that takes the lock hands on its successor's own beat, which each lock keeps
// for the waiters close to the head (ticket_mutex: the waiters one and two places behind it stamp
// a word each; mcs_mutex: every waiter stamps its own queue node). Before this, beat_ was 0 from
// the handoff until the new head's first poll, a release in that window freed the lock, and the
// releaser took it straight back: ticket_mutex let the releaser overtake in nearly every unlock of
// a two-thread loop.
//
// A beat is the low 48 bits of the cycle counter (days before they wrap at 1-4 GHz), never 0.
// A head stamps between its policy's rounds: a policy whose rounds outlast the patience (long
// innodb or time rounds) makes a spinning head look stale mid-round. The default policy of both
// locks (no_backoff_policy) polls after every relax; with another, keep its longest round under
// the patience or raise the patience.
//
// Patience (template parameter of the locks): 20 us by default, about 100 polls of a head that
// spins and longer than a yield that returns on an idle CPU; 0 never calls a head stale (strict
// FIFO, the old behaviour). Only order depends on it: exclusion is held_ alone (acquire CAS,
// release store), whatever the clock says.
//
// A head that is merely slow is told from one that does not run by its yields. A waiter behind the
// head yields per poll; a yield that comes back within a quarter of the patience found nothing
// else to run on its CPU, and the waiter's beats say so (kAlone, kept per thread for its next
// wait). Such a head is waited for ten patiences (kAloneFactor: 200 us by default): what stops a
// thread that has its CPU (an interrupt, the host taking the vCPU) is over by then, and a thread
// the scheduler switched away from did not come back from its yield that fast. Without it, on a
// 2-vCPU KVM guest whose timer interrupts stop a running thread for tens to hundreds of
// microseconds many times a second, the releaser took the lock back at every release of each
// stop, a share of a two-thread loop's handoffs (spinwise-order-probe;
// bench/results/fifo-alone/README.md).
//
// Its SPIN model: tests/models/fifo_gate.pml (exclusion, no waiter stranded, strict order;
// docs/model-checking.md).

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "spinwise/arch.hpp"
#include "spinwise/config.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_site.hpp"

namespace spinwise::detail {

inline constexpr std::uint32_t kDefaultFifoPatienceUs = 20;
// The head stamps beat_ at most this often: a store to the lock's line per poll would be read by
// every other poller.
inline constexpr double kBeatNs = 250;
// A head whose thread has its CPU to itself (fifo_gate::alone_after) is waited for this many
// patiences.
inline constexpr std::uint64_t kAloneFactor = 10;

// Per thread: whether its last yield in a FIFO lock's wait came back at once (fifo_gate::
// alone_after). A bool with constant initialization: no guard, no destructor.
struct fifo_thread {
  static inline thread_local bool alone = false;
};

template <std::uint32_t PatienceUs>
class fifo_gate {
 public:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kReserved = 2;
  static constexpr bool kStrict = PatienceUs == 0;
  // A beat: the low 48 bits of the counter; kAlone above them (the thread has its CPU to itself);
  // in a tagged beat (ticket_mutex's), 15 bits of the waiter's ticket above that.
  static constexpr std::uint64_t kBeatMask = (std::uint64_t{1} << 48) - 1;
  static constexpr std::uint64_t kAlone = std::uint64_t{1} << 48;
  static constexpr std::uint32_t kTagMask = 0x7fff;

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
    if (SPINWISE_LIKELY(queue_empty)) {
      held_.store(kFree, std::memory_order_release);
    } else {
      release_to_queue();
    }
  }

  // A beat of the calling thread, now: the low 48 bits of the counter, never 0 (0 is "none"),
  // and kAlone when the thread has its CPU to itself (alone_after()).
  static std::uint64_t beat_now(bool alone = false) noexcept {
    const std::uint64_t t = read_counter() & kBeatMask;
    return (t == 0 ? 1 : t) | (alone ? kAlone : 0);
  }
  // A waiter yields its CPU (yield(): the wait's yield) and learns whether it has that CPU to
  // itself: a yield that comes back within a quarter of the patience found no other thread to run
  // there. Such a waiter, stopped by the host or an interrupt, is back within microseconds, not a
  // scheduler's slice: its beats carry kAlone and count for the alone patience. Kept per thread,
  // for its next wait's first beat.
  template <class Yield>
  static bool alone_after(Yield&& yield) noexcept {
    const std::uint64_t t0 = read_counter();
    yield();
    const bool alone = read_counter() - t0 < patience_ticks() / 4;
    fifo_thread::alone = alone;
    return alone;
  }
  // What the calling thread's last yield in a FIFO wait said (false before its first).
  static bool alone_now() noexcept { return fifo_thread::alone; }
  // True, and `last` moved on, once `every` ticks (beat_ticks()) have passed since `last`: how a
  // waiter throttles its stamps (a store to a shared line per poll would be read by every poller).
  static bool beat_due(std::uint64_t& last, std::uint64_t every) noexcept {
    const std::uint64_t now = read_counter();
    if (last != 0 && now - last < every) return false;
    last = now;
    return true;
  }

  // The head polls: stamps beat_ every `every` ticks.
  void head_beat(std::uint64_t& last, std::uint64_t every, bool alone) noexcept {
    if constexpr (!kStrict) {
      if (beat_due(last, every)) beat_.store(beat_now(alone), std::memory_order_relaxed);
    }
  }
  // The queue has a new head, which last showed it runs at `beat` (0: unknown, so stale). Called
  // by an arrival into an empty queue before its place is visible, and by a head that has taken
  // the lock, for its successor, before it passes the queue on (only the holder does that, so no
  // release runs in between).
  void vouch(std::uint64_t beat) noexcept {
    if constexpr (!kStrict) beat_.store(beat, std::memory_order_relaxed);
  }
  // The same for a new head with a beat it showed while it waited behind the last one (0: none):
  // that beat counts for a quarter of the patience only. A waiter that runs stamps as the head
  // within one poll of becoming it (its own beats count for the whole patience); one that yielded
  // its CPU away and has not run since gets a reservation only while its beat is that young.
  // (Vouched for the whole patience, a successor that had polled just before it was descheduled
  // kept the lock reserved and idle for up to the patience, which cost mcs_mutex throughput when
  // threads outnumbered CPUs: bench/results/compare-amd/fifo-order.)
  void vouch_waiter(std::uint64_t beat) noexcept {
    if constexpr (!kStrict) {
      if ((beat & kAlone) != 0) {
        beat_.store(beat, std::memory_order_relaxed);
        return;
      }
      const std::uint64_t patience = patience_ticks();
      const std::uint64_t aged = (beat - (patience - patience / 4)) & kBeatMask;
      beat_.store(beat == 0 ? 0 : aged == 0 ? 1 : aged, std::memory_order_relaxed);
    }
  }
  // An arrival may join the queue: it is empty, or its head runs.
  bool queue_open(bool queue_empty) const noexcept { return queue_empty || !head_stale(); }

  // The queue head's wait (wt: the wait's spin_then_yield), until it holds the lock: Policy rounds
  // while the budget lasts, then a yield per poll, stamping its heartbeat all along; it leaves
  // beat_ at 0. The caller then vouches for the next head, if any, and passes the queue on.
  template <class Wait>
  void head_wait(Wait& wt, bool alone) noexcept {
    std::uint64_t beat = 0;
    const std::uint64_t every = beat_ticks();
    for (;;) {
      head_beat(beat, every, alone);
      if (head_try_take()) {
        // The head holds the lock and is a head no more: no beat until one is vouched for. (Left
        // standing, the holder's own beat slowed ticket's and mcs's handoff cell on a Zen 5
        // guest: bench/results/compare-amd/fifo-order.)
        vouch(0);
        return;
      }
      if (wt.spent()) {
        alone = alone_after([&wt] { wt.pause(); });
      } else {
        // Stamps inside the round too, for a policy that asks until() within a round.
        wt.pause([this, &beat, every, alone] {
          head_beat(beat, every, alone);
          return looks_free();
        });
      }
    }
  }

  // The wait of a thread that found the queue's head stale, outside the queue: takes a free lock,
  // or one reserved for a head that has gone stale. True with the lock; false to look at the queue
  // again (it emptied, or its head runs again).
  template <class Wait, class QueueEmpty>
  bool barge(Wait& wt, QueueEmpty queue_empty) noexcept {
    for (;;) {
      if (barger_try_take()) return true;
      if (queue_empty()) return false;
      wt.pause([this] { return looks_free(); });
      if (!head_stale()) return false;
    }
  }

  // A FIFO lock's whole wait, made with the lock and the site of the call: takes the lock when it
  // is free and nobody is queued; joins the queue while it is open (queued(wt) returns once its
  // thread holds the lock); waits outside it while its head is stale (barge). One
  // spin_then_yield (wait_core.hpp) for the whole wait: one spin budget, then a yield per poll.
  template <class Policy, class Stats, class QueueEmpty, class Queued>
  void wait(const void* lock, lock_site site, QueueEmpty queue_empty, Queued queued) noexcept {
    spin_then_yield<Policy, Stats> wt(lock, lock_mode::x, site);
    for (;;) {
      if (queue_empty() && try_take_free()) break;
      if (queue_open(queue_empty())) {
        queued(wt);
        break;
      }
      if (barge(wt, queue_empty)) break;
    }
    wt.entered_from_queue();
  }

  bool held() const noexcept { return held_.load(std::memory_order_relaxed) == kHeld; }
  // Free or reserved: worth a look by the head, or by a barger (which then checks the head).
  bool looks_free() const noexcept { return held_.load(std::memory_order_relaxed) != kHeld; }

  // The head has not shown it runs for longer than the patience (or has no beat at all).
  bool head_stale() const noexcept {
    if constexpr (kStrict) {
      return false;
    } else {
      const std::uint64_t b = beat_.load(std::memory_order_relaxed);
      if (b == 0) return true;
      // Mod 2^48, either way: a beat ahead of our counter (stamped on a CPU whose counter runs
      // ahead) is fresh only within the patience too, else a head descheduled there would look
      // fresh for good.
      const std::uint64_t d = (read_counter() - b) & kBeatMask;
      return std::min(d, kBeatMask + 1 - d) > patience_for(b);
    }
  }

  // Heartbeats of waiters behind the head, for a lock to hand on (ticket_mutex): a beat tagged
  // with the low 16 bits of the waiter's ticket, and the beat back if the tag is `ticket`'s.
  static std::uint64_t tagged_beat(std::uint32_t ticket, bool alone) noexcept {
    return (std::uint64_t{ticket & kTagMask} << 49) | beat_now(alone);
  }
  static std::uint64_t beat_if_tagged(std::uint64_t tagged, std::uint32_t ticket) noexcept {
    return (tagged >> 49) == (ticket & kTagMask) ? tagged & (kBeatMask | kAlone) : 0;
  }

  // Converted at each use, not cached in a function-local static: its initialization guard would
  // make a waiter wait for a thread stopped inside it (arch/spinwise/arch/feature_bit.hpp), which
  // is what this gate exists to avoid. A relaxed load and a multiply.
  // (Counter ticks.)
  static std::uint64_t patience_ticks() noexcept {
    return static_cast<std::uint64_t>(PatienceUs * 1e-6 * static_cast<double>(counter_frequency()));
  }
  // How long a head may go without a beat: the patience, or kAloneFactor times it for a beat
  // with kAlone (in counter ticks).
  static std::uint64_t patience_for(std::uint64_t beat) noexcept {
    const std::uint64_t patience = patience_ticks();
    return (beat & kAlone) != 0 ? patience * kAloneFactor : patience;
  }

  static std::uint64_t beat_ticks() noexcept {
    return static_cast<std::uint64_t>(kBeatNs * 1e-9 * static_cast<double>(counter_frequency()));
  }

 private:
  // release() with someone queued, out of line: the uncontended unlock stays a load and a store.
  SPINWISE_COLD void release_to_queue() noexcept {
    held_.store(head_stale() ? kFree : kReserved, std::memory_order_release);
  }

  std::atomic<std::uint64_t> beat_{0};
  std::atomic<std::uint32_t> held_{kFree};
  std::uint32_t pad_ = 0;  // written by the constructor too: a lock is all zeros when free
};

// A FIFO lock's raw lock (lock_shell.hpp) but its queue: the lock (Queue, which derives from this
// and names it a friend) has a fifo_gate `gate_`, queue_empty() and queued(wt), which joins its
// queue and returns once its thread holds the lock. A timed call does not queue: it polls
// try_lock (lock_shell.hpp's poll_until), so it waits behind every queued thread.
template <class Queue, class Policy>
class fifo_raw : public raw_lock {
 public:
  using policy = Policy;

  bool is_locked() const noexcept { return queue().gate_.held(); }
  // Someone is queued (a racy snapshot, for tests and statistics; a waiter outside the queue is
  // not counted).
  bool has_waiters() const noexcept { return !queue().queue_empty(); }

 protected:
  // Free, and nobody queued (a queued waiter keeps its turn).
  bool try_acquire() noexcept { return queue().queue_empty() && queue().gate_.try_take_free(); }
  bool acquire_fast() noexcept { return try_acquire(); }
  void release() noexcept { queue().gate_.release(queue().queue_empty()); }

  template <class Stats>
  SPINWISE_COLD bool acquire_slow(no_deadline, lock_site site) noexcept {
    Queue& q = queue();
    q.gate_.template wait<Policy, Stats>(
        this, site, [&q] { return q.queue_empty(); }, [&q](auto& wt) { q.queued(wt); });
    return true;
  }

 private:
  Queue& queue() noexcept { return static_cast<Queue&>(*this); }
  const Queue& queue() const noexcept { return static_cast<const Queue&>(*this); }
};

}  // namespace spinwise::detail
