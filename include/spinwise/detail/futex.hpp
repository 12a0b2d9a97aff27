#pragma once
// Parking on a 32-bit word: Linux futex, process-private. Elsewhere the wait degrades to a
// yield, which keeps every lock correct (waiters re-check their condition) if less frugal.
//
// A waiter must re-check its condition after any return: wake-ups can be spurious, and a
// futex_wait returns at once when *word != expected (the lost-wake-up guard).
//
// The waits return whether the thread slept in the kernel: false when the word no longer held
// `expected` (EAGAIN), the timeout was not positive, or there is no futex (a yield is not a sleep).
// Statistics count a park only when it slept.

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace spinwise::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex needs a bare 32-bit word");

#if defined(__linux__)
inline long futex_call(const std::atomic<std::uint32_t>* word, int op, std::uint32_t val,
                       const struct timespec* timeout) noexcept {
  return syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(word), op | FUTEX_PRIVATE_FLAG, val,
                 timeout, nullptr, 0);
}

// Whether a FUTEX_WAIT that returned `rc` slept: anything but "the word had changed".
inline bool futex_slept(long rc) noexcept { return rc == 0 || errno != EAGAIN; }

// Sleeps while *word == expected, until woken (or spuriously).
inline bool futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  return futex_slept(futex_call(&word, FUTEX_WAIT, expected, nullptr));
}

// As futex_wait, for at most `timeout` (relative, CLOCK_MONOTONIC). Non-positive: returns at once.
inline bool futex_wait_for(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
                           std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0) return false;
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  return futex_slept(futex_call(&word, FUTEX_WAIT, expected, &ts));
}

inline void futex_wake_one(const std::atomic<std::uint32_t>& word) noexcept {
  futex_call(&word, FUTEX_WAKE, 1, nullptr);
}

inline void futex_wake_all(const std::atomic<std::uint32_t>& word) noexcept {
  futex_call(&word, FUTEX_WAKE, 0x7fffffff, nullptr);
}
#else
inline bool futex_wait(const std::atomic<std::uint32_t>&, std::uint32_t) noexcept {
  std::this_thread::yield();
  return false;
}
inline bool futex_wait_for(const std::atomic<std::uint32_t>&, std::uint32_t,
                           std::chrono::nanoseconds) noexcept {
  std::this_thread::yield();
  return false;
}
inline void futex_wake_one(const std::atomic<std::uint32_t>&) noexcept {}
inline void futex_wake_all(const std::atomic<std::uint32_t>&) noexcept {}
#endif

}  // namespace spinwise::detail
