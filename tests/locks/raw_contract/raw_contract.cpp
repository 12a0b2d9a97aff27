// The raw-lock contract of detail/lock_shell.hpp, checked by the compiler (raw_contract.cmake):
// with no SPINWISE_CONTRACT_CASE a minimal raw lock that keeps it makes an exclusive, a shared
// and an SX lock; each case takes one member away (or gets its type wrong) and the shell must
// refuse it with the static_assert that names the member, not fail somewhere in a wait.

#include <atomic>
#include <cstdint>

#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/no_backoff_policy.hpp"

#ifndef SPINWISE_CONTRACT_CASE
#define SPINWISE_CONTRACT_CASE 0
#endif

namespace {

using spinwise::lock_site;
using spinwise::detail::no_deadline;

struct tag;

class raw : public spinwise::detail::raw_lock {
 public:
#if SPINWISE_CONTRACT_CASE != 1
  using policy = spinwise::no_backoff_policy<tag>;
#endif
  bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != 0; }

 protected:
#if SPINWISE_CONTRACT_CASE == 6
  static constexpr bool kTimedWaits = true;  // but acquire_slow below takes no deadline but no_deadline
#endif
#if SPINWISE_CONTRACT_CASE != 2
  bool try_acquire() noexcept {
    std::uint32_t e = 0;
    return word_.compare_exchange_strong(e, 1, std::memory_order_acquire);
  }
#endif
#if SPINWISE_CONTRACT_CASE == 3
  int acquire_fast() noexcept { return 0; }  // neither bool nor first_try<Word>
#else
  bool acquire_fast() noexcept { return try_acquire_word(); }
#endif
#if SPINWISE_CONTRACT_CASE != 4
  template <class Stats>
  bool acquire_slow(no_deadline, lock_site) noexcept {
    while (!try_acquire_word()) {
    }
    return true;
  }
#endif
#if SPINWISE_CONTRACT_CASE != 5
  void release() noexcept { word_.store(0, std::memory_order_release); }
#endif

#if SPINWISE_CONTRACT_CASE != 7
  bool try_acquire_shared() noexcept { return try_acquire_word(); }
#endif
  bool acquire_shared_fast() noexcept { return try_acquire_word(); }
  template <class Stats>
  bool acquire_shared_slow(no_deadline, lock_site) noexcept {
    while (!try_acquire_word()) {
    }
    return true;
  }
  void release_shared() noexcept { word_.store(0, std::memory_order_release); }

  bool acquire_sx_fast() noexcept { return try_acquire_word(); }
  bool try_acquire_sx() noexcept { return try_acquire_word(); }
  template <class Stats>
  void acquire_sx_slow(lock_site) noexcept {
    while (!try_acquire_word()) {
    }
  }
#if SPINWISE_CONTRACT_CASE != 8
  void release_sx() noexcept { word_.store(0, std::memory_order_release); }
#endif

 private:
  bool try_acquire_word() noexcept {
    std::uint32_t e = 0;
    return word_.compare_exchange_strong(e, 1, std::memory_order_acquire);
  }
#if SPINWISE_CONTRACT_CASE != 9
  std::atomic<std::uint32_t> word_{0};
#else
  static inline std::atomic<std::uint32_t> word_{0};  // no word of its own
#endif
};

// An SX lock over the shared shell, as sx_lock is.
class sx_lock_like : public spinwise::detail::shared_lock_shell<raw, spinwise::no_stats> {
  using base = spinwise::detail::shared_lock_shell<raw, spinwise::no_stats>;
  using typename base::sx_mode;

 public:
  void lock_sx() noexcept { base::template enter<sx_mode>(*this, {}); }
  void unlock_sx() noexcept { base::template leave<sx_mode>(*this); }
};

}  // namespace

int main() {
  sx_lock_like l;
  l.lock();
  l.unlock();
  l.lock_shared();
  l.unlock_shared();
  l.lock_sx();
  l.unlock_sx();
  return l.is_locked() ? 1 : 0;
}
