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
#include <cstdint>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// The knobs: X(name, min, max, default). min_delay_ns <= max_delay_ns (kOrder below).
#define SPINWISE_EXP_BACKOFF_KNOBS(X)                               \
  X(min_delay_ns, 1, 1000000, 32)   /* the first round's ceiling */ \
  X(max_delay_ns, 1, 1000000, 2048) /* the cap */                   \
  X(spin_loops, 0, kMaxSpinLoops, 12)

struct exp_backoff_settings {
  SPINWISE_EXP_BACKOFF_KNOBS(SPINWISE_KNOB_SETTING)
};

namespace detail {

struct exp_backoff_knobs {
  SPINWISE_KNOB_TABLE(exp_backoff, exp_backoff_settings, SPINWISE_EXP_BACKOFF_KNOBS);
  static constexpr knob_order kOrder{field::min_delay_ns, field::max_delay_ns};
};
struct exp_backoff_spec : knob_spec<exp_backoff_knobs> {};

// Round r: uniform in [c/2, c] ns with c = min(min_delay_ns x 2^r, max(min, max_delay_ns)),
// clock-bounded (detail/clock_bounded_delay.hpp). A round runs its course whatever the lock word does, as
// time_policy's: a waiter that polled inside its backoff would keep the line moving between cores
// (prompt_time_policy in time_policy.hpp says what that cost).
struct exp_backoff_delay {
  delay_rates rates;

  template <class Relax>
  std::uint64_t delay(std::uint64_t w, std::uint32_t round) noexcept {
    using field = exp_backoff_spec::field;
    const std::uint64_t lo = knob_get(w, field::min_delay_ns);
    const std::uint64_t cap = std::max<std::uint64_t>(lo, knob_get(w, field::max_delay_ns));
    const std::uint64_t ceiling = std::min<std::uint64_t>(lo << std::min<std::uint32_t>(round, 20), cap);
    const std::uint64_t ns = ceiling - jitter_below(static_cast<std::uint32_t>(ceiling / 2 + 1));
    return relax_for_ns<Relax>(static_cast<double>(ns), rates);
  }
};

}  // namespace detail

// Tag and Relax as for innodb_policy. min_delay_ns <= max_delay_ns holds on every path: set(),
// set(name) and reset(name), process-wide and per Tag (a Tag that sets one of the two overrides
// both, the other at the value it saw; see detail/knob_word.hpp). Waiters still take the cap as
// max(min, max), which costs nothing.
// name() is "exp_backoff"; set_<knob>() / <knob>() for each row of SPINWISE_EXP_BACKOFF_KNOBS.
template <class Tag = void, class Relax = cpu_relaxer>
struct exp_backoff_policy
    : detail::policy_base<detail::exp_backoff_spec, Tag, Relax, detail::exp_backoff_delay> {};

}  // namespace spinwise
