#pragma once
// tas_mutex: test-and-set spin lock, every attempt an atomic exchange.
//
// The simplest lock there is, kept as the reference point of the family. Each retry is an RMW
// that pulls the lock's line away from the holder (who needs it back to release), so under
// contention waiters slow down the very thread they wait for; backoff between attempts is what
// keeps it usable, hence the default exp_backoff_policy (Anderson 1990). Prefer ttas_mutex, which
// polls with plain loads, and hybrid_mutex wherever waits can be long or threads outnumber CPUs.
//
// Cost: 4 bytes. Uncontended lock+unlock = one xchg + one release store; the lock's line stays in
// the owner's cache while no other thread touches it. Contended, every attempt is an exchange, so
// every attempt moves the line to the waiter and the holder must take it back to release.
// Figures for one machine: bench/results/report.md in the spinwise repository. Spinning is
// bounded by the policy's spin_loops; past it a waiter yields between attempts, so it progresses
// when threads outnumber CPUs (at a yield per attempt).

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/tsan.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/thread_annotations.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
class SPINWISE_CAPABILITY("mutex") tas_mutex_t {
 public:
  using policy = Policy;
  using stats = Stats;
  // This lock with statistics on, recorded into the lock class `Class`, and the same Policy (so
  // the same Tag and knobs): tas_mutex::with_stats<my_class>.
  template <class Class>
  using with_stats = tas_mutex_t<Policy, class_stats<Class>>;

  constexpr tas_mutex_t() noexcept = default;
  tas_mutex_t(const tas_mutex_t&) = delete;
  tas_mutex_t& operator=(const tas_mutex_t&) = delete;
#if defined(SPINWISE_TSAN_HOOKS)
  ~tas_mutex_t() { detail::tsan::destroy(this); }
#endif

  void lock() noexcept SPINWISE_ACQUIRE() {
    detail::tsan::pre_lock(this, 0);
    // free -> held; acquire pairs with the release store in unlock().
    if (SPINWISE_UNLIKELY(word_.exchange(kLocked, std::memory_order_acquire) != kUnlocked)) lock_slow();
    Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, 0);
  }

  [[nodiscard]] bool try_lock() noexcept SPINWISE_TRY_ACQUIRE(true) {
    detail::tsan::pre_lock(this, detail::tsan::kTryLock);
    const bool ok = word_.exchange(kLocked, std::memory_order_acquire) == kUnlocked;  // free -> held
    if (ok) Stats::on_acquire(this, lock_mode::x);
    detail::tsan::post_lock(this, detail::tsan::kTryLock | (ok ? 0u : detail::tsan::kTryLockFailed));
    return ok;
  }

  void unlock() noexcept SPINWISE_RELEASE() {
    Stats::on_release(this, lock_mode::x);
    detail::tsan::pre_unlock(this, 0);
    word_.store(kUnlocked, std::memory_order_release);  // held -> free
    detail::tsan::post_unlock(this, 0);
  }

  // A racy snapshot, for assertions and statistics only.
  bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != kUnlocked; }

 private:
  // Lock word: 0 = free, 1 = held. Invariant: 1 exactly while one thread owns the lock.
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;

  SPINWISE_COLD void lock_slow() noexcept {
    detail::spin_then_yield<Policy, Stats> wt(this, lock_mode::x);
    do {
      // Where the policy hands off promptly, a round ends early once the word looks free, polled
      // every kDelayPollNs of relaxes (25 ns on x86), as ttas_mutex does; the default's do not.
      wt.pause(detail::poll_eagerly([this] { return word_.load(std::memory_order_relaxed) == kUnlocked; }));
    } while (word_.exchange(kLocked, std::memory_order_acquire) != kUnlocked);  // free -> held
    wt.entered();
  }

  std::atomic<std::uint32_t> word_{kUnlocked};
};

struct tas_mutex_tag;
// Knobs for every tas_mutex: tas_mutex::policy::set_min_delay_ns(...) etc.
using tas_mutex = tas_mutex_t<exp_backoff_policy<tas_mutex_tag>>;

static_assert(sizeof(tas_mutex) == 4, "tas_mutex is one 32-bit word");
static_assert(std::is_same_v<tas_mutex::with_stats<struct tas_mutex_tag>::policy, tas_mutex::policy>,
              "turning statistics on keeps the alias's policy, Tag and knobs");

}  // namespace spinwise
