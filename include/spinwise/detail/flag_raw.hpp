#pragma once
// The algorithm of the test-and-set locks: one word, 0 free, 1 held (1 exactly while one thread
// owns the lock). kTestFirst = false is tas_mutex, every attempt an exchange; kTestFirst = true is
// ttas_mutex, which polls with plain loads and tries the exchange only on a free-looking word
// (InnoDB's TTASMutex: is_free, then try_lock). The shell (lock_shell.hpp) makes it a lock.

#include <atomic>
#include <cstdint>

#include "spinwise/config.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"

namespace spinwise::detail {

template <class Policy, bool kTestFirst>
class flag_raw : public raw_lock {
 public:
  using policy = Policy;

  // A racy snapshot, for assertions and statistics only.
  bool is_locked() const noexcept { return !looks_free(); }

 protected:
  // A timed wait ends at its deadline: nothing to undo, a waiter only polls or retries.
  static constexpr bool kTimedWaits = true;

  // lock()'s first attempt is the exchange either way: on an uncontended lock a load first would
  // only add a shared -> exclusive upgrade of the line.
  bool acquire_fast() noexcept { return exchange_free(); }
  // try_lock(): with kTestFirst, a busy lock costs a load, not a stolen line.
  bool try_acquire() noexcept { return (!kTestFirst || looks_free()) && exchange_free(); }

  // Policy rounds between attempts while the budget lasts, then a yield per attempt, to let a
  // preempted holder run. With kTestFirst a waiter polls with loads, which keep its copy of the
  // line shared, and tries the exchange only when the word looks free; if another thread won it,
  // it goes on with the same budget. Where the policy hands off promptly (prompt_time_policy), a
  // round ends early once the word looks free, polled every kDelayPollNs of relaxes (25 ns on
  // x86) rather than at each counter check; time_policy's rounds run their course.
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site) noexcept {
    spin_then_yield<Policy, Stats> wt(this, lock_mode::x, site);
    const auto free_now = poll_eagerly([this] { return looks_free(); });
    do {
      if constexpr (kTestFirst) {
        while (!looks_free()) {
          if (d.expired()) return false;
          wt.pause(free_now);
        }
      } else {
        if (d.expired()) return false;
        wt.pause(free_now);
      }
    } while (!exchange_free());
    wt.entered();
    return true;
  }

  void release() noexcept { word_.store(kUnlocked, std::memory_order_release); }  // held -> free

 private:
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;

  // free -> held; acquire pairs with the release store in release().
  bool exchange_free() noexcept { return word_.exchange(kLocked, std::memory_order_acquire) == kUnlocked; }
  bool looks_free() const noexcept { return word_.load(std::memory_order_relaxed) == kUnlocked; }

  std::atomic<std::uint32_t> word_{kUnlocked};
};

}  // namespace spinwise::detail
