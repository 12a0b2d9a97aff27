#pragma once
// spinwise-stress's command line: flags into a workload_config plus output and sweep options.
// Parsing never exits the process and never prints: the outcome carries the exit code and the
// text, so the tests can check both.

#include <cstdint>
#include <string>
#include <vector>

#include "run_plan.hpp"
#include "workload.hpp"

namespace spinwise::stress {

struct sweep_options {
  std::vector<std::uint32_t> delays = {0, 1, 2, 4, 6, 10, 20, 30, 50};
  std::vector<cpu_model> cpus = {cpu_model::broadwell, cpu_model::skylake, cpu_model::native};
  std::vector<double> relax_ns;  // further emulated CPUs, each a relax of this many ns (custom)
  std::uint32_t unit_ns = 200;   // the time policy's delay_unit_ns (its documented default)
  std::uint32_t time_delay = 6;  // the time policy's spin_wait_delay (MySQL's default)
  unsigned repeat = 1;
  std::uint64_t order_seed = 0;  // 0: the points round-robin; else shuffled per round (run_plan.hpp)
};

struct cli_options {
  workload_config workload;  // resolved (defaults filled in, validated)
  bool sweep = false;
  sweep_options sweep_opts;
  std::string json_path, csv_path, png_path;  // "-" = standard output (json, csv)
  std::string metrics_path;                   // the lock statistics, Prometheus text format ("-" = stdout)
  std::string out_dir;                        // sweep: where unnamed outputs go
  // --stuck-after-ms: track the stress locks and report waits longer than this, over the whole
  // session (stuck_watch.hpp); 0: off.
  std::uint32_t stuck_after_ms = 0;
  // Repeats and settings (run_plan.hpp): runs per setting (5 with --compare, else 1), their
  // interleaving, --compare's settings (two or more, lettered A, B, ...; each its own flags parsed
  // onto the base configuration) and --dry-run (print the plan, run nothing).
  unsigned repeat = 1;
  std::uint64_t order_seed = 0;
  std::vector<setting> compare;
  bool dry_run = false;
  bool quiet = false;
  bool list_locks = false;
  bool list_knobs = false;
};

struct parse_outcome {
  bool run = false;     // false: exit with exit_code after printing message
  int exit_code = 0;    // 0 for --help / --version / --list-locks / --list-knobs, 2 for a bad command line
  std::string message;  // help or version text (stdout) or "spinwise-stress: error: ..." (stderr)
  cli_options options;
};

parse_outcome parse_cli(int argc, const char* const* argv);

}  // namespace spinwise::stress
