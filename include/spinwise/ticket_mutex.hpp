#pragma once
// ticket_mutex: FIFO spin lock while threads have CPUs. Take a number, wait until it is served.
//
// Threads acquire in arrival order, so no waiter starves and per-thread op counts come out even,
// as long as every waiter runs. A plain ticket lock then collapses when threads outnumber CPUs:
// the lock can only go to the next ticket, and that thread is usually not running (it fell far
// below std::mutex in spinwise-bench: bench/results/full-runs/README.md in the spinwise
// repository). Here the tickets only order the queue; ownership is a separate word
// (detail/fifo_gate.hpp). The head of the queue publishes a heartbeat while it polls (and the two
// waiters behind it theirs, handed on when one becomes the head); a release
// hands the lock to the head while its heartbeat is fresh, and frees it for anyone once the head
// has not polled for the patience (20 us); arrivals join the queue only while its head runs. So:
// FIFO with a CPU per thread, and with more threads than CPUs the lock goes to threads that run.
// ticket_mutex_t<P, S, 0> is the strict ticket lock (never skips a head).
//
// How it waits: only the head spins; a waiter with someone ahead of it yields at every poll (it
// cannot be served before that someone, and the CPU it gives up may be the one the head or the
// holder needs), and the head yields once its policy's spin budget is spent. A waiter outside the
// queue (the head was stale when it came) spins and yields like a TTAS waiter.
//
// Default policy: no_backoff_policy. Backoff thins RMW retries, and a queued waiter retries
// none: it only reads the queue, and any delay it adds lands on its own handoff and every one
// behind. So it waits in no delay unit (one relax per poll), the one kind of wait spinwise does not
// default to a time-based policy; its budget (spin_loops polls) is a relax count. A time-based
// policy (time_policy, exp_backoff_policy) still works: ticket_mutex_t<time_policy<ticket_mutex_tag>>.
//
// Cost: 40 bytes (the queue's two 32-bit counters in one word, the ownership word, the head's
// heartbeat and those of the two waiters behind it).
// Uncontended lock+unlock = one load and one CAS, one load and one store: a load of the queue
// word and a CAS on the ownership word, a load of the queue word and a release store. No ticket is
// taken while nobody waits, and nothing leaves the owner's cache. A queued waiter takes its ticket
// with a CAS on the queue word and, once it holds the lock, moves the head on with a fetch_add; a
// release with waiters queued reads the head's heartbeat, then stores the reservation or frees
// the lock. Figures for one machine: bench/results/report.md in the spinwise repository.

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/fifo_gate.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/no_backoff_policy.hpp"

namespace spinwise {

namespace detail {

// The algorithm: its queue (fifo_raw and the shell, detail/lock_shell.hpp, make it a lock).
template <class Policy, std::uint32_t PatienceUs>
class ticket_raw : public fifo_raw<ticket_raw<Policy, PatienceUs>, Policy> {
 public:
  // Threads queued (a racy snapshot, for tests and statistics; a waiter outside the queue is not
  // counted, and a head that has just taken the lock until it passes the queue on is).
  std::uint32_t waiting() const noexcept {
    const std::uint64_t q = queue_.load(std::memory_order_relaxed);
    return next_of(q) - head_of(q);
  }

 private:
  friend class fifo_raw<ticket_raw, Policy>;

  // queue_: the next ticket to hand out (high half) and the ticket at the head (low half), both
  // mod 2^32. next - head = threads queued. The head moves on (low half + 1) when its thread takes
  // the lock, so the holder is not in the queue.
  static constexpr std::uint64_t kTicketOne = std::uint64_t{1} << 32;
  static constexpr std::uint32_t next_of(std::uint64_t q) noexcept {
    return static_cast<std::uint32_t>(q >> 32);
  }
  static constexpr std::uint32_t head_of(std::uint64_t q) noexcept { return static_cast<std::uint32_t>(q); }

  bool queue_empty() const noexcept {
    const std::uint64_t q = queue_.load(std::memory_order_relaxed);
    return next_of(q) == head_of(q);
  }

