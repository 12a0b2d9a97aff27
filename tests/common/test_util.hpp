#pragma once
// Helpers every test area shares: how much work a stress test does (SPINWISE_TEST_SCALE), how many
// CPUs there are, whether a thread sleeps in the kernel, and how many sleep on a futex word.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace spinwise_test {

// SPINWISE_TEST_SCALE (default 1.0): CI runs 0.25 under TSan and qemu, 0.5 under ASan.
inline double scale() {
  const char* s = std::getenv("SPINWISE_TEST_SCALE");
  const double v = s != nullptr ? std::atof(s) : 1.0;
  return v > 0.0 ? v : 1.0;
}

// `n` scaled, never below `floor` (a stress test must still do work at the smallest scale).
inline int scaled(int n, int floor = 1) { return std::max(floor, static_cast<int>(n * scale())); }

inline unsigned cpus() { return std::max(1u, std::thread::hardware_concurrency()); }

inline pid_t this_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// The state letter of thread `tid` of this process ('S': asleep in the kernel, here parked on a
// futex); '?' where /proc does not say (qemu-user).
inline char thread_state(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(f, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

// Waits until thread `tid` (0: not started yet) sleeps in the kernel: true once seen asleep, false
// where /proc cannot tell (after a short grace period). A thread that never sleeps within 60 s
// aborts the test binary with a message: a lock that should park and spins forever is a bug.
inline bool await_asleep(const std::atomic<pid_t>& tid) {
  while (tid.load() == 0) std::this_thread::yield();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const char st = thread_state(tid.load());
    if (st == '?') {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return false;
    }
    if (st == 'S') return true;
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "FATAL: thread %d never went to sleep (state %c)\n", static_cast<int>(tid.load()),
                   st);
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// How many threads the kernel has queued on the private futex word `word` (as the locks park),
// -1 when `word` no longer holds `expected` or the count moved while read, -2 where the kernel (or
// qemu-user) refuses to say.
// A thread counted here is inside FUTEX_WAIT, asleep, not merely about to call it: "counted asleep
// by the lock" is not "parked", and a test that releases the lock between the two sees a futex
// wait that returns at once (issue 42: 231 failures in 300 runs on a Zen 5 guest). The count is
// read by moving every waiter to a scratch word and back (FUTEX_CMP_REQUEUE, twice), so it may only
// be used while nothing wakes `word`: the test holds the lock the waiters wait for.
inline long futex_waiters(const std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  static std::atomic<std::uint32_t> scratch{0};
  auto* w = const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(&word));
  auto* s = reinterpret_cast<std::uint32_t*>(&scratch);
  const auto all = reinterpret_cast<const struct timespec*>(static_cast<std::uintptr_t>(INT_MAX));
  const long out = syscall(SYS_futex, w, FUTEX_CMP_REQUEUE_PRIVATE, 0, all, s, expected);
  if (out < 0) return errno == EAGAIN ? -1 : -2;
  const long back = syscall(SYS_futex, s, FUTEX_CMP_REQUEUE_PRIVATE, 0, all, w, scratch.load());
  // Fewer back than away: a waiter woke spuriously on the scratch word, and the kernel's FUTEX_WAIT
  // queued it again on the word it was called with (seen once in 1500 runs). No one is lost, but
  // the count is not a snapshot: the caller asks again.
  return back == out ? out : -1;
}

// Waits until exactly `n` threads sleep in the kernel on `word` (holding `expected`): the handshake
// for "the waiter parked". False where the kernel cannot say (the caller then asserts nothing
// that needs the park). A count that never comes within 60 s aborts the binary with a message.
inline bool await_futex_waiters(const std::atomic<std::uint32_t>& word, std::uint32_t expected, long n) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const long got = futex_waiters(word, expected);
    if (got == -2) return false;
    if (got == n) return true;
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "FATAL: %ld threads never slept on the futex word (last count %ld)\n", n, got);
      std::abort();
    }
    std::this_thread::yield();
  }
}

}  // namespace spinwise_test
