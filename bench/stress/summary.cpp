#include "summary.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "report.hpp"

namespace spinwise::stress {

namespace {

using opt = std::optional<double>;

double process_cpu_share(const run_result& r) {
  const double machine_ns = r.window_s * 1e9 * r.cpus;
  return machine_ns > 0 ? r.process_cpu_ns / machine_ns : 0;
}

}  // namespace

// The order is the printed order; names are the per-run CSV columns (report.cpp).
const std::vector<summary_metric>& summary_metrics() {
  static const std::vector<summary_metric> m = {
      {"requests_per_s", "requests/s", 1, true, [](const run_result& r) -> opt { return r.requests_per_s; }},
      {"subqueries_per_s", "sub-queries/s", 1, true,
       [](const run_result& r) -> opt {
         return r.config.fanout > 1 ? opt(r.subqueries_per_s) : std::nullopt;  // else one per request
       }},
      {"request_rt_p50_us", "request RT p50 ms", 1e-3, true,
       [](const run_result& r) -> opt { return r.request_rt.p50_ns / 1e3; }},
      {"request_rt_p95_us", "request RT p95 ms", 1e-3, false,
       [](const run_result& r) -> opt { return r.request_rt.p95_ns / 1e3; }},
      {"request_rt_p99_us", "request RT p99 ms", 1e-3, true,
       [](const run_result& r) -> opt { return r.request_rt.p99_ns / 1e3; }},
      {"subquery_rt_p99_us", "sub-query RT p99 us", 1, false,
       [](const run_result& r) -> opt { return r.subquery_rt.p99_ns / 1e3; }},
      {"spin_cpu_share", "spin % of process CPU", 100, true,
       [](const run_result& r) -> opt { return r.spin_cpu_share; }},
      {"spin_machine_share", "spin % of machine", 100, false,
       [](const run_result& r) -> opt { return r.spin_machine_share; }},
      {"process_cpu_share", "process CPU % of machine", 100, false,
       [](const run_result& r) -> opt { return process_cpu_share(r); }},
      {"parks_per_s", "parks/s", 1, true,
       [](const run_result& r) -> opt { return r.counted ? opt(r.parks_per_s) : std::nullopt; }},
      {"budgets_spent_per_s", "spin budgets spent/s", 1, false,
       [](const run_result& r) -> opt { return r.counted ? opt(r.budgets_spent_per_s) : std::nullopt; }},
      {"latch_waits_per_s", "latch waits/s", 1, false,
       [](const run_result& r) -> opt { return r.latch_waits_per_s; }},
      {"lock_busy_share", "latch busy %", 100, false,
       [](const run_result& r) -> opt { return r.lock_busy_share; }},
      {"vcsw_per_s", "voluntary switches/s", 1, false,
       [](const run_result& r) -> opt { return r.vcsw_per_s; }},
      {"ivcsw_per_s", "involuntary switches/s", 1, false,
       [](const run_result& r) -> opt { return r.ivcsw_per_s; }},
      {"running_mean", "running threads, mean", 1, false,
       [](const run_result& r) -> opt { return r.running.samples > 0 ? opt(r.running.mean) : std::nullopt; }},
      {"insert_waits_per_s", "insert latch waits/s", 1, false,
       [](const run_result& r) -> opt {
         return r.config.sc == scenario::hot_page && r.window_s > 0
                    ? opt(static_cast<double>(r.insert_waits) / r.window_s)
                    : std::nullopt;
       }},
      {"achieved_relax_ns", "achieved relax ns", 1, false,
       [](const run_result& r) -> opt { return r.achieved_relax_ns; }},
      {"loop_iter_ns", "work loop ns/iteration", 1, false,
       [](const run_result& r) -> opt { return r.loop_iter_ns; }},
  };
  return m;
}

const summary_metric* find_summary_metric(std::string_view name) {
  for (const summary_metric& m : summary_metrics()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

const metric_summary* setting_summary::find(std::string_view name) const {
  for (const metric_summary& m : metrics) {
    if (name == m.metric->name) return &m;
  }
  return nullptr;
}

namespace {

// The metric's values over `runs`, those that apply and are finite.
std::vector<double> values_of(const summary_metric& m, const std::vector<run_result>& runs) {
  std::vector<double> v;
  for (const run_result& r : runs) {
    const opt x = m.value(r);
    if (x && std::isfinite(*x)) v.push_back(*x);
  }
  return v;
}

}  // namespace

setting_summary summarize_runs(const std::vector<run_result>& runs) {
  setting_summary s;
  s.runs = runs.size();
  for (const summary_metric& m : summary_metrics()) {
    std::vector<double> v = values_of(m, runs);
    if (v.empty()) continue;
    s.metrics.push_back({&m, runtime::median_ci(std::move(v))});
  }
  return s;
}

nlohmann::json to_json(const setting_summary& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const metric_summary& m : s.metrics) {
    const runtime::median_interval& c = m.ci;
    j[m.metric->name] = {{"n", c.n},   {"median", c.median}, {"min", c.min},          {"max", c.max},
                         {"lo", c.lo}, {"hi", c.hi},         {"coverage", c.coverage}};
  }
  return j;
}

nlohmann::json settings_json(const std::vector<setting>& settings, const std::vector<setting_summary>& sums) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < settings.size() && i < sums.size(); ++i) {
    a.push_back({{"index", i},
                 {"label", settings[i].label},
                 {"args", settings[i].args},
                 {"runs", sums[i].runs},
                 {"summary", to_json(sums[i])}});
  }
  return a;
}

