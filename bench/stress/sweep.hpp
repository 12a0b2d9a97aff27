#pragma once
// --sweep: the incident's knob against the CPU generation.
//
// For every emulated CPU (broadwell, skylake, native, and relaxes of given lengths), spin_wait_delay
// in {0, 1, 2, 4, 6, 10, 20, 30, 50} with the innodb policy (delay in relax instructions, as MySQL),
// then the time policy at one delay_unit_ns (delay in ns), then the adaptive policy with no knob
// set. Each point is a setting run `repeat` times, the points interleaved (run_plan.hpp);
// the table lists every run, the CSV and JSON hold every run and each point's summary, and the plot
// shows the median per point with its 95% interval as error bars: requests/s, p99 request RT and
// the spin share of process CPU against spin_wait_delay, one line per CPU, the time policy as one
// marker per CPU at its spin_wait_delay, the adaptive policy as a dashed level line per CPU (it has
// no spin_wait_delay).

#include <ostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "run_plan.hpp"
#include "workload.hpp"

namespace spinwise::stress {

struct sweep_point {
  cpu_model cpu = cpu_model::native;
  double relax_ns = 0;  // cpu == custom
  policy_kind policy = policy_kind::innodb;
  std::uint32_t delay = 0;
  std::uint32_t unit_ns = 0;  // time policy only
};

std::vector<sweep_point> sweep_points(const sweep_options& s);
// "broadwell", "skylake", "native", or "<n>ns" for a custom relax of n ns.
std::string cpu_label(cpu_model m, double relax_ns);
std::string format_ns(double ns);
workload_config point_config(const workload_config& base, const sweep_point& p);

// The points as settings: labelled "skylake/innodb/6", with the flags that make them.
std::vector<setting> sweep_settings(const workload_config& base, const sweep_options& s);

// Runs every point `repeat` times, interleaved (s.order_seed), printing a table row per run to
// `table` as it finishes.
std::vector<run_result> run_sweep(const workload_config& base, const sweep_options& s, std::ostream& table);

// The gnuplot script that draws `runs` into `png_path`: medians over repeats, and error bars from
// the median's 95% interval (min..max below six runs).
std::string gnuplot_script(const std::vector<run_result>& runs, const std::string& png_path,
                           const std::string& title);

// Writes the script next to the PNG (same name, .gp) and runs gnuplot on it. Returns "" on
// success, else why not (gnuplot missing, or failing).
std::string render_png(const std::vector<run_result>& runs, const std::string& png_path,
                       const std::string& title);

}  // namespace spinwise::stress
