#pragma once
// The cost of one relax instruction on the calling thread's CPU (spinwise::runtime).
//
// This is the building block of calibration: time `relaxes_per_trial` back-to-back relaxes with
// the cycle counter, repeat, and keep order statistics, so one interrupted trial cannot move
// the answer.

#include <cstdint>

#include "spinwise/arch.hpp"

namespace spinwise {

struct relax_cost_options {
  relax_kind kind = active_relax();
  std::uint32_t trials = 31;              // odd, so the median is one trial
  std::uint32_t relaxes_per_trial = 200;  // ~2.6 us of PAUSE on a 13 ns PAUSE: the counter read is <1%
};

struct relax_cost {
  relax_kind kind = relax_kind::none;
  int cpu = -1;                  // the CPU the trials ran on (sched_getcpu at the start), -1 unknown
  std::uint32_t trials = 0;
  std::uint32_t relaxes_per_trial = 0;
  double counter_overhead_ticks = 0;  // one back-to-back counter read pair, subtracted per trial
  double ticks_min = 0;          // counter ticks per relax
  double ticks_median = 0;
  double ticks_p90 = 0;
  double ns_median = 0;          // ticks_median converted with counter_frequency()
};

// Measures `opt.kind` on the current CPU. A kind this CPU cannot issue returns a result with
// trials == 0 rather than executing an illegal instruction.
relax_cost measure_relax_cost(const relax_cost_options& opt = {});

}  // namespace spinwise
