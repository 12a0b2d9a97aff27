#pragma once
// One invocation of spinwise-stress: its settings (the one configuration, --compare's settings or
// the sweep's points), their runs in the order they ran (run_plan.hpp), each setting's summary and
// --compare's ratios (summary.hpp); what it prints as it goes and the JSON and CSV it writes.
// main.cpp runs a session with run_workload; a test runs one with runs it injects.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "run_plan.hpp"
#include "summary.hpp"

namespace spinwise::stress {

enum class session_kind : std::uint8_t { single, compare, sweep };

struct session {
  session_kind kind = session_kind::single;
  std::vector<setting> settings;
  run_order order;
  std::vector<planned_run> plan;
  std::vector<run_result> runs;  // in run order
  std::vector<setting_summary> summaries;
  std::vector<setting_ratio> ratios;  // --compare: every setting after the first against the first
};

// The settings, the order and the plan of a parsed command line; nothing runs.
session plan_session(const cli_options& o);

// Runs the plan with `run`, printing to `human` as each run ends (one run alone: its full summary,
// unless --quiet; several: a table row each), then each setting's medians and intervals and
// --compare's ratios with their verdicts.
void run_session(session& s, const cli_options& o, const run_fn& run, std::ostream& human);

// The JSON document: report.hpp's runs (in run order) plus "settings" (a summary each), "order"
// and, for --compare, "compare"; `extra`'s keys are added (the sweep's grid).
nlohmann::json session_document(const session& s, const nlohmann::json& extra = nullptr);

// The CSV: one row per run with its setting's summary columns (summary.hpp csv_document).
std::string session_csv(const session& s);

}  // namespace spinwise::stress
