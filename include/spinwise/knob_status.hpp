#pragma once
// knob_status: what a wait policy's knob setter returns, and the bound every spin_loops knob shares
// (kMaxSpinLoops). The knobs themselves are static members of each policy (wait_policy.hpp); the
// registry that finds them by name is knob_class.hpp, the "<class>.<knob>=<value>" text
// knob_text.hpp.
//
// Knobs in one paragraph: every policy family has process-wide values (the policy with Tag =
// void, e.g. innodb_policy<>) and, for any other Tag, per-field overrides that fall back to the
// process-wide value while unset. Getters and setters are static members of the policy, are
// thread-safe (relaxed atomics; a family's fields live in one 64-bit word, so a reader never sees
// half of a multi-field update) and may be called on a live process: a waiter reads the knobs at
// each snooze, so even a thread already spinning sees a change at its next round. A setter
// validates first and changes nothing when it fails; a setter taking several values is all or
// nothing.

#include <cstdint>
#include <string_view>
#include <system_error>

#include "spinwise/errc.hpp"

namespace spinwise {

// What a knob setter returns: ok, or why nothing was changed.
//   reason() == errc::knob_out_of_range   a value outside the knob's bounds
//   reason() == errc::unknown_knob        an unknown knob name
//   reason() == errc::inconsistent_knobs  values each in range but together breaking a rule
// code() is the same as a std::errc (argument_out_of_domain for the first, invalid_argument for the
// others), as before spinwise had its own category; error_code() (or the implicit conversion) is
// the spinwise code, equivalent to code() as a condition.
// message() is a static, human-readable sentence naming the knob and its bounds ("" when ok).
class [[nodiscard]] knob_status {
 public:
  constexpr knob_status() noexcept = default;
  constexpr knob_status(errc reason, const char* message) noexcept : reason_(reason), message_(message) {}
  // The form before errc: out of domain is a range error; an invalid argument is an unknown name
  // when the message says so (every Spec's kUnknownName starts "unknown "), else an inconsistency.
  constexpr knob_status(std::errc code, const char* message) noexcept
      : reason_(from_generic(code, message)), message_(message) {}

  constexpr bool ok() const noexcept { return reason_ == errc{}; }
  constexpr explicit operator bool() const noexcept { return ok(); }
  constexpr errc reason() const noexcept { return reason_; }
  constexpr std::errc code() const noexcept {
    return ok()                                 ? std::errc{}
           : reason_ == errc::knob_out_of_range ? std::errc::argument_out_of_domain
                                                : std::errc::invalid_argument;
  }
  constexpr const char* message() const noexcept { return message_; }
  std::error_code error_code() const noexcept { return ok() ? std::error_code{} : make_error_code(reason_); }
  operator std::error_code() const noexcept { return error_code(); }

 private:
  static constexpr errc from_generic(std::errc code, const char* message) noexcept {
    if (code == std::errc{}) return errc{};
    if (code == std::errc::argument_out_of_domain) return errc::knob_out_of_range;
    return std::string_view(message == nullptr ? "" : message).substr(0, 8) == "unknown "
               ? errc::unknown_knob
               : errc::inconsistent_knobs;
  }

  errc reason_{};
  const char* message_ = "";
};

// Upper bound of every spin_loops knob. MySQL accepts up to 2^32-1 rounds, which only means
// "never stop spinning", and spinwise treats unbounded spinning as a bug (a preempted holder
// would make every waiter burn whole scheduler slices). A million InnoDB rounds at the defaults
// is already a few seconds of spinning per wait.
inline constexpr std::uint32_t kMaxSpinLoops = 1'000'000;

}  // namespace spinwise
