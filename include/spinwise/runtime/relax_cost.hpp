#pragma once
// The cost of one relax instruction on the calling thread's CPU (spinwise::runtime).
//
// This is the building block of calibration: time `relaxes_per_trial` back-to-back relaxes with
// the cycle counter, repeat, and keep order statistics, so one interrupted trial cannot move
// the answer. The trials can be split into rounds; rounds whose medians disagree mean the clock
// moved under the measurement, and the result says so (stability::drifting) rather than
// averaging it away.

#include <cstdint>
#include <vector>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/sample_summary.hpp"

namespace spinwise {

class perf_cycle_counter;

struct relax_cost_options {
  relax_kind kind = active_relax();
  std::uint32_t trials = 31;                 // odd, so the median is one trial
  std::uint32_t relaxes_per_trial = 200;     // ~2.6 us of PAUSE on a 13 ns PAUSE: the counter read is <1%
                                             // 0: pick it so that one trial lasts about trial_ns
  double trial_ns = 10'000;                  // used when relaxes_per_trial == 0
  std::uint32_t rounds = 1;                  // trials are split into this many rounds (drift check)
  const perf_cycle_counter* perf = nullptr;  // open counter: also count core cycles per trial
  stability_limits limits;
};

struct relax_cost {
  relax_kind kind = relax_kind::none;
  int cpu = -1;  // the CPU the trials ran on (sched_getcpu at the start), -1 unknown
  std::uint32_t trials = 0;
  std::uint32_t relaxes_per_trial = 0;
  double counter_overhead_ticks = 0;  // one back-to-back counter read pair, subtracted per trial
  double ticks_min = 0;               // counter ticks per relax
  double ticks_median = 0;
  double ticks_p90 = 0;
  double ns_median = 0;               // ticks_median converted with counter_frequency()
  sample_summary ticks;               // counter ticks per relax, all order statistics and the verdict
  double round_drift = 0;             // (max - min) / median of the round medians; 0 with one round
  sample_summary perf_cycles;         // core cycles per relax counted by perf_event (n == 0: not counted)
  std::vector<double> samples;        // counter ticks per relax, one per trial, in trial order
  std::vector<double> cycle_samples;  // perf_event cycles per relax, one per counted trial
};

// Measures `opt.kind` on the current CPU. A kind this CPU cannot issue returns a result with
// trials == 0 rather than executing an illegal instruction. The caller pins the thread.
// This is spinwise's one relax measurement: the full and the quick calibration and the stress
// tool's native relax all come from it. Trials are timed with counter_timing.hpp.
relax_cost measure_relax_cost(const relax_cost_options& opt = {});

}  // namespace spinwise
