#pragma once
// The configuration of a spinwise-stress run: the scenario, the lock, the emulated CPU and the
// workload's shape, with the defaults each scenario takes and the checks every value passes.

#include <cstdint>
#include <string_view>

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

// Ten minutes: a stall that outlasts any sensible run, and still a bound on how long one can hang.
inline constexpr std::uint32_t kMaxStallHolderMs = 600'000;

struct workload_config {
  scenario sc = scenario::stats_lock;
  lock_choice lock;  // empty lock name: the scenario's default lock
  cpu_model cpu = cpu_model::native;
  double relax_ns = 0;     // cpu == custom: one emulated relax
  double relax_drift = 1;  // the relax's cost wanders in [1, this] x nominal (1: off)
  unsigned threads = 0;    // 0: default_threads(available_cpus())
  unsigned clients = 0;    // 0: stats-lock 1, hot-page 100
  unsigned fanout = 0;     // 0: stats-lock 256, hot-page 1
  double duration_s = 10;
  double warmup_s = -1;  // < 0: min(1 s, duration / 5)
  // The window goes on past duration_s until it has counted this many requests, up to
  // max_duration_s in all (< 0: 3 x duration_s). Rate noise from counting whole requests falls as
  // 1/sqrt(requests); a fixed time gives a slow setting or a short run few of them (docs/stress.md,
  // "Where the spread comes from"). 0: a fixed time, as before.
  std::uint64_t min_requests = 1000;
  double max_duration_s = -1;
  // The work loop that makes a sub-query's CPU work is calibrated over this many ms (the fastest
  // of many trials, once per process), so every process does the same work for the same ns; 0: the
  // quick snapshot at process start, as before (emulated_relaxer.hpp use_loop_calibration).
  double calibrate_ms = 100;
  std::uint64_t seed = 1;  // also the --relax-drift pattern's (drift_seed)
  double work_before_ns = 7000;
  double cs_ns = 2000;
  double work_after_ns = 7000;
  unsigned inserts = 3, updates = 3, selects = 6;  // hot-page statements per transaction
  unsigned rows_per_page = 80;
  unsigned pages = 1024;
  double sample_ms = 10;  // running-thread sampling period
  // --stall-holder-ms: one latch holder sleeps this long, once, in the middle of the window
  // (scenario.hpp holder_stall); 0: none. At most kMaxStallHolderMs.
  std::uint32_t stall_holder_ms = 0;
  bool verify = false;  // track every sub-query index (accounting tests)
};

// Fills the zero / negative "default" fields. Throws std::invalid_argument for values out of
// range, naming the flag (the CLI relies on the messages).
workload_config resolve(workload_config c);

}  // namespace spinwise::stress
