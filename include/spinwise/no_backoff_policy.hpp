#pragma once
// no_backoff_policy: one relax instruction per poll, the baseline the other policies beat (or not).
//
// Up to spin_loops polls, then yield (spin locks) or yield and park (hybrid locks). Default 1000
// polls: with a 13 ns PAUSE (an Emerald Rapids: bench/results/calibration-vms/README.md) about
// the 15 us budget of time_policy's defaults; on Skylake (43 ns) three times that, since this
// policy counts instructions.
//
// It is also the right policy for FIFO queue locks: a ticket or MCS waiter cannot overtake, so a
// delay only postpones its own turn (and every turn behind it), and its polls cost no coherence
// traffic worth thinning (MCS spins on its own line; a ticket waiter only reads).
//

#include <cstdint>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// The knobs: X(name, min, max, default).
#define SPINWISE_NO_BACKOFF_KNOBS(X) X(spin_loops, 0, kMaxSpinLoops, 1000)

struct no_backoff_settings {
  SPINWISE_NO_BACKOFF_KNOBS(SPINWISE_KNOB_SETTING)
};

namespace detail {

struct no_backoff_knobs {
  SPINWISE_KNOB_TABLE(no_backoff, no_backoff_settings, SPINWISE_NO_BACKOFF_KNOBS);
};
struct no_backoff_spec : knob_spec<no_backoff_knobs> {};

// One relax per round.
struct no_backoff_delay {
  template <class Relax>
  static std::uint64_t delay(std::uint64_t, std::uint32_t) noexcept {
    Relax::relax_n(1);
    return 1;
  }
};

}  // namespace detail

// Tag and Relax as for innodb_policy, in the same order as every policy (before 0.2.0 this one
// took <Relax, Tag>). name() is "no_backoff"; set_spin_loops() / spin_loops().
template <class Tag = void, class Relax = cpu_relaxer>
struct no_backoff_policy
    : detail::policy_base<detail::no_backoff_spec, Tag, Relax, detail::no_backoff_delay> {};

}  // namespace spinwise
