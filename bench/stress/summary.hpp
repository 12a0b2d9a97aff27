#pragma once
// What the repeated runs of a setting say, and how sure: every metric that varies from run to run,
// as the median of the runs with min..max and the median's 95% interval; and, for --compare, the
// ratio of each other setting's medians to the first's (B/A) with its interval and a verdict.
//
// The statistics are the runtime's (<spinwise/runtime/uncertainty.hpp>): a distribution-free
// interval from order statistics (below six runs it is min..max, and its coverage says what that
// is worth), and B/A with a fixed-seed bootstrap interval; "beyond noise" when that interval
// excludes 1 (and, below six runs a side, the two ranges do not overlap); no verdict below
// runtime::kMinRunsForVerdict (4) runs a side. Everything here takes
// run results, so a test can inject them; nothing here runs a workload.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run_plan.hpp"
#include "spinwise/runtime/uncertainty.hpp"
#include "workload.hpp"

namespace spinwise::stress {

// A metric that varies between runs of one setting.
struct summary_metric {
  const char* name;    // its per-run CSV column, its key in the JSON summary
  const char* label;   // in the printed tables
  double print_scale;  // printed value = value x this (shares as %, latencies in ms)
  bool compared;       // --compare prints and judges its ratio
  std::optional<double> (*value)(const run_result&);  // none where it does not apply
};
const std::vector<summary_metric>& summary_metrics();
const summary_metric* find_summary_metric(std::string_view name);

struct metric_summary {
  const summary_metric* metric = nullptr;
  runtime::median_interval ci;  // n, median, min, max, lo, hi, coverage
};

// One setting's runs, summarized: the metrics that apply to them (a metric that applies to no run,
// such as parks/s of a std lock, is left out).
struct setting_summary {
  std::size_t runs = 0;
  std::vector<metric_summary> metrics;
  const metric_summary* find(std::string_view name) const;
};
setting_summary summarize_runs(const std::vector<run_result>& runs);

// {"<metric>": {"n", "median", "min", "max", "lo", "hi", "coverage"}, ...}
nlohmann::json to_json(const setting_summary& s);

// The settings array of the JSON document: {index, label, args, runs, summary} per setting.
nlohmann::json settings_json(const std::vector<setting>& settings, const std::vector<setting_summary>& sums);

// A setting's block in the printed output: a line per metric, `median [lo-hi]` and min..max.
std::string format_summary(const setting_summary& s, const std::string& heading);

// One row per setting, a `median [lo-hi]` cell per named metric (the sweep's summary table).
std::string format_summary_table(const std::vector<setting>& settings,
                                 const std::vector<setting_summary>& sums,
                                 const std::vector<std::string>& metric_names);

// --- --compare ----------------------------------------------------------------------------------

struct metric_ratio {
  const summary_metric* metric = nullptr;
  std::size_t na = 0, nb = 0;  // runs with a value on each side
  double a_median = 0, b_median = 0;
  runtime::ratio_interval ratio;  // median(B) / median(A), its interval and verdict
};

// Setting `other` against the baseline (the first setting): a ratio per compared metric that
// applies to both.
struct setting_ratio {
  std::size_t baseline = 0, other = 0;
  std::vector<metric_ratio> metrics;
};

// Every setting after the first against the first; `by_setting[i]` are setting i's runs.
std::vector<setting_ratio> compare_settings(const std::vector<std::vector<run_result>>& by_setting);

// "higher, beyond noise", "lower, beyond noise", "within noise", or why there is no verdict
// ("too few runs to judge (2 and 2 runs; a verdict needs 4 a side: --repeat 4)").
std::string verdict_text(const metric_ratio& m);

// "B/A requests/s 1.31x [1.12-1.52]: higher, beyond noise"; below the runs a verdict needs, the
// ratio without its interval: "B/A requests/s 1.31x: too few runs to judge (...)".
std::string ratio_line(const metric_ratio& m, const std::string& other, const std::string& baseline);

// {"baseline": "A", "confidence", "method", "ratios": [{"setting": "B", "of": "B/A", "metrics": {...}}]}
nlohmann::json compare_json(const std::vector<setting_ratio>& ratios, const std::vector<setting>& settings);

// --- CSV: each run's row carries its setting's summary ------------------------------------------

// summary_runs, summary_coverage, then <metric>_median, _min, _max, _lo, _hi for every metric.
std::vector<std::string> summary_csv_columns();
std::string summary_csv_cells(const setting_summary& s);  // empty cells where a metric does not apply

// The whole CSV: report.hpp's per-run columns, then the summary columns of the run's setting.
std::string csv_document(const std::vector<run_result>& runs, const std::vector<setting_summary>& sums);

}  // namespace spinwise::stress
