#pragma once
// Helpers every test area shares: how much work a stress test does (SPINWISE_TEST_SCALE), how many
// CPUs there are, and whether a thread sleeps in the kernel.

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

}  // namespace spinwise_test
