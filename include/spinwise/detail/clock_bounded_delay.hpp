#pragma once
// The clock-bounded delay: how the time-based policies spend a delay given in nanoseconds with a
// given Relax (relax_for_ns), and the rates each wait converts once for it (delay_rates).
//
// A delay is clock-bounded: it ends at a deadline read from the cycle counter, not after a relax
// count fixed at its start. The relax cost moves (a shared host's PAUSE wandered from one half
// second to the next; a thread migrated from a P-core to an E-core sees it change ~3x), and a
// count converted from a per-CPU table would then be off by as much. The relax table still sets
// how many relaxes go between two counter reads (the backend's kDelayCheckNs worth,
// arch/spinwise/arch/*.hpp), so it sets the check interval, not the length.
// innodb_policy does not use this: its delay is an instruction count by definition.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "spinwise/arch.hpp"
#include "spinwise/relax_table.hpp"

namespace spinwise::detail {

template <class Relax, class = void>
struct has_relax_ns : std::false_type {};
template <class Relax>
struct has_relax_ns<Relax, std::void_t<decltype(Relax::relax_ns())>> : std::true_type {};

// Relaxes of `Relax` per nanosecond on the calling CPU. Called once per wait (its first snooze),
// never per round: relax_ns_here() costs a sched_getcpu and, once per process, a ~30 us
// measurement. A Relax with its own relax_ns() (an emulated PAUSE) is converted at its own length.
template <class Relax>
inline double relaxes_per_ns() noexcept {
  double ns;
  if constexpr (has_relax_ns<Relax>::value) {
    ns = static_cast<double>(Relax::relax_ns());
  } else {
    ns = relax_ns_here();
  }
  return ns > 0.0 ? 1.0 / ns : 1.0;
}

// Relaxes that take about `ns`, given relaxes_per_ns(); saturates instead of overflowing.
inline std::uint32_t relaxes_in(double ns, double per_ns) noexcept {
  const double n = ns * per_ns + 0.5;
  return n >= 4'294'967'295.0 ? 0xffffffffu : static_cast<std::uint32_t>(n);
}

template <class Relax, class = void>
struct has_counter : std::false_type {};
template <class Relax>
struct has_counter<Relax, std::void_t<decltype(Relax::counter()), decltype(Relax::counter_ticks_per_ns())>>
    : std::true_type {};

// The counter a clock-bounded delay reads: the CPU's (read_counter), or the Relax's own counter()
// and counter_ticks_per_ns() where it has them (a test injects a counter that way).
template <class Relax>
SPINWISE_ALWAYS_INLINE std::uint64_t delay_counter() noexcept {
  if constexpr (has_counter<Relax>::value) {
    return Relax::counter();
  } else {
    return read_counter();
  }
}

// What a time-based waiter converts once per wait, at its first delay.
struct delay_rates {
  double relaxes_per_ns = 0.0;  // 0: not converted yet
  double ticks_per_ns = 0.0;
  std::uint32_t per_check = 1;  // relaxes between two counter reads
  std::uint32_t per_poll = 1;   // relaxes between two polls of an eager until() (<= per_check)

