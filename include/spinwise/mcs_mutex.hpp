#pragma once
// mcs_mutex: MCS queue lock that is plain Lockable (no node argument); FIFO while threads have
// CPUs.
//
// Waiters form a queue; each spins on a flag in its own queue node, so passing the queue on
// touches exactly one waiter's line and the lock scales to many spinning cores with FIFO order.
// Classic MCS makes the caller pass the node to lock() and unlock(); here a waiter's node lives on
// its stack only while it waits, and the lock holds only the queue's tail (after the K42 variant:
// Krieger, Stumm, Unrau, Hanna 1993; Scott, "Shared-Memory Synchronization", 2nd ed., §4.3.2). No
// thread-local pool, no allocation, any number of mcs_mutexes held at once.
//
// Ownership is a separate word (detail/fifo_gate.hpp), as in ticket_mutex: the queue's head
// publishes a heartbeat while it polls (each waiter stamps its own node, and the head that takes
// the lock hands its successor's beat on); a release hands the lock to the head while its heartbeat
// is fresh, and frees it for anyone once the head has not polled for the patience (20 us); an
// arrival joins the queue only while its head runs. Classic MCS handed the lock to the next
// waiter whether it ran or not and fell far below std::mutex once threads outnumbered CPUs
// (spinwise-bench: bench/results/full-runs/README.md in the spinwise repository).
// mcs_mutex_t<P, S, 0> never skips a head (strict FIFO).
//
// How it waits: only the head spins (for its policy's budget, then it yields); the others yield at
// every poll, since they cannot be served before it and the CPU they give up may be the one it or
// the holder needs. A waiter outside the queue spins and yields like a TTAS waiter.
//
// When not to use it: below a dozen or so spinning cores a ticket or TTAS lock does as well in
// less space.
//
// Default policy: no_backoff_policy, as for ticket_mutex and for the same reason: a FIFO waiter
// cannot overtake, so a delay only postpones its own turn and every turn behind it. It waits in
// no delay unit (one relax per poll); its budget (spin_loops polls) is a relax count.
//
// Cost: 24 bytes (the queue tail, the ownership word and the head's heartbeat). Each waiter uses
// 24 bytes of its own stack (its link, its head flag, its own heartbeat). Uncontended lock+unlock
// = a load and a CAS, a load and a store: a load of the tail and a CAS on the ownership word, a
// load of the tail and a release store. The tail is not written while nobody waits, and nothing
// leaves the owner's cache. A queued waiter joins with a CAS on the tail and a store into its
// predecessor's node, and waits on a flag in its own node; the head that takes the lock passes
// the queue on with a store to its successor's flag, or a CAS of the tail back to null when it
// was the last. Figures for one machine: bench/results/report.md in the spinwise repository.

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

struct mcs_link {
  std::atomic<mcs_link*> next{nullptr};
};

// A waiter's node, on its stack from enqueue to acquisition. head: 0 queued behind another waiter
// -> 1 the queue's head (set at enqueue into an empty queue, or by the head before it that took
// the lock and passed the queue on).
// beat: its thread's heartbeat (fifo_gate::beat_now()), stamped at enqueue and while it waits,
// handed on by the head before it when it becomes the head.
struct mcs_waiter_node : mcs_link {
  std::atomic<std::uint32_t> head{0};
  std::atomic<std::uint64_t> beat{0};
};

// The algorithm: its queue (fifo_raw and the shell, detail/lock_shell.hpp, make it a lock).
template <class Policy, std::uint32_t PatienceUs>
class mcs_raw : public fifo_raw<mcs_raw<Policy, PatienceUs>, Policy> {
  friend class fifo_raw<mcs_raw, Policy>;

  // tail_: null = nobody queued; else the last queued waiter's node. A queued waiter is linked
  // from its predecessor's node once its enqueuer finishes its link store. The holder is not in
  // the queue: a head that takes the lock passes the queue on first.
  bool queue_empty() const noexcept { return tail_.load(std::memory_order_relaxed) == nullptr; }

