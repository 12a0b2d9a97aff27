#pragma once
// time_policy: InnoDB's spin shape with the delay unit in nanoseconds instead of instructions.
//
// Per round a waiter waits uniform integer [0, spin_wait_delay) x delay_unit_ns, converted to
// relax instructions from the measured cost of one relax on this CPU (spinwise::relaxes_for_ns:
// a calibration profile's per-CPU table, or a quick measurement made once per process), for up
// to spin_loops rounds; then a spin lock yields between polls and a hybrid lock yields once and
// parks. The conversion is made once per wait (at the first non-zero delay), not per round, so
// sched_getcpu stays off the spin path; a waiter migrated mid-wait keeps its first CPU's rate.
//
// Default delay_unit_ns = 200: the time one InnoDB unit (50 PAUSEs) took on the pre-Skylake
// CPUs MySQL's defaults were tuned on (PAUSE ~10-14 cycles at 2.2-3 GHz: 170-280 ns per 50).
// With 6 / 30 that is InnoDB's intended budget, ~0.5 us mean per round and ~15 us per wait, on
// every CPU: no 14x blow-up on Skylake, no 3x on an Emerald Rapids with a ~13 ns PAUSE (50 PAUSEs
// = 650 ns; bench/results/calibration-vms/README.md).
//
// When not to use it: when you must replay a MySQL configuration instruction for instruction
// (innodb_policy), or when waits are so short that a ~30 us first-use measurement per process
// matters more than the budget (install a calibration profile at start-up instead).

#include <cstdint>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// The knobs: X(name, min, max, default), the InnoDB knobs with the unit in ns. delay_unit_ns's
// bound covers 100 x the slowest PAUSE known.
#define SPINWISE_TIME_KNOBS(X)                                        \
  X(spin_wait_delay, 0, 1000, 6)      /* as innodb_spin_wait_delay */ \
  X(delay_unit_ns, 1, 10000, 200)     /* one unit of delay */         \
  X(spin_loops, 0, kMaxSpinLoops, 30) /* as innodb_sync_spin_loops */

struct time_settings {
  SPINWISE_TIME_KNOBS(SPINWISE_KNOB_SETTING)
};

namespace detail {

struct time_knobs {
  SPINWISE_KNOB_TABLE(time, time_settings, SPINWISE_TIME_KNOBS);
};
struct time_spec : knob_spec<time_knobs> {};

// One round: [0, spin_wait_delay) x delay_unit_ns, clock-bounded (detail/clock_bounded_delay.hpp); the
// relax rate and the counter's are converted at the first non-zero delay of the wait.
// Prompt = false (time_policy): the round runs its course whatever the lock word does, so a waiter
// leaves the holder's line alone for the whole delay: that is what backoff is for. Prompt = true
// (prompt_time_policy): the round ends early once the lock's until() says the word looks free
// (asked at each counter check, ~100 ns, or every kDelayPollNs when the lock polls eagerly).
template <bool Prompt>
struct time_delay {
  delay_rates rates;

  template <class Relax, class Until>
  std::uint64_t delay(std::uint64_t w, std::uint32_t, Until& until) noexcept {
    using field = time_spec::field;
    const std::uint32_t spin_wait_delay = knob_get(w, field::spin_wait_delay);
    const std::uint32_t units = spin_wait_delay == 0 ? 0 : jitter_below(spin_wait_delay);
    if (units == 0) return 0;
    const double ns = static_cast<double>(units) * knob_get(w, field::delay_unit_ns);
    if constexpr (Prompt) {
      return relax_for_ns<Relax>(ns, rates, until);
    } else {
      return relax_for_ns<Relax>(ns, rates);
    }
  }
};

}  // namespace detail

// Tag and Relax as for innodb_policy. name() is "time"; set_<knob>() / <knob>() for each row of
// SPINWISE_TIME_KNOBS.
template <class Tag = void, class Relax = cpu_relaxer>
struct time_policy : detail::policy_base<detail::time_spec, Tag, Relax, detail::time_delay<false>> {};

// time_policy whose rounds end as soon as the lock word looks free (prompt handoff), with the
// same knobs (the same Tag shares them with time_policy<Tag>: it is the "time" family).
//
// What it trades: a waiter deep in a round sees a release within a check interval instead of at
// its round's end, so a handoff is quicker; but every poll inside the delay is a load of the
// lock's line, which the holder must then take back exclusive to release it, and which keeps the
// line moving between cores while the lock is busy: what backoff exists to stop. What that costs
// depends on the CPU's coherence latency: it cut ttas_mutex's and hybrid_mutex's contended
// throughput on an AMD EPYC (Zen 5) guest (bench/results/compare-amd/README.md) and raised it
// slightly on a Xeon model 167 (bench/results/full-runs/README.md, the model 167 run).
// The defaults keep their delays whole; choose this by name where handoff latency matters more
// than throughput, after comparing both on your CPU (docs/wait-policies.md, "Prompt handoff").
template <class Tag = void, class Relax = cpu_relaxer>
struct prompt_time_policy : detail::policy_base<detail::time_spec, Tag, Relax, detail::time_delay<true>> {};

}  // namespace spinwise
