#pragma once
// The vocabulary every wait policy shares: the Relax hook, the result of a knob setter, and the
// bounds all policies agree on. The policies themselves live in innodb_policy.hpp,
// time_policy.hpp, exp_backoff_policy.hpp and no_backoff_policy.hpp (wait_policy.hpp has them all).
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
#include <system_error>

#include "spinwise/arch.hpp"

namespace spinwise {

// The default Relax of every policy: n relax instructions of the active backend kind.
// A Relax is any type with `static void relax_n(std::uint32_t n) noexcept`. It may also have
// `static double relax_ns() noexcept`, the time one of its relaxes takes on the calling CPU; the
// time-based policies then convert nanoseconds with it instead of spinwise::relax_ns_here()
// (an emulated Broadwell PAUSE must be converted at its own length, not the host's).
struct cpu_relaxer {
  static void relax_n(std::uint32_t n) noexcept { cpu_relax_n(n); }
};

// What a knob setter returns: ok, or why nothing was changed.
//   code() == std::errc::argument_out_of_domain  a value outside the knob's bounds
//   code() == std::errc::invalid_argument         an unknown knob name, or values that are each
//                                                 in range but inconsistent (min above max)
// message() is a static, human-readable sentence naming the knob and its bounds ("" when ok).
class [[nodiscard]] knob_status {
 public:
  constexpr knob_status() noexcept = default;
  constexpr knob_status(std::errc code, const char* message) noexcept : code_(code), message_(message) {}

  constexpr bool ok() const noexcept { return code_ == std::errc{}; }
  constexpr explicit operator bool() const noexcept { return ok(); }
  constexpr std::errc code() const noexcept { return code_; }
  constexpr const char* message() const noexcept { return message_; }
  std::error_code error_code() const noexcept { return std::make_error_code(code_); }

 private:
  std::errc code_{};
  const char* message_ = "";
};

// Upper bound of every spin_loops knob. MySQL accepts up to 2^32-1 rounds, which only means
// "never stop spinning", and spinwise treats unbounded spinning as a bug (a preempted holder
// would make every waiter burn whole scheduler slices). A million InnoDB rounds at the defaults
// is already a few seconds of spinning per wait.
inline constexpr std::uint32_t kMaxSpinLoops = 1'000'000;

}  // namespace spinwise
