#pragma once
// Where a lock was taken, and in which mode: what the statistics count per mode and what lock
// tracking (<spinwise/lock_stats.hpp>) shows for every holder and waiter.
//
//   latch.lock_sx(SPINWISE_SITE);                  // this file and line, for the tracking
//   spinwise::lock_guard g(mu, SPINWISE_SITE);     // the same through a guard
//
// A site names a string literal of the module that took the lock: report it while that module
// is loaded.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace spinwise {

// A lock's mode, InnoDB's three: exclusive (a mutex's only mode, RW_X_LATCH), shared (S,
// RW_S_LATCH) and shared-exclusive (SX, RW_SX_LATCH; sx_lock only).
enum class lock_mode : std::uint8_t { x = 0, s = 1, sx = 2 };
inline constexpr std::size_t kLockModes = 3;

// "x", "s", "sx": the mode's label in the JSON report and the Prometheus exposition.
constexpr std::string_view lock_mode_key(lock_mode m) noexcept {
  return m == lock_mode::x ? "x" : m == lock_mode::s ? "s" : "sx";
}
// InnoDB's SEMAPHORES line for the mode: "RW-excl", "RW-shared", "RW-sx".
constexpr std::string_view lock_mode_innodb_name(lock_mode m) noexcept {
  return m == lock_mode::x ? "RW-excl" : m == lock_mode::s ? "RW-shared" : "RW-sx";
}

struct lock_site {
  const char* file = nullptr;  // nullptr: not given (the lock was taken without a site)
  int line = 0;
};

}  // namespace spinwise

// The caller's file and line as a lock_site.
#define SPINWISE_SITE (::spinwise::lock_site{__FILE__, __LINE__})