  // Joins the queue and waits until this thread holds the lock.
  template <class Stats>
  void queued(spin_then_yield<Policy, Stats>& wt) noexcept {
    mcs_waiter_node node;
    // Enqueue: tail -> &node, showing first that we run: the node's beat, and the gate's when the
    // queue is empty (we will be its head), before the node is visible. A CAS, not an exchange,
    // so that "empty" is known before the tail moves. Release publishes node's fields to whoever
    // links or promotes it; acquire (also on failure) pairs with the previous enqueuer's release,
    // so its node is complete before we link, and with the last head's release CAS to null, so
    // our vouch comes after any made before the queue emptied.
    bool alone = gate_t::alone_now();  // whether this thread has its CPU to itself
    if constexpr (!gate_t::kStrict) node.beat.store(gate_t::beat_now(alone), std::memory_order_relaxed);
    mcs_link* prev = tail_.load(std::memory_order_acquire);
    do {
      if (prev == nullptr) gate_.vouch(node.beat.load(std::memory_order_relaxed));
    } while (!tail_.compare_exchange_weak(prev, &node, std::memory_order_acq_rel, std::memory_order_acquire));
    if (prev == nullptr) {
      node.head.store(1, std::memory_order_relaxed);  // an empty queue: we are its head
    } else {
      prev->next.store(&node, std::memory_order_release);  // link behind prev
      std::uint64_t last = 0;
      const std::uint64_t every = gate_t::beat_ticks();
      // Acquire pairs with the promotion below, made by the head before us.
      while (node.head.load(std::memory_order_acquire) == 0) {
        if (!gate_t::kStrict && gate_t::beat_due(last, every))
          node.beat.store(gate_t::beat_now(alone), std::memory_order_relaxed);
        alone = gate_t::alone_after([&wt] { wt.yield(); });
      }
    }
    gate_.head_wait(wt, alone);
    // We hold the lock: pass the queue on, vouching for the next head with its node's beat (read
    // after its link, which it stamped before). No release runs before that: we hold. node dies
    // when we return.
    mcs_link* succ = node.next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      mcs_link* expected = &node;
      // tail: &node -> null (we were the last).
      if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                        std::memory_order_relaxed))
        return;
      succ = wait_for_link(node);  // someone enqueued behind node: wait for its link
    }
    auto* next_head = static_cast<mcs_waiter_node*>(succ);
    gate_.vouch_waiter(next_head->beat.load(std::memory_order_relaxed));
    // Our successor is the head now; release pairs with its acquire load above.
    next_head->head.store(1, std::memory_order_release);
  }

  // Waits out the two-instruction window between an enqueuer's exchange on tail_ and its link
  // store. Bounded like any wait here (wait_core.hpp's spin_then_yield, measuring nothing: the
  // lock is held already): if the enqueuer was preempted in between, we yield.
  SPINWISE_COLD static mcs_link* wait_for_link(const mcs_link& link) noexcept {
    spin_then_yield<Policy, no_stats> wt(&link, lock_mode::x);
    for (;;) {
      if (mcs_link* succ = link.next.load(std::memory_order_acquire))
        return succ;  // pairs with the link store
      wt.pause();
    }
  }

  using gate_t = fifo_gate<PatienceUs>;
  std::atomic<mcs_link*> tail_{nullptr};
  gate_t gate_;
};

}  // namespace detail

// Patience: as for ticket_mutex_t (detail/fifo_gate.hpp); 0 = strict FIFO.
template <class Policy, class Stats = no_stats, std::uint32_t PatienceUs = detail::kDefaultFifoPatienceUs>
using mcs_mutex_t = detail::lock_shell<detail::mcs_raw<Policy, PatienceUs>, Stats>;

struct mcs_mutex_tag;
// Knobs for every mcs_mutex: mcs_mutex::policy::set_spin_loops(...).
using mcs_mutex = mcs_mutex_t<no_backoff_policy<mcs_mutex_tag>>;

static_assert(sizeof(void*) != 8 || sizeof(mcs_mutex) == 24,
              "mcs_mutex is its queue's tail and its ownership word");
static_assert(std::is_same_v<mcs_mutex::with_stats<struct mcs_mutex_tag>::policy, mcs_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
