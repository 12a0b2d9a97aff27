#pragma once
// What a run's window measured: the process and the lock statistics at the window's two edges,
// and the run_result figures that come from them (engine.cpp fills the rest from its workers and
// clients). Internal to spinwise-stress.

#include <sys/resource.h>

#include <chrono>

#include "delay_sample.hpp"
#include "histogram.hpp"  // bench/common: the tools' histograms
#include "run_result.hpp"
#include "spin_tally.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace spinwise::stress {

// The process's CPU and scheduling counters and the lock classes' statistics at one instant.
struct instant {
  std::chrono::steady_clock::time_point wall;
  double cpu_ns = 0;     // CLOCK_PROCESS_CPUTIME_ID
  rusage ru{};           // getrusage(RUSAGE_SELF): context switches
  stats_snapshot stats;  // <spinwise/runtime/stats_report.hpp>

  static instant now();
};

// Counter ticks as nanoseconds (runtime::ticks_to_ns at this CPU's counter rate).
double ticks_to_ns(double ticks);

// A latency histogram of counter ticks, in ns.
latency_summary summarize_ticks(const bench::latency_histogram& h);

// Process CPU and spin delays over [a, b], and the waits of the lock under test: time in spin
// delays, relaxes, contended waits, yields and parks from the lock class kStressLatchClass (the
// spinwise locks record into it), the SEMAPHORES text of that class; delay loops, spin episodes
// and spent budgets from `tally` (what the run's measured sub-queries added). Needs r.window_s,
// r.cpus and r.config.lock set.
void add_spin_and_waits(run_result& r, const instant& a, const instant& b, const spin_tally& tally);

// delay_accuracy (time policies only: r.policy set) and round_length from the workers' merged
// delay samples. Needs r.emulated_relax_ns.
void add_delay_figures(run_result& r, const delay_sample& s);

// Voluntary and involuntary context switches over [a, b]. Needs r.window_s.
void add_context_switches(run_result& r, const instant& a, const instant& b);

}  // namespace spinwise::stress