namespace {

// A value as printed: about four significant digits, no exponent.
std::string num(double v) {
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", v);
  }
  return buf;
}

// "344.1 [288.0-371.2]"
std::string median_cell(const metric_summary& m) {
  const double k = m.metric->print_scale;
  return num(m.ci.median * k) + " [" + num(m.ci.lo * k) + "-" + num(m.ci.hi * k) + "]";
}

std::string pct(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * p);
  return buf;
}

}  // namespace

std::string format_summary(const setting_summary& s, const std::string& heading) {
  std::ostringstream o;
  o << heading << "\n";
  const metric_summary* first = s.metrics.empty() ? nullptr : &s.metrics.front();
  if (first != nullptr) {
    const std::size_t n = first->ci.n;
    o << "  median of " << n << (n == 1 ? " run" : " runs") << " [interval: ";
    if (n >= 6) {
      o << "order statistics holding the median with " << pct(first->ci.coverage) << "]";
    } else if (n >= 2) {
      o << "min..max, which holds the median with " << pct(first->ci.coverage) << "; 95% needs 6 runs]";
    } else {
      o << "none from one run]";
    }
    o << "\n";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-26s %-30s %s\n", "metric", "median [interval]", "min..max");
  o << buf;
  for (const metric_summary& m : s.metrics) {
    const double k = m.metric->print_scale;
    const std::string range = num(m.ci.min * k) + ".." + num(m.ci.max * k);
    std::snprintf(buf, sizeof buf, "  %-26s %-30s %s\n", m.metric->label, median_cell(m).c_str(),
                  range.c_str());
    o << buf;
  }
  return o.str();
}

std::string format_summary_table(const std::vector<setting>& settings,
                                 const std::vector<setting_summary>& sums,
                                 const std::vector<std::string>& metric_names) {
  std::size_t width = 7;
  for (const setting& s : settings) width = std::max(width, s.label.size());
  std::ostringstream o;
  o << std::string(width, ' ');
  char buf[256];
  for (const std::string& name : metric_names) {
    const summary_metric* m = find_summary_metric(name);
    std::snprintf(buf, sizeof buf, "  %-28s", m != nullptr ? m->label : name.c_str());
    o << buf;
  }
  o << "\n";
  for (std::size_t i = 0; i < settings.size() && i < sums.size(); ++i) {
    o << settings[i].label << std::string(width - settings[i].label.size(), ' ');
    for (const std::string& name : metric_names) {
      const metric_summary* m = sums[i].find(name);
      std::snprintf(buf, sizeof buf, "  %-28s", m != nullptr ? median_cell(*m).c_str() : "-");
      o << buf;
    }
    o << "\n";
  }
  return o.str();
}

// --- --compare ----------------------------------------------------------------------------------

std::vector<setting_ratio> compare_settings(const std::vector<std::vector<run_result>>& by_setting) {
  std::vector<setting_ratio> out;
  if (by_setting.empty()) return out;
  const std::vector<run_result>& base = by_setting.front();
  for (std::size_t i = 1; i < by_setting.size(); ++i) {
    setting_ratio sr;
    sr.other = i;
    for (const summary_metric& m : summary_metrics()) {
      if (!m.compared) continue;
      const std::vector<double> a = values_of(m, base);
      const std::vector<double> b = values_of(m, by_setting[i]);
      if (a.empty() || b.empty()) continue;  // does not apply to one side
      metric_ratio mr;
      mr.metric = &m;
      mr.na = a.size();
      mr.nb = b.size();
      mr.a_median = runtime::median_ci(a).median;
      mr.b_median = runtime::median_ci(b).median;
      mr.ratio = runtime::compare_medians(a, b);
      sr.metrics.push_back(mr);
    }
    out.push_back(std::move(sr));
  }
  return out;
}

// Whether compare_medians gave a ratio: two runs a side and a baseline median that is not 0.
static bool has_ratio(const metric_ratio& m) { return m.na >= 2 && m.nb >= 2 && m.a_median != 0; }

std::string verdict_text(const metric_ratio& m) {
  if (m.ratio.verdict != runtime::difference::insufficient)
    return std::string(runtime::to_string(m.ratio.verdict));
  if (m.na >= 2 && m.nb >= 2 && m.a_median == 0) return "no ratio: the baseline's median is 0";
  const std::string min = std::to_string(runtime::kMinRunsForVerdict);
  return std::string(runtime::to_string(runtime::difference::insufficient)) + " (" + std::to_string(m.na) +
         " and " + std::to_string(m.nb) + " runs; a verdict needs " + min + " a side: --repeat " + min + ")";
}

std::string ratio_line(const metric_ratio& m, const std::string& other, const std::string& baseline) {
  std::string s = other + "/" + baseline + " " + m.metric->label;
  char buf[128];
  if (m.ratio.verdict == runtime::difference::insufficient) {
    // The ratio of medians without its interval: from two or three runs a side the bootstrap's
    // interval is narrow and means little.
    if (!has_ratio(m)) return s + ": " + verdict_text(m);
    std::snprintf(buf, sizeof buf, " %.2fx: ", m.ratio.ratio);
    return s + buf + verdict_text(m);
  }
  std::snprintf(buf, sizeof buf, " %.2fx [%.2f-%.2f]: ", m.ratio.ratio, m.ratio.lo, m.ratio.hi);
  return s + buf + verdict_text(m);
}

namespace {

const char* difference_key(runtime::difference d) {
  switch (d) {
    case runtime::difference::within_noise:
      return "within_noise";
    case runtime::difference::higher:
      return "higher";
    case runtime::difference::lower:
      return "lower";
    case runtime::difference::insufficient:
      return "insufficient";
  }
  return "insufficient";
}

nlohmann::json number_or_null(bool ok, double v) { return ok ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json compare_json(const std::vector<setting_ratio>& ratios, const std::vector<setting>& settings) {
  const auto label = [&](std::size_t i) {
    return i < settings.size() ? settings[i].label : std::to_string(i);
  };
  nlohmann::json arr = nlohmann::json::array();
  for (const setting_ratio& sr : ratios) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const metric_ratio& m : sr.metrics) {
      const bool ok = m.ratio.verdict != runtime::difference::insufficient;
      metrics[m.metric->name] = {{"ratio", number_or_null(ok, m.ratio.ratio)},
                                 {"lo", number_or_null(ok, m.ratio.lo)},
                                 {"hi", number_or_null(ok, m.ratio.hi)},
                                 {"baseline_median", m.a_median},
                                 {"median", m.b_median},
                                 {"n_baseline", m.na},
                                 {"n", m.nb},
                                 {"difference", difference_key(m.ratio.verdict)},
                                 {"verdict", verdict_text(m)}};
    }
    arr.push_back({{"setting", label(sr.other)},
                   {"index", sr.other},
                   {"of", label(sr.other) + "/" + label(sr.baseline)},
                   {"metrics", metrics}});
  }
  return {{"baseline", label(0)},
          {"confidence", 0.95},
          {"method",
           "ratio of medians; percentile bootstrap interval, 4000 resamples, fixed seed; no verdict below 4 "
           "runs a side; beyond noise when the interval excludes 1 and, below 6 runs a side, the ranges do "
           "not overlap"},
          {"ratios", arr}};
}

// --- CSV ------------------------------------------------------------------------------------------

std::vector<std::string> summary_csv_columns() {
  std::vector<std::string> c = {"summary_runs", "summary_coverage"};
  for (const summary_metric& m : summary_metrics()) {
    for (const char* part : {"_median", "_min", "_max", "_lo", "_hi"})
      c.push_back(std::string(m.name) + part);
  }
  return c;
}

std::string summary_csv_cells(const setting_summary& s) {
  const auto g = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  const metric_summary* rps = s.find("requests_per_s");
  std::string out = std::to_string(s.runs) + "," + (rps != nullptr ? g(rps->ci.coverage) : std::string());
  for (const summary_metric& m : summary_metrics()) {
    const metric_summary* ms = s.find(m.name);
    if (ms == nullptr) {
      out += ",,,,,";
      continue;
    }
    for (double v : {ms->ci.median, ms->ci.min, ms->ci.max, ms->ci.lo, ms->ci.hi}) out += "," + g(v);
  }
  return out;
}

std::string csv_document(const std::vector<run_result>& runs, const std::vector<setting_summary>& sums) {
  std::string s = csv_header();
  for (const std::string& c : summary_csv_columns()) s += "," + c;
  s += "\n";
  const setting_summary none;
  for (const run_result& r : runs) {
    s += csv_row(r) + "," + summary_csv_cells(r.setting < sums.size() ? sums[r.setting] : none) + "\n";
  }
  return s;
}

}  // namespace spinwise::stress
