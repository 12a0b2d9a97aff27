#pragma once
// What one spinwise-stress run measured, over its window (the run after the warm-up).
//
// Where each figure comes from:
//   - the engine's own per-worker accounting (engine.cpp): requests, sub-queries, latencies,
//     latch waits and holds, hot-page statement counts, the accounting checks;
//   - the library's lock statistics (class_stats, lock class "stress_latch", read through
//     <spinwise/runtime/stats_report.hpp>): time in spin delays, relaxes, contended waits,
//     yields and parks;
//   - the stress tool's thread tally (spin_tally.hpp), for what the library does not count:
//     delay loops with and without a delay, preempted delay loops, spin episodes and spent
//     budgets;
//   - the process: CPU time, context switches (getrusage) and running threads (/proc);
//   - the delays' own sample (delay_sample.hpp): how long rounds took against what they asked for.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "emulated_relaxer.hpp"
#include "lock_catalog.hpp"
#include "running_monitor.hpp"
#include "workload_config.hpp"

namespace spinwise::stress {

struct latency_summary {
  std::uint64_t count = 0;
  double mean_ns = 0, p50_ns = 0, p95_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
};

// p10 / p50 / p90 of a ratio over `rounds` rounds (all 0 when rounds is 0).
struct ratio_summary {
  std::uint64_t rounds = 0;
  double p10 = 0, p50 = 0, p90 = 0, min = 0, max = 0;
};

// Achieved / requested delay per round, for the policies whose delays are given in ns.
struct delay_accuracy_summary {
  bool applies = false;  // time, exp_backoff
  ratio_summary all;
  ratio_summary bands[3];       // requested < 200 ns, 200 ns .. 20 us, > 20 us (delay_sample::kBandEdgeNs)
  std::uint64_t preempted = 0;  // left out: preempted by the library's rule
  std::uint64_t early = 0;      // left out: ended early by the lock's until() (prompt handoff)
  double requested_min_ns = 0, requested_max_ns = 0;
};

// The achieved length of the rounds that issued relaxes, every policy (the drift's effect on
// innodb shows here): ns per round and ns per relax issued.
struct round_length_summary {
  std::uint64_t rounds = 0, preempted = 0;
  double p10_ns = 0, p50_ns = 0, p90_ns = 0;
  double relax_p10_ns = 0, relax_p50_ns = 0, relax_p90_ns = 0;
};

struct run_result {
  workload_config config;   // resolved
  std::size_t setting = 0;  // which setting of the invocation (a --compare setting, a sweep point; 0 alone)
  unsigned repeat = 0;      // which repetition of its setting (run_plan.hpp)
  policy_kind policy = policy_kind::none;
  std::vector<std::pair<std::string, std::uint32_t>> knobs;
  unsigned cpus = 0;
  // The adaptive policy: the spin budget it had learnt at the end of the run, and its decisions
  // (one per 64 contended waits) over the run, warm-up included. 0 for the other policies.
  std::uint32_t adaptive_budget_ns = 0;
  std::uint64_t adaptive_decisions = 0;

  // emulation
  relax_kind native_kind = relax_kind::none;
  double native_relax_ns = 0, loop_iter_ns = 0, emulated_relax_ns = 0, achieved_relax_ns = 0;
  double drift_mean_level = 1;  // --relax-drift: the pattern's mean level over the window (1: off)

  double window_s = 0;  // measured interval
  double total_s = 0;   // start of the first thread to the last join

  std::uint64_t requests = 0, subqueries = 0;
  double requests_per_s = 0, subqueries_per_s = 0;
  latency_summary request_rt, subquery_rt, lock_hold, lock_wait;

  std::uint64_t acquisitions = 0, latch_waits = 0;  // latch_waits: acquisitions whose try failed
  double latch_waits_per_s = 0;
  double lock_busy_share = 0;  // sum of hold times / window: how busy the hottest latch set was

  // spin delays: time and relaxes from the lock statistics, loop counts from the thread tally
  double spin_ns = 0, process_cpu_ns = 0;
  double spin_cpu_share = 0;         // spin / process CPU
  double spin_machine_share = 0;     // spin / (window x cpus)
  std::uint64_t spin_rounds = 0;     // delay loops with a delay (InnoDB: spin rounds that delayed)
  std::uint64_t zero_rounds = 0;     // rounds whose random delay came out 0
  std::uint64_t relaxes = 0;         // emulated relaxes issued
  std::uint64_t clipped_rounds = 0;  // delay loops preempted, counted at their expected length
  delay_accuracy_summary delay_accuracy;
  round_length_summary round_length;

  // waits (spinwise locks only)
  bool counted = false;
  bool parking_lock = false;                // the lock parks once its budget is spent (else yields)
  std::uint64_t spin_episodes = 0;          // spin episodes begun: a waiter built, the lock was busy
  std::uint64_t budgets_spent = 0;          // episodes that ran out of rounds
  std::uint64_t parks = 0;                  // futex parks (InnoDB: OS waits), see parks_exact
  bool parks_exact = false;                 // counted by the lock's statistics policy at each park;
                                            // else budgets_spent of a parking lock
  std::uint64_t yields = 0, contended = 0;  // from the lock's statistics (parks_exact only)
  double parks_per_s = 0, budgets_spent_per_s = 0;
  std::string semaphores;  // InnoDB SEMAPHORES-style report of the window

  std::uint64_t vcsw = 0, ivcsw = 0;
  double vcsw_per_s = 0, ivcsw_per_s = 0;

  // samples of the process's running threads (state R), the incident's jitter
  running_monitor::summary running;

  // hot-page
  std::uint64_t inserts = 0, updates = 0, selects = 0;
  std::uint64_t insert_waits = 0, update_waits = 0, select_waits = 0;

  // --stall-holder-ms: whether a holder did stall (a run that ended before any acquisition after
  // the window's middle has none)
  bool holder_stalled = false;

  // accounting: every sub-query counted once (the tests check these; nonzero errors mean a bug)
  std::uint64_t requests_issued = 0, requests_completed_all = 0, subqueries_executed_all = 0;
  std::uint64_t subqueries_in_cut_requests = 0;
  std::uint64_t double_executed = 0, missing = 0;  // verify mode only
  std::uint64_t exclusion_errors = 0;              // protected counters that disagree with their writers
};

}  // namespace spinwise::stress
