#pragma once
// What spinwise-stress writes: a human-readable run summary, a table row per run for sweeps,
// CSV (one row per run, fixed columns) and JSON (schema "spinwise.stress", version 1).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload.hpp"

namespace spinwise::stress {

inline constexpr const char* kJsonSchema = "spinwise.stress";
inline constexpr int kJsonVersion = 1;

// The machine the numbers come from (committed results must name it).
struct machine_info {
  std::string cpu_model;  // /proc/cpuinfo "model name" (or "unknown")
  unsigned cpus = 0;      // CPUs this process may use
  std::string kernel;     // uname -sr
  std::string compiler;
  std::string backend;    // spinwise relax backend
  std::string date;       // UTC, ISO 8601
};
machine_info this_machine();
nlohmann::json to_json(const machine_info& m);

std::string format_run(const run_result& r);  // multi-line summary for one run

nlohmann::json to_json(const run_result& r);
// The document for a set of runs: {schema, version, machine, runs: [...]} (+ extra fields).
nlohmann::json make_document(const std::vector<run_result>& runs, const nlohmann::json& extra = nullptr);

// CSV: the header names every column; each run is one row with exactly as many fields.
std::vector<std::string> csv_columns();
std::string csv_header();
std::string csv_row(const run_result& r);

// The compact table of a sweep: a header line, then one line per run.
std::string table_header();
std::string table_row(const run_result& r);

}  // namespace spinwise::stress
