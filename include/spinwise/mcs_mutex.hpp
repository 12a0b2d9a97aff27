#pragma once
// mcs_mutex: MCS queue lock that is plain Lockable (no node argument), after the K42 variant.
//
// Waiters form a queue; each spins on a flag in its own queue node, so a release touches exactly
// one waiter's line and the lock scales to many spinning cores with FIFO order. Classic MCS makes
// the caller pass the node to lock() and unlock(); here the lock itself holds the holder's node:
// a waiter's node lives on its stack only while it waits, and on acquiring it moves its successor
// link into the lock (Krieger, Stumm, Unrau, Hanna 1993, "A fair fast scalable reader-writer
// lock"; Scott, "Shared-Memory Synchronization", 2nd ed., §4.3.2). No thread-local pool, no
// allocation, any number of mcs_mutexes held at once.
//
// When not to use it: below a dozen or so spinning cores a ticket or TTAS lock does as well in
// less space, and uncontended it costs a CAS in unlock too. Like every FIFO lock it cannot skip a
// preempted waiter: with more threads than CPUs use hybrid_mutex.
//
// Bounding the oversubscription damage: only the waiter next in line spins (for its policy's
// budget, then it yields); the others yield at every poll, since they cannot be served before it
// and the CPU they give up may be the one it or the holder needs. At 8 threads on 2 vCPUs that
// took a lock+unlock from ~18 us (all waiters spinning their budget) to ~1.5 us; std::mutex,
// which lets a running thread barge, does ~60 ns there (rough numbers, shared dev VM, 2026).
//
// Default policy: no_backoff_policy, as for ticket_mutex and for the same reason: a FIFO waiter
// cannot overtake, so a delay only postpones its own turn and every turn behind it. It waits in
// no delay unit (one relax per poll); its budget (spin_loops polls) is a relax count.
//
// Cost: 16 bytes (two pointers: the queue tail and the first waiter; 4x a ttas_mutex). Each
// waiter uses 16 bytes of its own stack. Uncontended lock+unlock = two CASes.
//
// States (tail_, head_.next):
//
//   (null, null) --lock--> (&head_, null) --lock by W--> (W, W) --more waiters--> (Wn, W)
//        ^                      |                                                   |
//        +------unlock----------+      unlock: W.wait = 0; W, now the holder, copies its own
//                                      next into head_.next and swings tail_ from W to &head_
//                                      if it was the last (or waits for its successor's link).

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/no_backoff_policy.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise {

namespace detail {

struct mcs_link {
  std::atomic<mcs_link*> next{nullptr};
};

// A waiter's node, on its stack from enqueue to acquisition. wait: 1 queued behind other
// waiters -> 2 next in line (set by the holder that promotes itself past the predecessor, or at
// enqueue behind a holder with an empty queue) -> 0 granted (set by unlock).
struct mcs_waiter_node : mcs_link {
  std::atomic<std::uint32_t> wait{1};
};
inline constexpr std::uint32_t kMcsGranted = 0;
inline constexpr std::uint32_t kMcsQueued = 1;
inline constexpr std::uint32_t kMcsNext = 2;

}  // namespace detail

template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") mcs_mutex_t {
 public:
  using policy = Policy;
  using stats = Stats;
  // This lock with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): mcs_mutex::with_stats<my_class>.
  template <class Class>
  using with_stats = mcs_mutex_t<Policy, class_stats<Class>>;

  constexpr mcs_mutex_t() noexcept = default;
  mcs_mutex_t(const mcs_mutex_t&) = delete;
  mcs_mutex_t& operator=(const mcs_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~mcs_mutex_t() { detail::tsan::destroy(this); }
#endif

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    detail::mcs_link* expected = nullptr;
    // tail: null -> &head_ (free -> held, no queue); acquire pairs with unlock()'s release CAS.
    if (SPINWISE_UNLIKELY(!tail_.compare_exchange_strong(expected, &head_, std::memory_order_acquire,
                                                         std::memory_order_relaxed))) {
      lock_slow(expected);
    }
    Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    detail::mcs_link* expected = nullptr;
    const bool ok = tail_.load(std::memory_order_relaxed) == nullptr &&
                    tail_.compare_exchange_strong(expected, &head_, std::memory_order_acquire,
                                                  std::memory_order_relaxed);  // as in lock()
    if (ok) Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    detail::tsan::pre_unlock(this, 0);
    // Acquire pairs with the release store of a waiter linking itself (lock_slow).
    detail::mcs_link* succ = head_.next.load(std::memory_order_acquire);
    if (succ == nullptr) {
      detail::mcs_link* expected = &head_;
      // tail: &head_ -> null (held, no queue -> free); release pairs with lock()'s acquire.
      if (SPINWISE_LIKELY(tail_.compare_exchange_strong(expected, nullptr, std::memory_order_release,
                                                        std::memory_order_relaxed))) {
        detail::tsan::post_unlock(this, 0);
        return;
      }
      succ = wait_for_link(head_);  // a waiter swung tail_ but has not linked itself yet
    }
    // Hand over: the successor's wait 1 -> 0; release pairs with its acquire load in lock_slow.
    static_cast<detail::mcs_waiter_node*>(succ)->wait.store(detail::kMcsGranted, std::memory_order_release);
    detail::tsan::post_unlock(this, 0);
  }

  bool is_locked() const noexcept { return tail_.load(std::memory_order_relaxed) != nullptr; }

 private:
  // tail_: null = free; &head_ = held, nobody queued; else the last queued waiter's node.
  // head_.next: the first queued waiter, read and rewritten only by the holder (and written by
  // a waiter linking itself behind a held lock with an empty queue).
  // Invariant: tail_ == null implies head_.next == null; every queued waiter but the last is
  // linked from its predecessor (or from head_) once its enqueuer finishes its link store.

  SPINWISE_COLD void lock_slow(detail::mcs_link* prev) noexcept {
    detail::wait_meter<Stats> m(this, lock_mode::x, {});
    enqueue_and_wait(prev, m);
    m.done();
  }

  void enqueue_and_wait(detail::mcs_link* prev, detail::wait_meter<Stats>& m) noexcept {
    for (;;) {
      if (prev == nullptr) {
        // Freed since we looked: null -> &head_ as in lock().
        if (tail_.compare_exchange_weak(prev, &head_, std::memory_order_acquire, std::memory_order_relaxed))
          return;
        continue;
      }
      detail::mcs_waiter_node node;
      // Directly behind head_ means next in line; behind another waiter, that waiter promotes us.
      node.wait.store(prev == &head_ ? detail::kMcsNext : detail::kMcsQueued, std::memory_order_relaxed);
      // Enqueue: tail prev -> &node. Release publishes node's fields; acquire pairs with the
      // holder's release CAS in the promotion below (its head_.next reset comes before our link).
      if (!tail_.compare_exchange_weak(prev, &node, std::memory_order_acq_rel, std::memory_order_relaxed))
        continue;
      prev->next.store(&node, std::memory_order_release);  // link behind prev (a node, or head_)

      typename Policy::waiter w;
      for (;;) {
        const std::uint32_t state =
            node.wait.load(std::memory_order_acquire);  // pairs with unlock()'s handover
        if (state == detail::kMcsGranted) break;
        if (state == detail::kMcsNext && !w.is_completed()) {
          m.snooze(w, [&] { return node.wait.load(std::memory_order_relaxed) == detail::kMcsGranted; });
        } else {
          m.yield();
        }
      }
      detail::finish_spin(w, !w.is_completed());
      m.account(w);
      // We hold the lock. Move our successor link into the lock: node dies when we return.
      detail::mcs_link* succ = node.next.load(std::memory_order_acquire);
      if (succ == nullptr) {
        head_.next.store(nullptr, std::memory_order_relaxed);
        detail::mcs_link* expected = &node;
        // tail: &node -> &head_ (last in queue -> held, no queue). Release orders the reset above
        // before the link of whoever enqueues behind head_ next.
        if (tail_.compare_exchange_strong(expected, &head_, std::memory_order_release,
                                          std::memory_order_relaxed)) {
          return;
        }
        succ = wait_for_link(node);  // someone enqueued behind node: wait for its link
      }
      head_.next.store(succ, std::memory_order_relaxed);
      // queued -> next in line. Only the holder writes a linked waiter's state, so our unlock's
      // grant cannot precede this store.
      static_cast<detail::mcs_waiter_node*>(succ)->wait.store(detail::kMcsNext, std::memory_order_relaxed);
      return;
    }
  }

  // Waits out the two-instruction window between an enqueuer's CAS on tail_ and its link store.
  // Bounded like any wait here: if the enqueuer was preempted in between, we yield.
  SPINWISE_COLD static detail::mcs_link* wait_for_link(const detail::mcs_link& link) noexcept {
    typename Policy::waiter w;
    for (;;) {
      if (detail::mcs_link* succ = link.next.load(std::memory_order_acquire))
        return succ;  // pairs with the link store
      if (!w.is_completed()) {
        w.snooze();
      } else {
        std::this_thread::yield();
      }
    }
  }

  std::atomic<detail::mcs_link*> tail_{nullptr};
  detail::mcs_link head_;
};

struct mcs_mutex_tag;
// Knobs for every mcs_mutex: mcs_mutex::policy::set_spin_loops(...).
using mcs_mutex = mcs_mutex_t<no_backoff_policy<mcs_mutex_tag>>;

static_assert(sizeof(mcs_mutex) == 2 * sizeof(void*), "mcs_mutex is two pointers");
static_assert(std::is_same_v<mcs_mutex::with_stats<struct mcs_mutex_tag>::policy, mcs_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
