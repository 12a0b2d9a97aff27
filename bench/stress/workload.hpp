#pragma once
// The two workloads of spinwise-stress and what a run of one measures.
//
// stats-lock (../shared/seeds/004, the MySQL incident): `clients` closed-loop clients each issue
// a request that fans out into `fanout` sub-queries at once; a pool of `threads` workers (more
// than the CPUs) runs them. A sub-query does `work_before_ns` of CPU work, takes the one shared
// statistics latch (the lock under test) for `cs_ns`, and does `work_after_ns` more. A request
// completes when its last sub-query does; its client then issues the next.
//
// hot-page (../shared/seeds/000, the SQL Server last-page latch): the same clients and pool, but
// a sub-query is a transaction of `inserts` + `updates` + `selects` statements in random order.
// An insert takes the next key of an increasing sequence and latches the page that key lands on
// (the last page) exclusively; an update latches a random page exclusively; a select latches a
// random page shared. Latch waits/s are reported against requests/s, as a DBA reads Latch
// Waits/sec against Batch Requests/sec.
//
// A run lasts `duration_s` in all: the first `warmup_s` are not measured. At the end workers
// stop claiming sub-queries, so the run ends on time whatever the lock does; a request cut off
// that way is not counted.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "emulated_relaxer.hpp"
#include "lock_catalog.hpp"

namespace spinwise::stress {

enum class scenario : std::uint8_t { stats_lock, hot_page };
std::string_view to_string(scenario s) noexcept;
bool parse_scenario(std::string_view s, scenario& out) noexcept;

// The lock a scenario puts under load unless --lock says otherwise: the incident's InnoDB mutex,
// the page latch InnoDB would use.
std::string_view default_lock(scenario s) noexcept;

// CPUs this process may run on (its affinity mask).
unsigned available_cpus();
// The incident ran 100+ threads on 8 cores: the same 12.5 threads per CPU here, at least 2.
unsigned default_threads(unsigned cpus);

struct workload_config {
  scenario sc = scenario::stats_lock;
  lock_choice lock;                 // empty lock name: the scenario's default lock
  cpu_model cpu = cpu_model::native;
  double relax_ns = 0;              // cpu == custom: one emulated relax
  unsigned threads = 0;             // 0: default_threads(available_cpus())
  unsigned clients = 0;             // 0: stats-lock 1, hot-page 100
  unsigned fanout = 0;              // 0: stats-lock 256, hot-page 1
  double duration_s = 10;
  double warmup_s = -1;             // < 0: min(1 s, duration / 5)
  std::uint64_t seed = 1;
  double work_before_ns = 7000;
  double cs_ns = 2000;
  double work_after_ns = 7000;
  unsigned inserts = 3, updates = 3, selects = 6;  // hot-page statements per transaction
  unsigned rows_per_page = 80;
  unsigned pages = 1024;
  double sample_ms = 10;            // running-thread sampling period
  bool verify = false;              // track every sub-query index (accounting tests)
};

// Fills the zero / negative "default" fields. Throws std::invalid_argument for values out of
// range, naming the flag (the CLI relies on the messages).
workload_config resolve(workload_config c);

struct latency_summary {
  std::uint64_t count = 0;
  double mean_ns = 0, p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
};

struct run_result {
  workload_config config;                // resolved
  unsigned repeat = 0;                   // which repetition of a sweep point (0 outside sweeps)
  policy_kind policy = policy_kind::none;
  std::vector<std::pair<std::string, std::uint32_t>> knobs;
  unsigned cpus = 0;

  // emulation
  relax_kind native_kind = relax_kind::none;
  double native_relax_ns = 0, loop_iter_ns = 0, emulated_relax_ns = 0, achieved_relax_ns = 0;

  double window_s = 0;  // measured interval
  double total_s = 0;   // start of the first thread to the last join

  std::uint64_t requests = 0, subqueries = 0;
  double requests_per_s = 0, subqueries_per_s = 0;
  latency_summary request_rt, subquery_rt, lock_hold, lock_wait;

  std::uint64_t acquisitions = 0, latch_waits = 0;  // latch_waits: acquisitions whose try failed
  double latch_waits_per_s = 0;
  double lock_busy_share = 0;  // sum of hold times / window: how busy the hottest latch set was

  // spin delays, from the emulated relaxer's own timing
  double spin_ns = 0, process_cpu_ns = 0;
  double spin_cpu_share = 0;      // spin / process CPU
  double spin_machine_share = 0;  // spin / (window x cpus)
  std::uint64_t spin_rounds = 0, zero_rounds = 0, relaxes = 0, clipped_rounds = 0;

  // what the counting policy saw (spinwise locks only)
  bool counted = false;
  bool parking_lock = false;              // the lock parks once its budget is spent (else yields)
  std::uint64_t spin_episodes = 0;        // waits that began spinning (InnoDB: spin waits)
  std::uint64_t budgets_spent = 0;        // episodes that ran out of rounds
  std::uint64_t parks = 0;                // futex parks (InnoDB: OS waits), see parks_exact
  bool parks_exact = false;               // counted by the lock's statistics policy at each park;
                                          // else budgets_spent of a parking lock
  std::uint64_t yields = 0, contended = 0;  // from the lock's statistics (parks_exact only)
  double parks_per_s = 0, budgets_spent_per_s = 0;
  std::string semaphores;                 // InnoDB SEMAPHORES-style report of the window

  std::uint64_t vcsw = 0, ivcsw = 0;
  double vcsw_per_s = 0, ivcsw_per_s = 0;

  // samples of the process's running threads (state R), the incident's jitter
  std::uint64_t run_samples = 0;
  double running_mean = 0, running_stddev = 0;
  unsigned running_p50 = 0, running_p99 = 0, running_max = 0;
  std::vector<std::uint16_t> running_series;  // at most 1000 samples, evenly thinned

  // hot-page
  std::uint64_t inserts = 0, updates = 0, selects = 0;
  std::uint64_t insert_waits = 0, update_waits = 0, select_waits = 0;

  // accounting: every sub-query counted once (the tests check these; nonzero errors mean a bug)
  std::uint64_t requests_issued = 0, requests_completed_all = 0, subqueries_executed_all = 0;
  std::uint64_t subqueries_in_cut_requests = 0;
  std::uint64_t double_executed = 0, missing = 0;  // verify mode only
  std::uint64_t exclusion_errors = 0;              // protected counters that disagree with their writers
};

run_result run_workload(const workload_config& config);

}  // namespace spinwise::stress
