#pragma once
// Deadlines of the timed lock calls: one place that turns a duration or a time point of any clock
// into "has it passed?" and "how long may the next sleep last?", without overflow at the edges.
//
// The edges, and what each means here:
//   - rel <= 0 (zero, negative, duration::min()): the deadline has passed; the call is a try_lock.
//     A negative duration is never added to now(): now() + hours(-3'000'000) is signed overflow
//     (below about -292 years in nanoseconds), which once made a lock wait for centuries.
//   - rel beyond a century (duration::max() included): no deadline; now() + rel would overflow.
//   - a time point of any clock, any representation (time_point::min() and max() included): only
//     compared with Clock::now(), and the time left is computed in double, so no subtraction
//     overflows.
// A clock that can jump (system_clock) is read again at least every kJumpRecheck while parked, so
// a deadline moved by a clock step is seen within that time; a steady clock's sleep is capped at an
// hour (a long futex timeout and a deadline an hour away behave alike).

#include <chrono>
#include <cstdint>

namespace spinwise::detail {

inline constexpr std::chrono::nanoseconds kJumpRecheck = std::chrono::milliseconds(10);
inline constexpr std::chrono::nanoseconds kSteadyRecheck = std::chrono::hours(1);

// No deadline: lock(), lock_shared().
struct no_deadline {
  static constexpr bool kTimed = false;
  static constexpr bool expired() noexcept { return false; }
  static constexpr std::chrono::nanoseconds park_limit() noexcept { return std::chrono::nanoseconds(0); }
};

// A time point of any clock and any duration. It is converted once to the clock's own duration,
// rounded up, so that each check is one now() and one comparison in the clock's representation:
// comparing now() with a time point of a coarser duration converts that one to the finer
// duration, and time_point<steady_clock, seconds>::max() (or hours(-3'000'000)) overflows in
// nanoseconds. A time point beyond half the clock's range is never reached (for nanosecond clocks
// that is 146 years from the epoch); one below half its negative range has always passed. A clock
// whose now() throws terminates the program (the lock calls are noexcept).
template <class Clock, class Duration>
class clock_deadline {
 public:
  static constexpr bool kTimed = true;

  explicit clock_deadline(const std::chrono::time_point<Clock, Duration>& at) noexcept {
    using clock_duration = typename Clock::duration;
    const double at_s = std::chrono::duration<double>(at.time_since_epoch()).count();
    const double max_s = std::chrono::duration<double>(clock_duration::max()).count() / 2;
    const double min_s = std::chrono::duration<double>(clock_duration::min()).count() / 2;
    if (!(at_s < max_s)) {
      never_ = true;
    } else if (!(at_s > min_s)) {
      at_ = clock_point::min();
    } else {
      at_ = clock_point(std::chrono::ceil<clock_duration>(at.time_since_epoch()));
    }
  }

  bool expired() const noexcept { return !never_ && !(Clock::now() < at_); }

  // How long one sleep may last: the time left, rounded up, capped as the file top says; zero once
  // the deadline has passed.
  std::chrono::nanoseconds park_limit() const noexcept {
    constexpr std::chrono::nanoseconds kCap = Clock::is_steady ? kSteadyRecheck : kJumpRecheck;
    if (never_) return kCap;
    using ns_d = std::chrono::duration<double, std::nano>;
    const double left = ns_d(at_.time_since_epoch()).count() - ns_d(Clock::now().time_since_epoch()).count();
    if (!(left > 0)) return std::chrono::nanoseconds(0);
    const double cap = static_cast<double>(kCap.count());
    return std::chrono::nanoseconds(static_cast<std::int64_t>(left < cap ? left + 1 : cap));
  }

 private:
  using clock_point = typename Clock::time_point;
  clock_point at_{};
  bool never_ = false;
};

// steady_clock::now() + rel, for the *_for calls: time_point::min() when rel <= 0 (already passed,
// no addition made), time_point::max() beyond a century (never).
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(const std::chrono::duration<Rep, Period>& rel) noexcept {
  using std::chrono::steady_clock;
  const double seconds = std::chrono::duration<double>(rel).count();  // no overflow for any Rep
  if (!(seconds > 0)) return steady_clock::time_point::min();
  if (seconds > 3.2e9) return steady_clock::time_point::max();
  return steady_clock::now() + std::chrono::ceil<steady_clock::duration>(rel);
}

}  // namespace spinwise::detail
