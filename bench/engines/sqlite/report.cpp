// The run's report (report.hpp): the figures, the checks and spinwise's statistics, in the JSON
// line's order.
#include "report.hpp"

#include <stdint.h>
#include <sys/resource.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "spinwise/detail/cpu_time.hpp"

namespace spinwise::sqlite_bench {
namespace {

constexpr std::string_view kClassPrefix = "sqlite.";  // spinwise::sqlite's statistics classes

// The statistics of spinwise's SQLite classes that counted an acquisition in the window (a class
// SQLite allocated a mutex of but did not enter there, such as sqlite.recursive under NOMUTEX, is
// left out; the process has no other classes, but say so).
spinwise::stats_snapshot sqlite_classes(spinwise::stats_snapshot s) {
  s.classes.erase(std::remove_if(s.classes.begin(), s.classes.end(),
                                 [](const spinwise::lock_class_stats& c) {
                                   return c.name.compare(0, kClassPrefix.size(), kClassPrefix) != 0 ||
                                          c.totals.acquisitions == 0;
                                 }),
                  s.classes.end());
  return s;
}

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

process_usage usage_now() {
  process_usage u;
  u.cpu_ns = spinwise::detail::process_cpu_ns();
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    u.voluntary = ru.ru_nvcsw;
    u.involuntary = ru.ru_nivcsw;
  }
  return u;
}

totals add_figures(json& out, const std::vector<thread_result>& results, const window& w,
                   std::vector<std::string>& failures) {
  latency_histogram latency;
  std::uint64_t ops = 0, retries = 0;
  totals t;
  std::uint64_t ops_min = UINT64_MAX, ops_max = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const thread_result& r = results[i];
    latency.merge(r.latency);
    ops += r.ops;
    t.inserts += r.inserts;
    retries += r.locked_retries;
    t.misses += r.select_misses;
    ops_min = std::min(ops_min, r.ops);
    ops_max = std::max(ops_max, r.ops);
    if (r.error) failures.push_back("thread " + std::to_string(i) + ": " + r.error.what);
  }
  const double wall = seconds_between(w.t0, w.t1);
  const double cpu = static_cast<double>(w.u1.cpu_ns - w.u0.cpu_ns) * 1e-9;
  const double per_op = ops > 0 ? 1.0 / static_cast<double>(ops) : 0.0;
  out["wall_s"] = wall;
  out["ops"] = ops;
  out["ops_per_s"] = wall > 0 ? static_cast<double>(ops) / wall : 0.0;
  out["ops_per_thread_min"] = ops_min;
  out["ops_per_thread_max"] = ops_max;
  out["latency_ns"] = {{"count", latency.count()},
                       {"p50", latency.percentile(50)},
                       {"p90", latency.percentile(90)},
                       {"p99", latency.percentile(99)},
                       {"p999", latency.percentile(99.9)},
                       {"max", latency.max()},
                       {"bounds", "upper bounds of 1/32-octave buckets: at most 3.2% above"}};
  out["cpu_s"] = cpu;
  out["cpu_ns_per_op"] = cpu * 1e9 * per_op;
  out["cpus_busy"] = wall > 0 ? cpu / wall : 0.0;
  out["voluntary_ctx_switches_per_op"] = static_cast<double>(w.u1.voluntary - w.u0.voluntary) * per_op;
  out["involuntary_ctx_switches_per_op"] = static_cast<double>(w.u1.involuntary - w.u0.involuntary) * per_op;
  out["locked_retries"] = retries;
  out["locked_retries_per_op"] = static_cast<double>(retries) * per_op;
  if (ops == 0) failures.push_back("no operation ran in the measured window");
  return t;
}

rows_check check_rows(mode m, const std::vector<thread_result>& results, sqlite3* main_db,
                      std::vector<std::string>& failures) {
  rows_check r;
  if (m == mode::private_db) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      const std::optional<table_check>& c = results[i].check;
      if (!c) {
        r.integrity = "not checked";
        continue;
      }
      if (c->error) failures.push_back("thread " + std::to_string(i) + ": " + c->error.what);
      r.rows += std::max<std::int64_t>(c->rows, 0);
      if (c->integrity != "ok" && r.integrity == "ok")
        r.integrity = "thread " + std::to_string(i) + ": " + c->integrity;
    }
  } else {
    const table_check c = check_table(main_db);
    if (c.error) failures.push_back(c.error.what);
    r.rows = c.rows;
    r.integrity = c.integrity;
  }
  return r;
}

void add_checks(json& out, const totals& t, const rows_check& c, std::vector<std::string>& failures) {
  if (c.rows != static_cast<std::int64_t>(t.inserts)) {
    failures.push_back("rows counted " + std::to_string(c.rows) + " != inserts done " +
                       std::to_string(t.inserts));
  }
  if (c.integrity != "ok") failures.push_back("integrity_check: " + c.integrity);
  if (t.misses != 0) failures.push_back(std::to_string(t.misses) + " SELECTs did not find their row");
  out["check"] = {{"inserts", t.inserts},
                  {"rows_counted", c.rows},
                  {"integrity", c.integrity},
                  {"select_misses", t.misses}};
}

void add_spinwise_stats(json& out, const options& o, const window& w, std::vector<std::string>& failures) {
  if (o.arm == "sqlite") {
    out["spinwise_stats"] = nullptr;
  } else {
    const spinwise::stats_snapshot d = sqlite_classes(spinwise::diff_stats(w.stats0, w.stats1));
    std::uint64_t acquisitions = 0;
    for (const spinwise::lock_class_stats& c : d.classes) acquisitions += c.totals.acquisitions;
    if (acquisitions == 0)
      failures.push_back("a spinwise arm, but no acquisition counted in any sqlite.* class");
    out["spinwise_stats"] = json::parse(spinwise::format_stats_json(d));
  }
}

}  // namespace spinwise::sqlite_bench
