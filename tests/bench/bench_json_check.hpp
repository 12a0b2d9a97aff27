#pragma once
// What "every benchmark ran and produced its counters" means for a spinwise-bench JSON run.
// Guards against a harness that silently drops a lock, a scenario, or a counter (a benchmark that
// fails with SkipWithError, or a counter set on the wrong thread, still leaves a JSON entry behind:
// only checking the entries one by one catches it).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace spinwise::bench_test {

struct counter_rule {
  const char* name;
  bool positive;  // must be > 0 (else >= 0)
};

// The counters each scenario must report. fair_max_cpu_ms > 0: the busiest thread's CPU clock
// (pthread_getcpuclockid, which Linux has for every thread) moved during the window; and
// fair_window_ms > 0: the window lasted (its steady-clock length, open or from each start).
inline std::vector<counter_rule> rules_for(const std::string& benchmark_name) {
  if (benchmark_name.rfind("contended/", 0) == 0 || benchmark_name.rfind("rw/", 0) == 0) {
    return {{"acq_per_s", true},      {"fair_cov", false},        {"fair_min", false},
            {"fair_max", true},       {"fair_window_acq", true},  {"cpu_ns_per_acq", false},
            {"csw_per_acq", false},   {"vcsw_per_acq", false},    {"cpus_busy", false},
            {"capped", false},        {"fair_min_cpu_ms", false}, {"fair_max_cpu_ms", true},
            {"fair_window_ms", true}, {"fair_window_open", false}};
  }
  if (benchmark_name.rfind("handoff/", 0) == 0) {
    return {{"p50_ns", true},  {"p90_ns", true},  {"p99_ns", true}, {"p999_ns", true},
            {"samples", true}, {"capped", false}, {"c2c_ns", false}};  // c2c_ns 0: not measured
  }
  return {};
}

inline bool is_number(const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

// Returns one line per problem; empty means the run is complete. `expected` are the benchmark
// names spinwise-bench listed (--benchmark_list_tests) for the same flags.
inline std::vector<std::string> check_bench_json(const nlohmann::json& j,
                                                 const std::vector<std::string>& expected) {
  std::vector<std::string> problems;
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) {
    return {"no 'benchmarks' array"};
  }
  if (!j.contains("context") || !j["context"].is_object() || !j["context"].contains("bench.mode")) {
    problems.emplace_back("no spinwise-bench context (bench.mode)");
  }
  if (expected.empty()) problems.emplace_back("no benchmarks were expected: the listing is empty");
  std::set<std::string> want(expected.begin(), expected.end());
  std::set<std::string> seen;
  for (const auto& b : j["benchmarks"]) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) {
      problems.emplace_back("an entry without a name");
      continue;
    }
    if (b.value("run_type", "iteration") != "iteration") continue;
    const std::string name = b.value("run_name", b["name"].get<std::string>());
    if (!want.count(name)) problems.push_back("unexpected benchmark: " + name);
    seen.insert(name);
    if (b.value("error_occurred", false)) {
      problems.push_back("failed: " + name + ": " + b.value("error_message", std::string("(no message)")));
      continue;
    }
    if (!b.contains("iterations") || !is_number(b["iterations"]) || b["iterations"].get<double>() <= 0) {
      problems.push_back("no iterations: " + name);
    }
    if (!b.contains("real_time") || !is_number(b["real_time"]) || b["real_time"].get<double>() <= 0) {
      problems.push_back("no real time: " + name);
    }
    for (const counter_rule& r : rules_for(name)) {
      if (!b.contains(r.name) || !is_number(b[r.name])) {
        problems.push_back(name + ": counter " + r.name + " missing");
        continue;
      }
      const double v = b[r.name].get<double>();
      if (r.positive ? !(v > 0) : !(v >= 0)) {
        problems.push_back(name + ": counter " + r.name + " = " + std::to_string(v) +
                           (r.positive ? " (not > 0)" : " (< 0)"));
      }
    }
  }
  for (const auto& n : want) {
    if (!seen.count(n)) problems.push_back("never ran: " + n);
  }
  // The handoff table is read against the one-way core-to-core latency of the same run: a number
  // in the context, or -1 with the reason it could not be measured (e.g. the two CPUs not both running).
  const bool handoff =
      std::any_of(seen.begin(), seen.end(), [](const std::string& n) { return n.rfind("handoff/", 0) == 0; });
  if (handoff && j.contains("context") && j["context"].is_object()) {
    const nlohmann::json& ctx = j["context"];
    const std::string one_way = ctx.value("bench.c2c_oneway_ns", std::string());
    const std::string method = ctx.value("bench.c2c_method", std::string());
    char* end = nullptr;
    const double v = std::strtod(one_way.c_str(), &end);
    if (one_way.empty() || *end != '\0') {
      problems.push_back("no one-way core-to-core latency (bench.c2c_oneway_ns) beside the handoff runs");
    } else if (!(v > 0) && method.rfind("not measured: ", 0) != 0) {
      problems.push_back("bench.c2c_oneway_ns = " + one_way + " without a reason in bench.c2c_method");
    }
  }
  // Every lock the run says it measured must appear in at least one benchmark.
  if (j.contains("context") && j["context"].is_object()) {
    for (const auto& [key, value] : j["context"].items()) {
      if (key.rfind("lock.", 0) != 0) continue;
      const std::string lock = "/" + key.substr(5);
      bool found = false;
      for (const auto& n : seen) {
        const auto at = n.find(lock);
        if (at != std::string::npos && (at + lock.size() == n.size() || n[at + lock.size()] == '/'))
          found = true;
      }
      if (!found) problems.push_back("lock in the catalogue but in no benchmark: " + key.substr(5));
    }
  }
  return problems;
}

}  // namespace spinwise::bench_test
