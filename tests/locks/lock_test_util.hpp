#pragma once
// Helpers shared by the lock tests: work scaling, thread counts, and lock traits.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <type_traits>
#include <utility>

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

template <class M, class = void>
struct is_timed_lockable : std::false_type {};
template <class M>
struct is_timed_lockable<M, std::void_t<decltype(std::declval<M&>().try_lock_for(std::chrono::milliseconds(1))),
                                        decltype(std::declval<M&>().try_lock_until(
                                            std::chrono::steady_clock::now()))>> : std::true_type {};

}  // namespace spinwise_test