  template <class Relax>
  void convert() noexcept {
    relaxes_per_ns = detail::relaxes_per_ns<Relax>();
    double check_ns = backend::kDelayCheckNs;
    if constexpr (has_counter<Relax>::value) {
      ticks_per_ns = Relax::counter_ticks_per_ns();
    } else {
      ticks_per_ns = static_cast<double>(counter_frequency()) * 1e-9;
    }
    if (ticks_per_ns > 0.0) check_ns = std::max(check_ns, 1.0 / ticks_per_ns);  // no faster than it ticks
    per_check = std::max<std::uint32_t>(1, relaxes_in(check_ns, relaxes_per_ns));
    // A backend that does not poll eagerly (kDelayPollNs == kDelayCheckNs) polls at the check
    // interval as raised above, not at its nominal length.
    const double poll_ns = backend::kDelayPollNs < backend::kDelayCheckNs ? backend::kDelayPollNs : check_ns;
    per_poll = std::min(per_check, std::max<std::uint32_t>(1, relaxes_in(poll_ns, relaxes_per_ns)));
  }
};

// A delay never issues more than this many times the relaxes its conversion asked for: a counter
// that stops (a broken clock source) cannot hold a waiter in a delay forever.
inline constexpr std::uint64_t kDelayRelaxCap = 16;

// The predicate of a delay that nothing can end early.
struct never_ready {
  constexpr bool operator()() const noexcept { return false; }
};

// A lock's until() that asks to be polled every backend::kDelayPollNs of relaxes (25 ns on x86;
// aarch64 and generic: their check interval) instead of at each counter check (kDelayCheckNs),
// where the policy polls at all (prompt_time_policy, adaptive_policy; the defaults' delays do
// not end early). ttas_mutex and tas_mutex pass theirs so: on a Xeon model 167 a waiter saw the
// release sooner and their throughput did not suffer for it; hybrid_mutex's did, and a plain
// predicate keeps the check interval (bench/results/full-runs/README.md, the model 167 run). A
// rule that wraps the until() it is given in a predicate of its own drops the request: forward it
// unchanged.
template <class F>
struct eager_until {
  mutable F ready;  // a mutable lambda works here as it does unwrapped
  bool operator()() const noexcept { return ready(); }
};
template <class F>
eager_until<F> poll_eagerly(F ready) noexcept {
  return {std::move(ready)};
}
template <class Until>
struct polls_eagerly : std::false_type {};
template <class F>
struct polls_eagerly<eager_until<F>> : std::true_type {};

// Relaxes for `ns` nanoseconds: until the counter has advanced by `ns`, reading it after each
// chunk of relaxes, a chunk being what the relax table says fits in the time left, and at most a
// check interval's worth (per_check). With the table right the delay ends within one relax of its
// deadline; with the relax cost moved under it, within one check interval. At most
// kDelayRelaxCap x the converted count is issued. Returns the relaxes issued. A counter that
// steps back (read on another CPU after a migration) ends the delay.
//
// `until` is asked after every chunk, so about once per check interval (~100 ns), or after every
// per_poll relaxes within a chunk when it polls eagerly (poll_eagerly): true ends the delay there
// (without a usable counter a delay is its count alone, and is not ended early). A lock passes
// "the word looks free", so a waiter deep in a long delay still sees a release within a check
// interval, or a poll interval, instead of at the delay's end (prompt handoff). Only the
// policies that choose prompt handoff pass one (prompt_time_policy, adaptive_policy): each poll
// is a load of the holder's line, and on an AMD Zen 5 guest that traffic cut the contended
// throughput of the locks that polled (time_policy.hpp; bench/results/compare-amd/README.md).
//
// relax_for_ns_timed also gives the delay's length in counter ticks (0 when it issued nothing or
// has no usable counter): the counter's at its last check, plus the relaxes issued after that
// check at their converted cost. A caller that must know how long it spun reads no counter of its
// own. Two more reads per round slowed hybrid_mutex<adaptive> by a third with empty critical
// sections on a 2-vCPU KVM guest (bench/results/starvation/README.md).
template <class Relax, class Until = never_ready>
std::uint64_t relax_for_ns_timed(double ns, delay_rates& r, Until&& until,
                                 std::uint64_t& took_ticks) noexcept {
  took_ticks = 0;
  if (SPINWISE_UNLIKELY(r.relaxes_per_ns == 0.0)) r.template convert<Relax>();
  const std::uint64_t planned = relaxes_in(ns, r.relaxes_per_ns);
  if (planned == 0) return 0;
  if (SPINWISE_UNLIKELY(!(r.ticks_per_ns > 0.0))) {  // no usable counter: the count alone, not ended early
    Relax::relax_n(static_cast<std::uint32_t>(planned));
    return planned;
  }
  std::uint64_t issued = 0;
  const std::uint64_t start = delay_counter<Relax>();
  const auto span = static_cast<std::uint64_t>(ns * r.ticks_per_ns);
  const double relaxes_per_tick = r.relaxes_per_ns / r.ticks_per_ns;
  const std::uint64_t cap = planned * kDelayRelaxCap;
  std::uint64_t elapsed = 0;
  do {
    const double fit = static_cast<double>(span - elapsed) * relaxes_per_tick + 0.5;
    const auto n = static_cast<std::uint32_t>(std::clamp(fit, 1.0, static_cast<double>(r.per_check)));
    // One poll of until() per `poll` relaxes: per_poll for an eager predicate, else the whole chunk.
    const std::uint32_t poll =
        polls_eagerly<std::decay_t<Until>>::value ? std::max<std::uint32_t>(1, r.per_poll) : n;
    for (std::uint32_t done = 0; done < n;) {
      const std::uint32_t k = std::min(n - done, poll);
      Relax::relax_n(k);
      issued += k;
      done += k;
      if (until()) {
        took_ticks = elapsed + static_cast<std::uint64_t>(static_cast<double>(done) / relaxes_per_tick);
        return issued;
      }
    }
    elapsed = delay_counter<Relax>() - start;
  } while (elapsed < span && issued < cap);
  took_ticks = elapsed;
  return issued;
}

template <class Relax, class Until = never_ready>
std::uint64_t relax_for_ns(double ns, delay_rates& r, Until&& until = {}) noexcept {
  std::uint64_t took_ticks;
  return relax_for_ns_timed<Relax>(ns, r, until, took_ticks);
}

}  // namespace spinwise::detail
