#pragma once
// exp_backoff_policy: exponential backoff with jitter and a cap, in nanoseconds.
//
// Round r waits a uniform time in [c/2, c] with c = min(min_delay_ns x 2^r, max_delay_ns)
// ("equal jitter": the wait still grows, but two colliding waiters drift apart), converted to
// relax instructions once per wait as time_policy does; up to spin_loops rounds, then yield
// (spin locks) or yield and park (hybrid locks).
//
// Defaults 32 ns / 2048 ns / 12 rounds: about 11 us of spinning per wait on average, the same
// budget as time_policy's defaults (~15 us), so comparisons measure the shape, not the budget.
// The 32 ns floor is two or three PAUSEs on current x86; the 2 us cap keeps a waiter's reaction
// to a release within a tenth of a parked handoff (a futex wake: std::mutex's handoff in
// bench/results/full-runs/README.md, the model 207 run).
//
// When not to use it: for FIFO queue locks (ticket, MCS), where a waiter's delay adds straight to
// every handoff behind it. It suits test-and-set locks, whose retries are RMWs that backoff thins.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

struct exp_backoff_settings {
  std::uint32_t min_delay_ns = 32;    // first round's ceiling, 1..1000000, <= max_delay_ns
  std::uint32_t max_delay_ns = 2048;  // the cap, 1..1000000
  std::uint32_t spin_loops = 12;      // 0..kMaxSpinLoops
};

namespace detail {

struct exp_backoff_spec {
  using settings = exp_backoff_settings;
  static constexpr std::size_t kSpinLoops = 2;
  static constexpr std::size_t kCount = 3;
  static constexpr knob_field kFields[kCount] = {
      {"min_delay_ns", 1, 1'000'000, 32, "exp_backoff min_delay_ns must be in 1..1000000"},
      {"max_delay_ns", 1, 1'000'000, 2048, "exp_backoff max_delay_ns must be in 1..1000000"},
      {"spin_loops", 0, kMaxSpinLoops, 12, "exp_backoff spin_loops must be in 0..1000000"},
  };
  static constexpr const char* kUnknownName =
      "unknown exp_backoff knob (known: min_delay_ns, max_delay_ns, spin_loops)";
  static constexpr std::uint32_t kTied = 0b011;  // min and max: a Tag overrides both or neither
  static constexpr const char* cross_check(std::uint64_t w) noexcept {
    return knob_get(w, 0) > knob_get(w, 1)
               ? "exp_backoff min_delay_ns must not exceed max_delay_ns (set both at once with set(settings))"
               : nullptr;
  }
  static constexpr settings to_settings(std::uint64_t w) noexcept {
    return {knob_get(w, 0), knob_get(w, 1), knob_get(w, 2)};
  }
  static constexpr void from_settings(const settings& s, std::uint32_t* v) noexcept {
    v[0] = s.min_delay_ns;
    v[1] = s.max_delay_ns;
    v[2] = s.spin_loops;
  }
};

// Round r: uniform in [c/2, c] ns with c = min(min_delay_ns x 2^r, max(min, max_delay_ns)),
// clock-bounded (detail/spin_time.hpp). A round runs its course whatever the lock word does, as
// time_policy's: a waiter that polled inside its backoff would keep the line moving between cores
// (prompt_time_policy in time_policy.hpp says what that cost).
struct exp_backoff_delay {
  delay_rates rates;

  template <class Relax>
  std::uint64_t delay(std::uint64_t w, std::uint32_t round) noexcept {
    const std::uint64_t lo = knob_get(w, 0);
    const std::uint64_t cap = std::max<std::uint64_t>(lo, knob_get(w, 1));
    const std::uint64_t ceiling = std::min<std::uint64_t>(lo << std::min<std::uint32_t>(round, 20), cap);
    const std::uint64_t ns = ceiling - jitter_below(static_cast<std::uint32_t>(ceiling / 2 + 1));
    return relax_for_ns<Relax>(static_cast<double>(ns), rates);
  }
};

}  // namespace detail

// Tag and Relax as for innodb_policy. min_delay_ns <= max_delay_ns holds on every path: set(),
// set(name) and reset(name), process-wide and per Tag (a Tag that sets one of the two overrides
// both, the other at the value it saw; see detail/knob_store.hpp). Waiters still take the cap as
// max(min, max), which costs nothing.
template <class Tag = void, class Relax = cpu_relaxer>
struct exp_backoff_policy
    : detail::policy_base<detail::exp_backoff_spec, Tag, Relax, detail::exp_backoff_delay> {
  static constexpr std::string_view name() noexcept { return "exp_backoff"; }

  static knob_status set_min_delay_ns(std::uint32_t v) noexcept { return api::set_field(0, v); }
  static knob_status set_max_delay_ns(std::uint32_t v) noexcept { return api::set_field(1, v); }
  static std::uint32_t min_delay_ns() noexcept { return base::field(0); }
  static std::uint32_t max_delay_ns() noexcept { return base::field(1); }

 private:
  using base = detail::policy_base<detail::exp_backoff_spec, Tag, Relax, detail::exp_backoff_delay>;
  using api = typename base::api;
};

}  // namespace spinwise
