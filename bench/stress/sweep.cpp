#include "sweep.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "report.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise::stress {

std::vector<sweep_point> sweep_points(const sweep_options& s) {
  std::vector<sweep_point> pts;
  for (cpu_model cpu : s.cpus) {
    for (std::uint32_t d : s.delays) pts.push_back({cpu, policy_kind::innodb, d, 0});
  }
  for (cpu_model cpu : s.cpus) pts.push_back({cpu, policy_kind::time, s.time_delay, s.unit_ns});
  return pts;
}

workload_config point_config(const workload_config& base, const sweep_point& p) {
  workload_config c = base;
  c.cpu = p.cpu;
  c.lock.policy = p.policy;
  c.lock.spin_wait_delay = p.delay;
  if (p.policy == policy_kind::time) {
    c.lock.delay_unit_ns = p.unit_ns;
    c.lock.pause_multiplier.reset();  // an innodb knob
  } else {
    c.lock.delay_unit_ns.reset();
  }
  return c;
}

std::vector<run_result> run_sweep(const workload_config& base, const sweep_options& s, std::ostream& table) {
  std::vector<run_result> runs;
  table << table_header() << "\n" << std::flush;
  for (const sweep_point& p : sweep_points(s)) {
    for (unsigned rep = 0; rep < s.repeat; ++rep) {
      workload_config c = point_config(base, p);
      c.seed = base.seed + rep;
      run_result r = run_workload(c);
      r.repeat = rep;
      table << table_row(r) << "\n" << std::flush;
      runs.push_back(std::move(r));
    }
  }
  return runs;
}

namespace {

struct point_median {
  double delay = 0, rps = 0, p99_ms = 0, spin_pct = 0;
};

int delay_of(const run_result& r) { return static_cast<int>(knob_value(r, "spin_wait_delay").value_or(0)); }

// (policy, cpu) -> points sorted by delay, medians over repeats.
std::map<std::pair<std::string, std::string>, std::vector<point_median>> series_of(
    const std::vector<run_result>& runs) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<const run_result*>> groups;
  for (const run_result& r : runs) {
    groups[{std::string(to_string(r.policy)), std::string(to_string(r.config.cpu)), delay_of(r)}].push_back(
        &r);
  }
  std::map<std::pair<std::string, std::string>, std::vector<point_median>> out;
  for (const auto& [key, rs] : groups) {
    std::vector<double> rps, p99, spin;
    for (const run_result* r : rs) {
      rps.push_back(r->requests_per_s);
      p99.push_back(r->request_rt.p99_ns / 1e6);
      spin.push_back(100.0 * r->spin_cpu_share);
    }
    out[{std::get<0>(key), std::get<1>(key)}].push_back({static_cast<double>(std::get<2>(key)),
                                                         runtime::median(rps), runtime::median(p99),
                                                         runtime::median(spin)});
  }
  return out;
}

const char* color_of(const std::string& cpu) {
  if (cpu == "broadwell") return "#1f77b4";
  if (cpu == "skylake") return "#d62728";
  if (cpu == "native") return "#2ca02c";
  return "#7f7f7f";
}

}  // namespace

std::string gnuplot_script(const std::vector<run_result>& runs, const std::string& png_path,
                           const std::string& title) {
  const auto series = series_of(runs);
  std::ostringstream o;
  o << "# spinwise-stress sweep plot (generated)\n";
  int n = 0;
  std::vector<std::tuple<std::string, std::string, std::string>> blocks;  // name, policy, cpu
  for (const auto& [key, pts] : series) {
    const std::string name = "$s" + std::to_string(n++);
    blocks.emplace_back(name, key.first, key.second);
    o << name << " << EOD\n";
    for (const point_median& p : pts)
      o << p.delay << " " << p.rps << " " << p.p99_ms << " " << p.spin_pct << "\n";
    o << "EOD\n";
  }
  std::string native_ns;
  for (const run_result& r : runs) {
    if (r.config.cpu == cpu_model::native) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", r.native_relax_ns);
      native_ns = b;
      break;
    }
  }
  std::string esc_title;
  for (char c : title) esc_title += (c == '"' ? '\'' : c);
  std::string esc_png;
  for (char c : png_path) esc_png += (c == '"' ? '_' : c);
  o << "set terminal pngcairo size 1500,520 font 'sans,10' noenhanced\n"
    << "set output \"" << esc_png << "\"\n"
    << "set multiplot layout 1,3 title \"" << esc_title << "\"\n"
    << "set grid\nset key top right font 'sans,8'\nset xlabel 'spin_wait_delay'\n"
    << "set xrange [-1:*]\nset yrange [0:*]\n";
  const char* panels[3][2] = {
      {"requests/s", "2"}, {"p99 request RT (ms)", "3"}, {"spin delays (% of process CPU)", "4"}};
  for (const auto& panel : panels) {
    o << "set title '" << panel[0] << "'\nset ylabel '" << panel[0] << "'\nplot ";
    bool first = true;
    for (const auto& [name, policy, cpu] : blocks) {
      if (!first) o << ", \\\n     ";
      first = false;
      std::string label = cpu == "native" && !native_ns.empty() ? "native (" + native_ns + " ns)" : cpu;
      if (policy == "innodb") {
        o << name << " using 1:" << panel[1] << " with linespoints lw 2 pt 7 lc rgb '" << color_of(cpu)
          << "' title '" << label << " (innodb)'";
      } else {
        o << name << " using 1:" << panel[1] << " with points pt 6 ps 3 lw 2 lc rgb '" << color_of(cpu)
          << "' title '" << label << " (" << policy << " policy)'";
      }
    }
    o << "\n";
  }
  o << "unset multiplot\n";
  return o.str();
}

std::string render_png(const std::vector<run_result>& runs, const std::string& png_path,
                       const std::string& title) {
  std::string gp = png_path;
  const auto dot = gp.rfind('.');
  const auto slash = gp.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) gp.resize(dot);
  gp += ".gp";
  {
    std::ofstream f(gp);
    if (!f) return "cannot write " + gp;
    f << gnuplot_script(runs, png_path, title);
    if (!f) return "cannot write " + gp;
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return "gnuplot not found (Debian: apt-get install gnuplot-nox); the script is in " + gp;
  }
  std::string quoted = "'";
  for (char c : gp) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  const int rc = std::system(("gnuplot " + quoted + " 2>&1").c_str());
  if (rc != 0) return "gnuplot failed on " + gp + " (status " + std::to_string(rc) + ")";
  return "";
}

}  // namespace spinwise::stress
