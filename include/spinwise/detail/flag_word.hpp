#pragma once
// The lock word of the test-and-set locks (tas_mutex, ttas_mutex): 0 free, 1 held; 1 exactly
// while one thread owns the lock. Each lock keeps how it takes the word and how it waits.

#include <atomic>
#include <cstdint>

#include "spinwise/detail/lock_shell.hpp"

namespace spinwise::detail {

class flag_word : public raw_lock {
 public:
  // A racy snapshot, for assertions and statistics only.
  bool is_locked() const noexcept { return !looks_free(); }

 protected:
  // A timed wait ends at its deadline: nothing to undo, a waiter only polls or retries.
  static constexpr bool kTimedWaits = true;

  // free -> held; acquire pairs with the release store in release().
  bool exchange_free() noexcept { return word_.exchange(kLocked, std::memory_order_acquire) == kUnlocked; }
  bool looks_free() const noexcept { return word_.load(std::memory_order_relaxed) == kUnlocked; }
  void release() noexcept { word_.store(kUnlocked, std::memory_order_release); }  // held -> free

 private:
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;

  std::atomic<std::uint32_t> word_{kUnlocked};
};

}  // namespace spinwise::detail
