#pragma once
// ticket_mutex: FIFO spin lock. Take a number (next_), wait until it is served (owner_).
//
// Fair by construction: threads acquire in arrival order, so no waiter starves and per-thread op
// counts come out even. The price is that the lock can only go to the next ticket: if that thread
// is not running, nobody gets the lock. With more threads than CPUs this is a collapse, not a
// slowdown: spinwise-bench measured ticket_mutex at 0.04x-0.42x of std::mutex with 4-16 threads per
// CPU on a 2-vCPU Emerald Rapids KVM guest (bench/results/report.md, 2026-11-30).
//
// How this one bounds the damage: only the thread next in line spins; a waiter with someone
// between it and the holder yields at every poll (it cannot be served before that someone, and
// the CPU it gives up may be the one the next-in-line or the holder needs), and the next-in-line
// itself yields once its policy's spin budget is spent. It still cannot skip a preempted
// next-in-line: when threads routinely outnumber CPUs, use hybrid_mutex.
//
// Default policy: no_backoff_policy. Backoff thins RMW retries, and a ticket waiter retries
// none: it only reads owner_, and any delay it adds lands on its own handoff and every one behind.
// So it waits in no delay unit (one relax per poll), the one kind of wait spinwise does not
// default to a time-based policy; its budget (spin_loops polls) is a relax count. A time-based
// policy (time_policy, exp_backoff_policy) still works: ticket_mutex_t<time_policy<ticket_mutex_tag>>.
//
// Cost: 8 bytes (two 32-bit counters, so that unlock is a plain store, not an RMW). Uncontended
// lock+unlock = one xadd, one load, one store.

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

template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") ticket_mutex_t {
 public:
  using policy = Policy;
  using stats = Stats;
  // This lock with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): ticket_mutex::with_stats<my_class>.
  template <class Class>
  using with_stats = ticket_mutex_t<Policy, class_stats<Class>>;

  constexpr ticket_mutex_t() noexcept = default;
  ticket_mutex_t(const ticket_mutex_t&) = delete;
  ticket_mutex_t& operator=(const ticket_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~ticket_mutex_t() { detail::tsan::destroy(this); }
#endif

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    // (next, owner): n,o -> n+1,o. Relaxed: the ticket orders nothing; the acquire is the
    // owner_ load that sees our number served.
    const std::uint32_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
    // Acquire pairs with the release store of owner_ in unlock().
    if (SPINWISE_UNLIKELY(owner_.load(std::memory_order_acquire) != ticket)) lock_slow(ticket);
    Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    // Free means next_ == owner_. (next, owner): n,n -> n+1,n, taking ticket n, which is being
    // served: the CAS fails if anyone took a ticket since we read next_, and owner_ cannot pass
    // next_. Acquire (the owner_ load) pairs with unlock()'s release store.
    std::uint32_t n = next_.load(std::memory_order_relaxed);
    const bool ok =
        owner_.load(std::memory_order_acquire) == n &&
        next_.compare_exchange_strong(n, n + 1, std::memory_order_acquire, std::memory_order_relaxed);
    if (ok) Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    detail::tsan::pre_unlock(this, 0);
    // (next, owner): n,o -> n,o+1. Only the holder writes owner_, so load + store is enough.
    owner_.store(owner_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    detail::tsan::post_unlock(this, 0);
  }

  bool is_locked() const noexcept {
    return next_.load(std::memory_order_relaxed) != owner_.load(std::memory_order_relaxed);
  }
  // Threads queued behind the holder (a racy snapshot, for tests and statistics).
  std::uint32_t waiting() const noexcept {
    const std::uint32_t n = next_.load(std::memory_order_relaxed) - owner_.load(std::memory_order_relaxed);
    return n > 1 && n < 0x80000000u ? n - 1 : 0;
  }

 private:
  // next_: the next ticket to hand out; owner_: the ticket being served. Both wrap mod 2^32.
  // Invariant: next_ - owner_ = holders + waiters (0 = free, 1 = held, k > 1 = k - 1 waiting);
  // owner_ only advances, by its holder.
  SPINWISE_COLD void lock_slow(std::uint32_t ticket) noexcept {
    typename Policy::waiter w;
    detail::wait_meter<Stats> m(this, lock_mode::x, {});
    for (;;) {
      const std::uint32_t served = owner_.load(std::memory_order_acquire);  // pairs with unlock()
      if (served == ticket) break;
      const std::uint32_t ahead = ticket - served;  // the holder, plus waiters before us
      if (ahead > 1 || w.is_completed()) {
        m.yield();
      } else {
        m.snooze(w, [&] { return owner_.load(std::memory_order_relaxed) == ticket; });
      }
    }
    detail::finish_spin(w, !w.is_completed());
    m.account(w);
    m.done();
  }

  std::atomic<std::uint32_t> next_{0};
  std::atomic<std::uint32_t> owner_{0};
};

struct ticket_mutex_tag;
// Knobs for every ticket_mutex: ticket_mutex::policy::set_spin_loops(...).
using ticket_mutex = ticket_mutex_t<no_backoff_policy<ticket_mutex_tag>>;

static_assert(sizeof(ticket_mutex) == 8, "ticket_mutex is two 32-bit counters");
static_assert(std::is_same_v<ticket_mutex::with_stats<struct ticket_mutex_tag>::policy, ticket_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
