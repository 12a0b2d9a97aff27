#pragma once
// What spinwise-stress writes: a human-readable run summary, a table row per run for sweeps,
// CSV (one row per run, fixed columns) and JSON (format "spinwise.stress", version 3). The summary
// of repeated runs (median, interval) and --compare's ratios are summary.hpp's.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spinwise/runtime/run_context.hpp"
#include "workload.hpp"

namespace spinwise::stress {

// The JSON document's envelope: {"format": kJsonFormat, "version": kJsonVersion, ...}, the key
// spinwise's other tools use.
inline constexpr const char* kJsonFormat = "spinwise.stress";
// Version 2 (spinwise 0.3.0) added "settings" (a summary per setting), "order", "compare", each run's
// "setting", config.min_requests / max_duration_s / calibrate_ms and the latencies' p95_ns; version 1
// readers of "runs" find every field they knew. Added since, within version 2: each run's
// config.stall_holder_ms and holder_stalled, and with --stuck-after-ms the document's
// "stuck_reports" (stuck_watch.hpp; absent without it, [] when no wait was stuck).
// Version 3 (after spinwise 0.3.0) writes the run context under "run" (run_context.hpp) in place of
// "machine" (cpu_model, cpus, kernel, compiler, backend, date): run.cpu_model, run.cpus_allowed,
// run.kernel with run.kernel_arch, run.compiler, run.arch with run.relax, run.date.
inline constexpr int kJsonVersion = 3;

// The run context the numbers come from (committed results must name the machine): the runtime's
// one shape (<spinwise/runtime/run_context.hpp>), the same keys spinwise-bench and
// spinwise-calibrate --advise write, with the relax cost the locks convert delays with.
run_context this_run();

std::string format_run(const run_result& r);  // multi-line summary for one run

// The value of the run's knob `name` ("spin_wait_delay"); none ("" as text) when its policy has no
// such knob.
std::optional<std::uint32_t> knob_value(const run_result& r, std::string_view name);
std::string knob_text(const run_result& r, std::string_view name);

nlohmann::json to_json(const run_result& r);
// The document for a set of runs: {format, version, run, runs: [...]} (+ extra fields).
nlohmann::json make_document(const std::vector<run_result>& runs, const nlohmann::json& extra = nullptr);

// CSV: the header names every column; each run is one row with exactly as many fields.
std::vector<std::string> csv_columns();
std::string csv_header();
std::string csv_row(const run_result& r);

// The compact table of a sweep: a header line, then one line per run.
std::string table_header();
std::string table_row(const run_result& r);

}  // namespace spinwise::stress
