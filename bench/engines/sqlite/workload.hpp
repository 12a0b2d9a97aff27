// The workload: what each thread does, phase by phase, and what it reports back. An operation,
// identical in every arm: one INSERT of a 32-byte row under a new key, then one point SELECT of a
// random key this thread inserted before (or just now); see sqlite_bench.cpp's top.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "db.hpp"
#include "histogram.hpp"
#include "options.hpp"
#include "spinwise/arch.hpp"

namespace spinwise::sqlite_bench {

using clock_type = std::chrono::steady_clock;  // an operation's latency, the window's length

// The tools' histogram (bench/common/histogram.hpp): exact below 64 ns, then 32 buckets per power
// of two, so a percentile read as its bucket's upper bound is at most 1/32 above the true value.
// Each thread fills its own; they are merged after the run, so the percentiles weigh every
// operation alike.
using spinwise::bench::latency_histogram;

// The run's phases, advanced by the main thread. Threads poll it: at the top of every operation,
// and every millisecond while they wait between phases.
enum run_phase : int { kSetup, kWarmup, kMeasure, kStop, kFinish };

struct shared_state {
  std::atomic<int> phase{kSetup};
  std::atomic<int> ready{0};    // threads set up (connection, statements)
  std::atomic<int> stopped{0};  // threads out of the measured loop
};

// What one thread did; padded so that no two threads' counters share a line.
struct alignas(spinwise::kCacheLinePad) thread_result {
  std::uint64_t ops = 0;             // in the measured window
  std::uint64_t inserts = 0;         // every successful INSERT, warm-up included (the row count)
  std::uint64_t locked_retries = 0;  // in the measured window
  std::uint64_t select_misses = 0;   // a SELECT that did not find its row, or found another
  latency_histogram latency;
  sqlite_error error;
  std::optional<table_check> check;  // private mode: its own database's
};

// Thread `index`'s whole life: set up (its connection unless it shares `shared_db`, its statements),
// the operations from the warm-up until the stop, then (private mode) its database's check.
void run_thread(const options& o, int index, sqlite3* shared_db, shared_state& st, thread_result& r);

}  // namespace spinwise::sqlite_bench
