#pragma once
// What the tests of spinwise-stress's engine share: a small run's configuration, the soundness
// checks every run passes, a run that did work, and the command-line parser called in-process.
//
// Runs are bounded in time (a fraction of a second, times SPINWISE_TEST_SCALE) and small (a few
// threads, short fan-outs), so they fit TSan and qemu; each asserts that it did work. Nothing here
// asserts a timing.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "counted_policy.hpp"
#include "delay_sample.hpp"
#include "emulated_relaxer.hpp"
#include "histogram.hpp"  // bench/common: the tools' histograms
#include "lock_catalog.hpp"
#include "measurement.hpp"
#include "relax_drift.hpp"
#include "report.hpp"
#include "run_plan.hpp"
#include "running_monitor.hpp"
#include "scenario.hpp"
#include "session.hpp"
#include "spin_tally.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/runtime/lock_watch.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "spinwise/runtime/uncertainty.hpp"
#include "spinwise/spinwise.hpp"
#include "spinwise/time_policy.hpp"
#include "spinwise/version.hpp"
#include "stuck_watch.hpp"
#include "summary.hpp"
#include "sweep.hpp"
#include "timed_rules.hpp"
#include "workload.hpp"

namespace st = spinwise::stress;

namespace stress_test {

inline double scale() {
  const char* s = std::getenv("SPINWISE_TEST_SCALE");
  const double v = s != nullptr ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

// A small run: few threads, short fan-out, well under a second.
inline st::workload_config small(st::scenario sc = st::scenario::stats_lock) {
  st::workload_config c;
  c.sc = sc;
  c.threads = 4;
  c.clients = 3;
  c.fanout = sc == st::scenario::stats_lock ? 24 : 1;
  c.duration_s = std::max(0.2, 0.6 * scale());
  c.warmup_s = c.duration_s / 4;
  c.work_before_ns = 1000;
  c.cs_ns = 500;
  c.work_after_ns = 1000;
  c.pages = 16;
  c.rows_per_page = 4;
  c.sample_ms = 5;
  c.verify = true;
  c.min_requests = 0;  // a fixed window, as these tests were written for (MinRequests* tests the rest)
  c.calibrate_ms = 0;  // the process's first calibration: no 100 ms per run
  return c;
}

// Every run, whatever it measured: the accounting closes and the protected data agrees.
inline void expect_sound(const st::run_result& r) {
  EXPECT_EQ(r.double_executed, 0u) << "a sub-query index ran twice";
  EXPECT_EQ(r.missing, 0u) << "a completed request lacked a sub-query";
  EXPECT_EQ(r.exclusion_errors, 0u) << "the latch let two writers in";
  EXPECT_EQ(
      r.subqueries_executed_all,
      static_cast<std::uint64_t>(r.config.fanout) * r.requests_completed_all + r.subqueries_in_cut_requests)
      << "sub-queries executed do not add up to fan-out x completed requests + the cut-off remainder";
  EXPECT_LE(r.requests_completed_all, r.requests_issued);
  EXPECT_GE(r.requests_issued, r.requests_completed_all);
  EXPECT_LE(r.requests_issued - r.requests_completed_all, r.config.clients)
      << "more than one request per client open";
}

// A run that completed requests in its window. On a loaded machine or under qemu a short window
// can pass before the first request completes; the window then doubles, twice at most. A lock
// that never lets a request finish still fails, after the third window.
inline st::run_result run_with_work(st::workload_config c) {
  st::run_result r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = st::run_workload(c);
    if (r.requests > 0) break;
    c.duration_s *= 2;
    c.warmup_s *= 2;
  }
  return r;
}

// A run in which `happened` holds: runs again, each time twice as long, until it does. For a test
// whose assertions need an event the load brings on most runs but cannot force (a latch wait, a
// park): on a loaded host a window can pass with none (issue 42's flake hunt), and asserting then
// tests the host, not the code. The verdict waits for the event instead; ten doublings of the
// window without it fail the test, naming the event.
template <class Happened>
st::run_result run_until(st::workload_config c, Happened happened, const char* event) {
  st::run_result r;
  for (int attempt = 0; attempt < 10; ++attempt) {
    r = st::run_workload(c);
    if (happened(r)) return r;
    c.duration_s *= 2;
    c.warmup_s *= 2;
  }
  ADD_FAILURE() << "no " << event << " in ten runs of up to " << c.duration_s / 2 << " s";
  return r;
}

inline st::parse_outcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "spinwise-stress");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return st::parse_cli(static_cast<int>(argv.size()), argv.data());
}

}  // namespace stress_test
