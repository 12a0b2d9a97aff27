// The run's report: its figures (throughput, the threads' spread, latency percentiles, CPU and
// context switches per operation, retries), the checks (every row there, the database sound) and
// spinwise's statistics of SQLite's mutexes, each added to the JSON line in its place. A check that
// fails adds its line to `failures`.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "options.hpp"
#include "spinwise/runtime/stats_report.hpp"
#include "workload.hpp"

namespace spinwise::sqlite_bench {

using json = nlohmann::ordered_json;

struct process_usage {
  std::uint64_t cpu_ns = 0;
  long voluntary = 0, involuntary = 0;  // context switches, every thread of the process
};

process_usage usage_now();

// The measured window: its ends, the process's usage and spinwise's statistics at each.
struct window {
  clock_type::time_point t0, t1;
  process_usage u0, u1;
  spinwise::stats_snapshot stats0, stats1;
};

// What the checks need of the threads' counts.
struct totals {
  std::uint64_t inserts = 0;  // every successful INSERT, warm-up included
  std::uint64_t misses = 0;   // SELECTs that did not find their row
};

// The figures of the window; a thread's error goes to `failures`.
totals add_figures(json& out, const std::vector<thread_result>& results, const window& w,
                   std::vector<std::string>& failures);

// The rows counted and integrity_check's answer: each private database's (the threads checked
// them), else `main_db`'s, checked here.
struct rows_check {
  std::int64_t rows = 0;
  std::string integrity = "ok";
};
rows_check check_rows(mode m, const std::vector<thread_result>& results, sqlite3* main_db,
                      std::vector<std::string>& failures);

// The checks, judged: every insert counted back, integrity ok, every SELECT found its row.
void add_checks(json& out, const totals& t, const rows_check& c, std::vector<std::string>& failures);

// spinwise's statistics of the window's sqlite.* classes (null for the sqlite arm); a spinwise arm
// that counted no acquisition fails.
void add_spinwise_stats(json& out, const options& o, const window& w, std::vector<std::string>& failures);

}  // namespace spinwise::sqlite_bench
