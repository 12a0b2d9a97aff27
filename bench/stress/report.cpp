#include "report.hpp"

#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

#include "delay_sample.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/relax_table.hpp"

namespace spinwise::stress {

run_context this_run() {
  run_context c = detect_run_context();
  c.relax_ns = relax_ns_here();
  return c;
}

namespace {

nlohmann::json to_json(const latency_summary& s) {
  return {{"count", s.count},   {"mean_ns", s.mean_ns}, {"p50_ns", s.p50_ns}, {"p95_ns", s.p95_ns},
          {"p99_ns", s.p99_ns}, {"p999_ns", s.p999_ns}, {"max_ns", s.max_ns}};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// One CSV column: its name and how to print it for a run.
struct column {
  const char* name;
  std::function<std::string(const run_result&)> value;
};

std::string g(double v) { return fmt("%.6g", v); }

// CSV cells of the delay figures, empty where a run has none.
std::string accuracy_cell(const run_result& r, double ratio_summary::*p) {
  return r.delay_accuracy.applies && r.delay_accuracy.all.rounds > 0 ? g(r.delay_accuracy.all.*p)
                                                                     : std::string();
}
std::string round_cell(const run_result& r, double round_length_summary::*p) {
  return r.round_length.rounds > 0 ? g(r.round_length.*p) : std::string();
}

nlohmann::json to_json(const ratio_summary& s) {
  if (s.rounds == 0) return {{"rounds", 0}, {"p10", nullptr}, {"p50", nullptr}, {"p90", nullptr}};
  return {{"rounds", s.rounds}, {"p10", s.p10}, {"p50", s.p50},
          {"p90", s.p90},       {"min", s.min}, {"max", s.max}};
}

// delay_accuracy: null for the policies whose delays are not given in ns.
nlohmann::json accuracy_json(const run_result& r) {
  const delay_accuracy_summary& a = r.delay_accuracy;
  if (!a.applies) return nullptr;
  nlohmann::json j = to_json(a.all);
  j["preempted_excluded"] = a.preempted;
  j["ended_early_excluded"] = a.early;
  const double delays = static_cast<double>(a.all.rounds + a.early);
  j["ended_early_share"] = delays > 0 ? static_cast<double>(a.early) / delays : 0.0;
  j["requested_ns"] = {{"min", a.requested_min_ns}, {"max", a.requested_max_ns}};
  nlohmann::json bands = nlohmann::json::array();
  const double edges[delay_sample::kBands] = {0, delay_sample::kBandEdgeNs[0], delay_sample::kBandEdgeNs[1]};
  for (int b = 0; b < delay_sample::kBands; ++b) {
    nlohmann::json band = to_json(a.bands[b]);
    band["requested_ns_from"] = edges[b];
    band["requested_ns_to"] =
        b + 1 < delay_sample::kBands ? nlohmann::json(edges[b + 1]) : nlohmann::json(nullptr);
    bands.push_back(band);
  }
  j["by_requested"] = bands;
  return j;
}

const std::vector<column>& columns() {
  static const std::vector<column> c = {
      {"scenario", [](const run_result& r) { return std::string(to_string(r.config.sc)); }},
      {"lock", [](const run_result& r) { return r.config.lock.lock; }},
      {"policy", [](const run_result& r) { return std::string(to_string(r.policy)); }},
      {"cpu_model", [](const run_result& r) { return std::string(to_string(r.config.cpu)); }},
      {"emulated_relax_ns", [](const run_result& r) { return g(r.emulated_relax_ns); }},
      {"relax_drift", [](const run_result& r) { return g(r.config.relax_drift); }},
      {"achieved_relax_ns", [](const run_result& r) { return g(r.achieved_relax_ns); }},
      {"native_relax_ns", [](const run_result& r) { return g(r.native_relax_ns); }},
      {"spin_wait_delay", [](const run_result& r) { return knob_text(r, "spin_wait_delay"); }},
      {"pause_multiplier", [](const run_result& r) { return knob_text(r, "pause_multiplier"); }},
      {"spin_loops", [](const run_result& r) { return knob_text(r, "spin_loops"); }},
      {"delay_unit_ns", [](const run_result& r) { return knob_text(r, "delay_unit_ns"); }},
      {"threads", [](const run_result& r) { return std::to_string(r.config.threads); }},
      {"clients", [](const run_result& r) { return std::to_string(r.config.clients); }},
      {"fanout", [](const run_result& r) { return std::to_string(r.config.fanout); }},
      {"cpus", [](const run_result& r) { return std::to_string(r.cpus); }},
      {"seed", [](const run_result& r) { return std::to_string(r.config.seed); }},
      {"repeat", [](const run_result& r) { return std::to_string(r.repeat); }},
      {"setting", [](const run_result& r) { return std::to_string(r.setting); }},
      {"loop_iter_ns", [](const run_result& r) { return g(r.loop_iter_ns); }},
      {"window_s", [](const run_result& r) { return g(r.window_s); }},
      {"requests", [](const run_result& r) { return std::to_string(r.requests); }},
      {"requests_per_s", [](const run_result& r) { return g(r.requests_per_s); }},
      {"subqueries_per_s", [](const run_result& r) { return g(r.subqueries_per_s); }},
      {"request_rt_p50_us", [](const run_result& r) { return g(r.request_rt.p50_ns / 1e3); }},
      {"request_rt_p95_us", [](const run_result& r) { return g(r.request_rt.p95_ns / 1e3); }},
      {"request_rt_p99_us", [](const run_result& r) { return g(r.request_rt.p99_ns / 1e3); }},
      {"request_rt_p999_us", [](const run_result& r) { return g(r.request_rt.p999_ns / 1e3); }},
      {"request_rt_max_us", [](const run_result& r) { return g(r.request_rt.max_ns / 1e3); }},
      {"subquery_rt_p50_us", [](const run_result& r) { return g(r.subquery_rt.p50_ns / 1e3); }},
      {"subquery_rt_p99_us", [](const run_result& r) { return g(r.subquery_rt.p99_ns / 1e3); }},
      {"subquery_rt_p999_us", [](const run_result& r) { return g(r.subquery_rt.p999_ns / 1e3); }},
      {"subquery_rt_max_us", [](const run_result& r) { return g(r.subquery_rt.max_ns / 1e3); }},
      {"lock_hold_p50_ns", [](const run_result& r) { return g(r.lock_hold.p50_ns); }},
      {"lock_hold_p99_ns", [](const run_result& r) { return g(r.lock_hold.p99_ns); }},
      {"lock_hold_max_ns", [](const run_result& r) { return g(r.lock_hold.max_ns); }},
      {"lock_wait_p50_ns", [](const run_result& r) { return g(r.lock_wait.p50_ns); }},
      {"lock_wait_p99_ns", [](const run_result& r) { return g(r.lock_wait.p99_ns); }},
      {"acquisitions", [](const run_result& r) { return std::to_string(r.acquisitions); }},
      {"latch_waits_per_s", [](const run_result& r) { return g(r.latch_waits_per_s); }},
      {"lock_busy_share", [](const run_result& r) { return g(r.lock_busy_share); }},
      {"spin_cpu_share", [](const run_result& r) { return g(r.spin_cpu_share); }},
      {"spin_machine_share", [](const run_result& r) { return g(r.spin_machine_share); }},
      {"process_cpu_share",
       [](const run_result& r) { return g(r.process_cpu_ns / (r.window_s * 1e9 * r.cpus)); }},
      {"spin_rounds", [](const run_result& r) { return std::to_string(r.spin_rounds); }},
      {"clipped_rounds", [](const run_result& r) { return std::to_string(r.clipped_rounds); }},
      {"delay_accuracy_p10", [](const run_result& r) { return accuracy_cell(r, &ratio_summary::p10); }},
      {"delay_accuracy_p50", [](const run_result& r) { return accuracy_cell(r, &ratio_summary::p50); }},
      {"delay_accuracy_p90", [](const run_result& r) { return accuracy_cell(r, &ratio_summary::p90); }},
      {"round_ns_p10", [](const run_result& r) { return round_cell(r, &round_length_summary::p10_ns); }},
      {"round_ns_p50", [](const run_result& r) { return round_cell(r, &round_length_summary::p50_ns); }},
      {"round_ns_p90", [](const run_result& r) { return round_cell(r, &round_length_summary::p90_ns); }},
      {"parks_per_s", [](const run_result& r) { return r.counted ? g(r.parks_per_s) : std::string(); }},
      {"budgets_spent_per_s",
       [](const run_result& r) { return r.counted ? g(r.budgets_spent_per_s) : std::string(); }},
      {"vcsw_per_s", [](const run_result& r) { return g(r.vcsw_per_s); }},
      {"ivcsw_per_s", [](const run_result& r) { return g(r.ivcsw_per_s); }},
      {"running_mean", [](const run_result& r) { return g(r.running.mean); }},
      {"running_stddev", [](const run_result& r) { return g(r.running.stddev); }},
      {"running_p99", [](const run_result& r) { return g(r.running.p99); }},
      {"running_max", [](const run_result& r) { return std::to_string(r.running.max); }},
      {"inserts_per_s", [](const run_result& r) { return g(static_cast<double>(r.inserts) / r.window_s); }},
      {"insert_waits_per_s",
       [](const run_result& r) { return g(static_cast<double>(r.insert_waits) / r.window_s); }},
      {"select_waits_per_s",
       [](const run_result& r) { return g(static_cast<double>(r.select_waits) / r.window_s); }},
  };
  return c;
}

}  // namespace

std::optional<std::uint32_t> knob_value(const run_result& r, std::string_view name) {
  for (const auto& [k, v] : r.knobs) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string knob_text(const run_result& r, std::string_view name) {
  const std::optional<std::uint32_t> v = knob_value(r, name);
  return v ? std::to_string(*v) : std::string();
}

nlohmann::json to_json(const run_result& r) {
  const workload_config& c = r.config;
  nlohmann::json knobs = nlohmann::json::object();
  for (const auto& [k, v] : r.knobs) knobs[k] = v;
  nlohmann::json j;
  j["config"] = {
      {"scenario", to_string(c.sc)},
      {"lock", c.lock.lock},
      {"policy", to_string(r.policy)},
      {"knobs", knobs},
      {"adaptive", r.policy == policy_kind::adaptive ? nlohmann::json{{"budget_ns", r.adaptive_budget_ns},
                                                                      {"decisions", r.adaptive_decisions}}
                                                     : nlohmann::json()},
      {"cpu_model", to_string(c.cpu)},
      {"relax_drift", c.relax_drift},
      {"threads", c.threads},
      {"clients", c.clients},
      {"fanout", c.fanout},
      {"duration_s", c.duration_s},
      {"warmup_s", c.warmup_s},
      {"min_requests", c.min_requests},
      {"max_duration_s", c.max_duration_s},
      {"calibrate_ms", c.calibrate_ms},
      {"seed", c.seed},
      {"work_before_ns", c.work_before_ns},
      {"cs_ns", c.cs_ns},
      {"work_after_ns", c.work_after_ns},
      {"inserts", c.inserts},
      {"updates", c.updates},
      {"selects", c.selects},
      {"rows_per_page", c.rows_per_page},
      {"pages", c.pages},
      {"sample_ms", c.sample_ms},
      {"stall_holder_ms", c.stall_holder_ms},
      {"repeat", r.repeat},
      {"setting", r.setting}};
  j["emulation"] = {{"native_relax", to_string(r.native_kind)},
                    {"native_relax_ns", r.native_relax_ns},
                    {"loop_iter_ns", r.loop_iter_ns},
                    {"emulated_relax_ns", r.emulated_relax_ns},
                    {"achieved_relax_ns", r.achieved_relax_ns}};
  if (c.relax_drift > 1.0) {
    j["emulation"]["drift"] = {{"factor", c.relax_drift},
                               {"seed", c.seed},
                               {"segment_ms", {kDriftMinSegmentNs / 1e6, kDriftMaxSegmentNs / 1e6}},
                               {"window_mean_level", r.drift_mean_level}};
  } else {
    j["emulation"]["drift"] = nullptr;
  }
  j["cpus"] = r.cpus;
  j["window_s"] = r.window_s;
  j["total_s"] = r.total_s;
  j["throughput"] = {{"requests", r.requests},
                     {"requests_per_s", r.requests_per_s},
                     {"subqueries", r.subqueries},
                     {"subqueries_per_s", r.subqueries_per_s}};
  j["request_rt"] = to_json(r.request_rt);
  j["subquery_rt"] = to_json(r.subquery_rt);
  j["lock"] = {{"acquisitions", r.acquisitions},
               {"latch_waits", r.latch_waits},
               {"latch_waits_per_s", r.latch_waits_per_s},
               {"busy_share", r.lock_busy_share},
               {"hold", to_json(r.lock_hold)},
               {"wait", to_json(r.lock_wait)}};
  j["spin"] = {{"spin_ns", r.spin_ns},          {"process_cpu_ns", r.process_cpu_ns},
               {"cpu_share", r.spin_cpu_share}, {"machine_share", r.spin_machine_share},
               {"rounds", r.spin_rounds},       {"zero_rounds", r.zero_rounds},
               {"relaxes", r.relaxes},          {"clipped_rounds", r.clipped_rounds}};
  j["delay_accuracy"] = accuracy_json(r);
  if (r.counted) {
    const round_length_summary& l = r.round_length;
    j["round_ns"] = {{"rounds", l.rounds},
                     {"preempted_excluded", l.preempted},
                     {"p10", l.rounds ? nlohmann::json(l.p10_ns) : nlohmann::json(nullptr)},
                     {"p50", l.rounds ? nlohmann::json(l.p50_ns) : nlohmann::json(nullptr)},
                     {"p90", l.rounds ? nlohmann::json(l.p90_ns) : nlohmann::json(nullptr)},
                     {"per_relax",
                      {{"p10", l.rounds ? nlohmann::json(l.relax_p10_ns) : nlohmann::json(nullptr)},
                       {"p50", l.rounds ? nlohmann::json(l.relax_p50_ns) : nlohmann::json(nullptr)},
                       {"p90", l.rounds ? nlohmann::json(l.relax_p90_ns) : nlohmann::json(nullptr)}}}};
  } else {
    j["round_ns"] = nullptr;
  }
  if (r.counted) {
    j["waits"] = {{"parking_lock", r.parking_lock},
                  {"spin_episodes", r.spin_episodes},
                  {"budgets_spent", r.budgets_spent},
                  {"budgets_spent_per_s", r.budgets_spent_per_s},
                  {"parks", r.parks},
                  {"parks_per_s", r.parks_per_s},
                  {"parks_exact", r.parks_exact},
                  {"yields", r.yields},
                  {"contended", r.contended},
                  {"semaphores", r.semaphores}};
  } else {
    j["waits"] = nullptr;
  }
  j["context_switches"] = {{"voluntary", r.vcsw},
                           {"involuntary", r.ivcsw},
                           {"voluntary_per_s", r.vcsw_per_s},
                           {"involuntary_per_s", r.ivcsw_per_s}};
  j["running_threads"] = {{"samples", r.running.samples}, {"mean", r.running.mean},
                          {"stddev", r.running.stddev},   {"p50", r.running.p50},
                          {"p99", r.running.p99},         {"max", r.running.max},
                          {"series", r.running.series}};
  if (c.sc == scenario::hot_page) {
    j["hot_page"] = {{"inserts", r.inserts},           {"updates", r.updates},
                     {"selects", r.selects},           {"insert_waits", r.insert_waits},
                     {"update_waits", r.update_waits}, {"select_waits", r.select_waits}};
  }
  j["holder_stalled"] = r.holder_stalled;
  j["accounting"] = {{"requests_issued", r.requests_issued},
                     {"requests_completed", r.requests_completed_all},
                     {"subqueries_executed", r.subqueries_executed_all},
                     {"subqueries_in_cut_requests", r.subqueries_in_cut_requests},
                     {"double_executed", r.double_executed},
                     {"missing", r.missing},
                     {"exclusion_errors", r.exclusion_errors}};
  return j;
}

nlohmann::json make_document(const std::vector<run_result>& runs, const nlohmann::json& extra) {
  nlohmann::json doc;
  doc["format"] = kJsonFormat;
  doc["version"] = kJsonVersion;
  doc[kRunContextKey] = nlohmann::json::parse(run_context_json(this_run()));
  doc["runs"] = nlohmann::json::array();
  for (const run_result& r : runs) doc["runs"].push_back(to_json(r));
  if (extra.is_object()) {
    for (auto it = extra.begin(); it != extra.end(); ++it) doc[it.key()] = it.value();
  }
  return doc;
}

std::vector<std::string> csv_columns() {
  std::vector<std::string> v;
  for (const column& c : columns()) v.emplace_back(c.name);
  return v;
}

std::string csv_header() {
  std::string s;
  for (const column& c : columns()) s += (s.empty() ? "" : ",") + std::string(c.name);
  return s;
}

std::string csv_row(const run_result& r) {
  std::string s;
  bool first = true;
  for (const column& c : columns()) {
    if (!first) s += ",";
    first = false;
    s += c.value(r);
  }
  return s;
}

std::string table_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-10s %-9s %-7s %5s %9s %10s %10s %6s %6s %8s %8s %7s", "scenario", "cpu",
                "policy", "delay", "req/s", "rt_p99_ms", "sub_p99_us", "spin%", "cpu%", "parks/s", "waits/s",
                "run_max");
  return buf;
}

std::string table_row(const run_result& r) {
  char buf[256];
  const std::string delay = knob_text(r, "spin_wait_delay");
  std::snprintf(buf, sizeof buf, "%-10s %-9s %-7s %5s %9.1f %10.2f %10.1f %6.1f %6.1f %8.0f %8.0f %7u",
                std::string(to_string(r.config.sc)).c_str(), std::string(to_string(r.config.cpu)).c_str(),
                std::string(to_string(r.policy)).c_str(), delay.empty() ? "-" : delay.c_str(),
                r.requests_per_s, r.request_rt.p99_ns / 1e6, r.subquery_rt.p99_ns / 1e3,
                100.0 * r.spin_cpu_share, 100.0 * r.process_cpu_ns / (r.window_s * 1e9 * r.cpus),
                r.parks_per_s, r.latch_waits_per_s, r.running.max);
  return buf;
}

namespace {

// ", drifting 1..F x (mean x M over the window)" when --relax-drift is on.
std::string drift_text(const run_result& r) {
  if (!(r.config.relax_drift > 1.0)) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, ", drifting 1..%g x nominal (window mean %.2f x)", r.config.relax_drift,
                r.drift_mean_level);
  return buf;
}

// Two lines on the delays: accuracy (time policies) and round length (every spinwise lock).
std::string format_delays(const run_result& r) {
  std::string out;
  char buf[512];
  const delay_accuracy_summary& a = r.delay_accuracy;
  const double delays = static_cast<double>(a.all.rounds + a.early);
  if (a.applies && a.all.rounds > 0) {
    std::snprintf(buf, sizeof buf,
                  "  delay accuracy (actual/requested, rounds that ran their course): p10 %.3f  p50 %.3f  "
                  "p90 %.3f  (%llu rounds; %llu ended early by a release (%.1f%%) and %llu preempted "
                  "left out; requested %.0f..%.0f ns)\n",
                  a.all.p10, a.all.p50, a.all.p90, static_cast<unsigned long long>(a.all.rounds),
                  static_cast<unsigned long long>(a.early), 100.0 * static_cast<double>(a.early) / delays,
                  static_cast<unsigned long long>(a.preempted), a.requested_min_ns, a.requested_max_ns);
    out += buf;
    const ratio_summary& mid = a.bands[1];
    if (mid.rounds > 0 && mid.rounds != a.all.rounds) {
      std::snprintf(buf, sizeof buf,
                    "    requested 200 ns..20 us: p10 %.3f  p50 %.3f  p90 %.3f  (%llu rounds)\n", mid.p10,
                    mid.p50, mid.p90, static_cast<unsigned long long>(mid.rounds));
      out += buf;
    }
  } else if (a.applies && a.early > 0) {
    std::snprintf(buf, sizeof buf,
                  "  delay accuracy: every one of %llu delaying rounds ended early by a release\n",
                  static_cast<unsigned long long>(a.early));
    out += buf;
  } else if (a.applies) {
    out += "  delay accuracy: no delaying round measured\n";
  }
  const round_length_summary& l = r.round_length;
  if (r.counted && l.rounds > 0) {
    std::snprintf(
        buf, sizeof buf,
        "  delay rounds: p10 %.0f  p50 %.0f  p90 %.0f ns; per relax p10 %.1f  p50 %.1f  p90 %.1f ns "
        "(nominal %.1f)\n",
        l.p10_ns, l.p50_ns, l.p90_ns, l.relax_p10_ns, l.relax_p50_ns, l.relax_p90_ns, r.emulated_relax_ns);
    out += buf;
  }
  return out;
}

}  // namespace

