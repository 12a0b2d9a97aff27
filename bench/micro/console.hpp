// spinwise-bench's console: one short line per run. Google Benchmark's console prints every user
// counter (fourteen for a contended run, ~400 characters a line) and a coefficient of variation
// for each, which for a counter that is 0 in every repetition is 0/0 ("capped=-nan%"). The
// console here keeps the headline counters of each scenario and drops the rest and any that is
// not a number; --benchmark_out's JSON, which report.py reads, still carries them all.
#pragma once

#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

namespace spinwise::bench {

// The counters a console line keeps; the others are in the JSON.
inline bool headline_counter(const std::string& name) {
  static const char* const kept[] = {"acq_per_s", "cpu_ns_per_acq", "fair_cov", "p50_ns",
                                     "p99_ns",    "c2c_ns",         "capped"};
  for (const char* k : kept) {
    if (name == k) return true;
  }
  return false;
}

class short_console : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;

  void ReportRuns(const std::vector<Run>& reports) override {
    std::vector<Run> shown = reports;
    for (Run& r : shown) {
      for (auto it = r.counters.begin(); it != r.counters.end();) {
        const bool drop = !headline_counter(it->first) || !std::isfinite(it->second.value) ||
                          (it->first == "capped" && it->second.value == 0);  // only a cap is news
        it = drop ? r.counters.erase(it) : std::next(it);
      }
    }
    benchmark::ConsoleReporter::ReportRuns(shown);
  }
};

}  // namespace spinwise::bench
