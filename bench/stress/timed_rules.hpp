#pragma once
// The time policies' delay rules with each round's requested ns seen and its delay timed, for
// delay_accuracy (delay_sample.hpp).
//
// A rule draws its jitter and hands the ns straight to relax_for_ns, so nothing outside it sees
// what a round asked for. These are the library's rules (time_policy.hpp time_delay,
// exp_backoff_policy.hpp exp_backoff_delay) line for line, over the same knob word, the same
// jitter stream and the same relax_for_ns, plus a counter read on each side of relax_for_ns while
// the thread measures. The stress wrapper (counted_policy.hpp) builds the library's waiter
// skeleton (rounds_waiter) with them in place of the originals; a static_assert there stops the
// build if a policy's waiter is no longer rounds_waiter over the rule copied here, and
// StressTimedRules.* in tests/stress checks that each copy issues what the original does, round
// for round, from the same jitter seed. A requested_ns() hook beside each rule in include/ would
// make the copies unnecessary.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "delay_sample.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise::stress {

// `until` as given, noting in `fired` whether it ended the delay (its last answer: a true one
// ends the delay). An eager until() stays eager (detail::poll_eagerly).
template <class Until>
auto noting(Until& until, bool& fired) noexcept {
  if constexpr (detail::polls_eagerly<std::decay_t<Until>>::value) {
    return detail::poll_eagerly([&until, &fired] { return fired = until.ready(); });
  } else {
    return [&until, &fired] { return fired = until(); };
  }
}

// relax_for_ns, timed into the thread's sample while it measures. A delay the lock's until()
// ended early is recorded as such: its accuracy is not a clock's (delay_sample.hpp).
template <class Relax, class Until>
std::uint64_t timed_relax_for_ns(double ns, detail::delay_rates& rates, Until& until) noexcept {
  delay_sample* s = t_delay_sink;
  if (s == nullptr) return detail::relax_for_ns<Relax>(ns, rates, until);
  bool early = false;
  const std::uint64_t t0 = read_counter();
  const std::uint64_t n = detail::relax_for_ns<Relax>(ns, rates, noting(until, early));
  s->record_request(ns, read_counter() - t0, early);
  return n;
}

// time_delay<Prompt>: [0, spin_wait_delay) x delay_unit_ns; only Prompt's rounds end early.
template <bool Prompt>
struct timed_time_delay {
  detail::delay_rates rates;

  template <class Relax, class Until>
  std::uint64_t delay(std::uint64_t w, std::uint32_t, Until& until) noexcept {
    const std::uint32_t spin_wait_delay = detail::knob_get(w, 0);
    const std::uint32_t units = spin_wait_delay == 0 ? 0 : detail::jitter_below(spin_wait_delay);
    if (units == 0) return 0;
    const double ns = static_cast<double>(units) * detail::knob_get(w, 1);
    if constexpr (Prompt) {
      return timed_relax_for_ns<Relax>(ns, rates, until);
    } else {
      detail::never_ready never;
      return timed_relax_for_ns<Relax>(ns, rates, never);
    }
  }
};

// exp_backoff_delay: uniform in [c/2, c] with c = min(min_delay_ns x 2^round, max(min, max)).
struct timed_exp_backoff_delay {
  detail::delay_rates rates;

  template <class Relax>
  std::uint64_t delay(std::uint64_t w, std::uint32_t round) noexcept {
    const std::uint64_t lo = detail::knob_get(w, 0);
    const std::uint64_t cap = std::max<std::uint64_t>(lo, detail::knob_get(w, 1));
    const std::uint64_t ceiling = std::min<std::uint64_t>(lo << std::min<std::uint32_t>(round, 20), cap);
    const std::uint64_t ns = ceiling - detail::jitter_below(static_cast<std::uint32_t>(ceiling / 2 + 1));
    detail::never_ready never;
    return timed_relax_for_ns<Relax>(static_cast<double>(ns), rates, never);
  }
};

// A policy's waiter with its rule timed: the policy's own waiter for policies that do not give
// their delays in ns.
template <class Policy>
struct timed_waiter {
  using type = typename Policy::waiter;
  static constexpr bool timed = false;
};

template <class Tag, class Relax>
struct timed_waiter<time_policy<Tag, Relax>> {
  static_assert(
      std::is_same_v<typename time_policy<Tag, Relax>::waiter,
                     detail::rounds_waiter<detail::time_spec, Tag, Relax, detail::time_delay<false>>>,
      "time_policy's waiter changed: update timed_time_delay to its rule");
  using type = detail::rounds_waiter<detail::time_spec, Tag, Relax, timed_time_delay<false>>;
  static constexpr bool timed = true;
};

template <class Tag, class Relax>
struct timed_waiter<prompt_time_policy<Tag, Relax>> {
  static_assert(
      std::is_same_v<typename prompt_time_policy<Tag, Relax>::waiter,
                     detail::rounds_waiter<detail::time_spec, Tag, Relax, detail::time_delay<true>>>,
      "prompt_time_policy's waiter changed: update timed_time_delay to its rule");
  using type = detail::rounds_waiter<detail::time_spec, Tag, Relax, timed_time_delay<true>>;
  static constexpr bool timed = true;
};

template <class Tag, class Relax>
struct timed_waiter<exp_backoff_policy<Tag, Relax>> {
  static_assert(
      std::is_same_v<typename exp_backoff_policy<Tag, Relax>::waiter,
                     detail::rounds_waiter<detail::exp_backoff_spec, Tag, Relax, detail::exp_backoff_delay>>,
      "exp_backoff_policy's waiter changed: update timed_exp_backoff_delay to its rule");
  using type = detail::rounds_waiter<detail::exp_backoff_spec, Tag, Relax, timed_exp_backoff_delay>;
  static constexpr bool timed = true;
};

}  // namespace spinwise::stress