std::string format_run(const run_result& r) {
  const workload_config& c = r.config;
  std::ostringstream o;
  char buf[512];
  std::string knobs;
  for (const auto& [k, v] : r.knobs) knobs += " " + k + "=" + std::to_string(v);
  if (r.policy == policy_kind::adaptive) {
    knobs += "; learnt budget " + std::to_string(r.adaptive_budget_ns) + " ns after " +
             std::to_string(r.adaptive_decisions) + " decisions";
  }
  std::snprintf(buf, sizeof buf,
                "spinwise-stress %s: lock %s, policy %s%s\n"
                "  cpu %s: emulated relax %.2f ns (achieved %.2f ns; this CPU's %s %.2f ns)%s\n"
                "  %u threads on %u CPUs, %u clients, fan-out %u, window %.2f s (of %.2f s)\n",
                std::string(to_string(c.sc)).c_str(), c.lock.lock.c_str(),
                std::string(to_string(r.policy)).c_str(), knobs.c_str(),
                std::string(to_string(c.cpu)).c_str(), r.emulated_relax_ns, r.achieved_relax_ns,
                std::string(to_string(r.native_kind)).c_str(), r.native_relax_ns, drift_text(r).c_str(),
                c.threads, r.cpus, c.clients, c.fanout, r.window_s, r.total_s);
  o << buf;
  const auto lat = [&](const char* name, const latency_summary& s, double unit, const char* u) {
    std::snprintf(buf, sizeof buf, "  %-14s p50 %9.2f  p99 %9.2f  p99.9 %9.2f  max %9.2f %s  (n=%llu)\n",
                  name, s.p50_ns / unit, s.p99_ns / unit, s.p999_ns / unit, s.max_ns / unit, u,
                  static_cast<unsigned long long>(s.count));
    o << buf;
  };
  std::snprintf(buf, sizeof buf, "  requests/s %.1f   sub-queries/s %.0f\n", r.requests_per_s,
                r.subqueries_per_s);
  o << buf;
  lat("request RT", r.request_rt, 1e6, "ms");
  lat("sub-query RT", r.subquery_rt, 1e3, "us");
  lat("lock hold", r.lock_hold, 1, "ns");
  lat("lock wait", r.lock_wait, 1e3, "us");
  std::snprintf(buf, sizeof buf,
                "  latch waits/s %.0f (%.1f%% of acquisitions), latch busy %.1f%% of the window\n"
                "  spin delays: %.1f%% of process CPU, %.1f%% of the machine (%llu rounds, %llu preempted)\n"
                "  process CPU %.1f%% of %u CPUs; context switches/s %.0f voluntary, %.0f involuntary\n",
                r.latch_waits_per_s, r.acquisitions ? 100.0 * r.latch_waits / r.acquisitions : 0.0,
                100.0 * r.lock_busy_share, 100.0 * r.spin_cpu_share, 100.0 * r.spin_machine_share,
                static_cast<unsigned long long>(r.spin_rounds),
                static_cast<unsigned long long>(r.clipped_rounds),
                100.0 * r.process_cpu_ns / (r.window_s * 1e9 * r.cpus), r.cpus, r.vcsw_per_s, r.ivcsw_per_s);
  o << buf;
  o << format_delays(r);
  if (r.counted && r.parks_exact) {
    std::snprintf(buf, sizeof buf, "  parks/s %.0f (futex parks counted by the lock), yields/s %.0f\n",
                  r.parks_per_s, static_cast<double>(r.yields) / r.window_s);
  } else if (r.counted && r.parking_lock) {
    std::snprintf(buf, sizeof buf, "  parks/s %.0f (spin budgets spent, then yield and futex park)\n",
                  r.parks_per_s);
  } else if (r.counted) {
    std::snprintf(buf, sizeof buf,
                  "  parks/s 0 (%s never parks; budgets spent/s %.0f, then it yields per poll)\n",
                  c.lock.lock.c_str(), r.budgets_spent_per_s);
  } else {
    std::snprintf(buf, sizeof buf, "  parks/s n/a (%s has no wait policy to count; see voluntary switches)\n",
                  c.lock.lock.c_str());
  }
  o << buf;
  if (r.running.samples > 0) {
    std::snprintf(buf, sizeof buf,
                  "  running threads: mean %.1f, sd %.1f, p50 %g, p99 %g, max %u (%llu samples)\n",
                  r.running.mean, r.running.stddev, r.running.p50, r.running.p99, r.running.max,
                  static_cast<unsigned long long>(r.running.samples));
  } else {
    std::snprintf(buf, sizeof buf, "  running threads: not sampled (/proc/self/task unreadable)\n");
  }
  o << buf;
  if (c.sc == scenario::hot_page) {
    const double w = r.window_s;
    std::snprintf(
        buf, sizeof buf,
        "  latch waits/s %.0f against requests/s %.0f (%.0f%%): inserts %.0f/s waited %.0f/s, updates "
        "%.0f/s waited %.0f/s, selects %.0f/s waited %.0f/s\n",
        r.latch_waits_per_s, r.requests_per_s,
        r.requests_per_s > 0 ? 100.0 * r.latch_waits_per_s / r.requests_per_s : 0.0, r.inserts / w,
        r.insert_waits / w, r.updates / w, r.update_waits / w, r.selects / w, r.select_waits / w);
    o << buf;
  }
  if (c.stall_holder_ms > 0) {
    std::snprintf(buf, sizeof buf,
                  r.holder_stalled
                      ? "  stalled holder: one latch held %u ms longer, once, from the window's middle\n"
                      : "  stalled holder: none (armed for %u ms at the window's middle; no acquisition "
                        "followed)\n",
                  c.stall_holder_ms);
    o << buf;
  }
  if (!r.semaphores.empty()) o << r.semaphores;
  return o.str();
}

}  // namespace spinwise::stress