  // Takes a ticket and waits in the queue until its thread holds the lock.
  template <class Stats>
  void queued(spin_then_yield<Policy, Stats>& wt) noexcept {
    // Take a number, showing first that we run (gate_t::vouch): a ticket that makes us the head,
    // or one or two places behind it, is stamped before it is visible. Release on the CAS: the
    // head that advances to us reads the stamp (below). Acquire on the load and on a failed CAS:
    // an empty queue is seen after the advance that emptied it, so our stamp comes after any vouch
    // made before. The queue orders, ownership (held_) synchronizes.
    std::uint64_t q = queue_.load(std::memory_order_acquire);
    std::uint32_t ticket;
    do {
      ticket = next_of(q);
      show_running(ticket, ticket - head_of(q), gate_t::alone_now());
    } while (!queue_.compare_exchange_weak(q, q + kTicketOne, std::memory_order_acq_rel,
                                           std::memory_order_acquire));
    std::uint64_t last = 0;
    const std::uint64_t every = gate_t::beat_ticks();
    bool alone = gate_t::alone_now();
    for (;;) {
      const std::uint32_t place = ticket - head_of(queue_.load(std::memory_order_acquire));
      if (place == 0) break;
      if (gate_t::beat_due(last, every)) show_running(ticket, place, alone);
      alone = gate_t::alone_after([&wt] { wt.yield(); });  // someone ahead: not our turn yet
    }
    gate_.head_wait(wt, alone);
    // Low half + 1, without a carry into the next-ticket half when the head wraps (only the
    // holder advances it, and ticket is the head).
    const std::uint64_t was =
        queue_.fetch_add(ticket == 0xffffffffu ? 1 - kTicketOne : 1, std::memory_order_acq_rel);
    // Vouch for the new head, if there is one, with the beat it showed one place behind us. After
    // the advance: its acquire reads past the CAS that queued the successor, so a stamp made
    // before that CAS is seen (before the advance, a successor could stamp and queue between our
    // read and the advance, and be head with no beat). No release runs in between: we hold.
    const std::uint32_t successor = ticket + 1;
    if (!gate_t::kStrict && next_of(was) != successor)
      gate_.vouch_waiter(
          gate_t::beat_if_tagged(place_beat(successor).load(std::memory_order_relaxed), successor));
  }

  // A waiter with `ticket`, `place` places behind the head (0: the head), shows that it runs.
  void show_running(std::uint32_t ticket, std::uint32_t place, bool alone) noexcept {
    if constexpr (!gate_t::kStrict) {
      if (place == 0) {
        gate_.vouch(gate_t::beat_now(alone));
      } else if (place <= 2) {
        place_beat(ticket).store(gate_t::tagged_beat(ticket, alone), std::memory_order_relaxed);
      }
    }
  }
  // The waiters one and two places behind the head have tickets of both parities: one word each.
  std::atomic<std::uint64_t>& place_beat(std::uint32_t ticket) noexcept {
    return (ticket & 1) != 0 ? odd_beat_ : even_beat_;
  }

  using gate_t = fifo_gate<PatienceUs>;
  std::atomic<std::uint64_t> queue_{0};
  gate_t gate_;
  // Tagged beats (fifo_gate::tagged_beat) of the waiters one and two places behind the head.
  std::atomic<std::uint64_t> even_beat_{0}, odd_beat_{0};
};

}  // namespace detail

// Patience: microseconds a queue head may go without polling before releases stop waiting for it
// (0: never, a strict ticket lock). detail/fifo_gate.hpp.
template <class Policy, class Stats = no_stats, std::uint32_t PatienceUs = detail::kDefaultFifoPatienceUs>
using ticket_mutex_t = detail::lock_shell<detail::ticket_raw<Policy, PatienceUs>, Stats>;

struct ticket_mutex_tag;
// Knobs for every ticket_mutex: ticket_mutex::policy::set_spin_loops(...).
using ticket_mutex = ticket_mutex_t<no_backoff_policy<ticket_mutex_tag>>;

static_assert(sizeof(ticket_mutex) == 40,
              "ticket_mutex is its queue, its ownership word, the head's heartbeat and two behind it");
static_assert(std::is_same_v<ticket_mutex::with_stats<struct ticket_mutex_tag>::policy, ticket_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
