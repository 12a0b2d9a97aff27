#pragma once
// Helpers shared by the lock tests: lock traits, a thread to ask try_* from, and a clock with a
// negative now(), on top of tests/common/test_util.hpp (work scaling, thread counts, thread states).

#include <chrono>
#include <ratio>
#include <thread>
#include <type_traits>
#include <utility>

#include "test_util.hpp"

namespace spinwise_test {

template <class M, class = void>
struct is_timed_lockable : std::false_type {};
template <class M>
struct is_timed_lockable<
    M, std::void_t<decltype(std::declval<M&>().try_lock_for(std::chrono::milliseconds(1))),
                   decltype(std::declval<M&>().try_lock_until(std::chrono::steady_clock::now()))>>
    : std::true_type {};

// Runs f in a fresh thread and returns what it returned (try_* must be asked of another thread).
template <class F>
auto in_other_thread(F f) {
  decltype(f()) r{};
  std::thread([&] { r = f(); }).join();
  return r;
}

// A clock whose now() is negative (its epoch a century after steady_clock's), in microseconds,
// and not steady: time_point::max() - now() overflows its own representation.
struct negative_clock {
  using rep = long long;
  using period = std::micro;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<negative_clock>;
  static constexpr bool is_steady = false;
  static time_point now() noexcept {
    return time_point(
        std::chrono::duration_cast<duration>(std::chrono::steady_clock::now().time_since_epoch()) -
        std::chrono::hours(24 * 365 * 100));
  }
};

}  // namespace spinwise_test
