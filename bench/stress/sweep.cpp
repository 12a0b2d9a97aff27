#include "sweep.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "common/gnuplot.hpp"  // src/: the tools' gnuplot
#include "report.hpp"
#include "spinwise/runtime/uncertainty.hpp"

namespace spinwise::stress {

std::string format_ns(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", ns);
  return b;
}

std::string cpu_label(cpu_model m, double relax_ns) {
  return m == cpu_model::custom ? format_ns(relax_ns) + "ns" : std::string(to_string(m));
}

std::vector<sweep_point> sweep_points(const sweep_options& s) {
  std::vector<std::pair<cpu_model, double>> cpus;
  for (cpu_model cpu : s.cpus) cpus.emplace_back(cpu, 0.0);
  for (double ns : s.relax_ns) cpus.emplace_back(cpu_model::custom, ns);
  std::vector<sweep_point> pts;
  for (const auto& [cpu, ns] : cpus) {
    for (std::uint32_t d : s.delays) pts.push_back({cpu, ns, policy_kind::innodb, d, 0});
  }
  for (const auto& [cpu, ns] : cpus) pts.push_back({cpu, ns, policy_kind::time, s.time_delay, s.unit_ns});
  for (const auto& [cpu, ns] : cpus) pts.push_back({cpu, ns, policy_kind::adaptive, 0, 0});
  return pts;
}

workload_config point_config(const workload_config& base, const sweep_point& p) {
  workload_config c = base;
  c.cpu = p.cpu;
  c.relax_ns = p.cpu == cpu_model::custom ? p.relax_ns : 0;
  c.lock.policy = p.policy;
  c.lock.spin_wait_delay = p.delay;
  if (p.policy == policy_kind::adaptive) {
    c.lock.spin_wait_delay.reset();  // no knob to tune
    c.lock.delay_unit_ns.reset();
    c.lock.pause_multiplier.reset();
    c.lock.spin_loops.reset();
  } else if (p.policy == policy_kind::time) {
    c.lock.delay_unit_ns = p.unit_ns;
    c.lock.pause_multiplier.reset();  // an innodb knob
  } else {
    c.lock.delay_unit_ns.reset();
  }
  return c;
}

std::vector<setting> sweep_settings(const workload_config& base, const sweep_options& s) {
  std::vector<setting> out;
  for (const sweep_point& p : sweep_points(s)) {
    const std::string cpu = cpu_label(p.cpu, p.relax_ns), policy(to_string(p.policy)),
                      delay = std::to_string(p.delay);
    const std::string cpu_args =
        p.cpu == cpu_model::custom ? "--relax-ns " + format_ns(p.relax_ns) : "--cpu-model " + cpu;
    setting st;
    if (p.policy == policy_kind::adaptive) {
      st.label = cpu + "/adaptive";
      st.args = cpu_args + " --policy adaptive";
      st.config = point_config(base, p);
      out.push_back(std::move(st));
      continue;
    }
    st.label = cpu + "/" + policy + "/" + delay;
    st.args = cpu_args + " --policy " + policy + " --spin-wait-delay " + delay;
    if (p.policy == policy_kind::time) {
      st.label += "x" + std::to_string(p.unit_ns) + "ns";
      st.args += " --delay-unit-ns " + std::to_string(p.unit_ns);
    }
    st.config = point_config(base, p);
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<run_result> run_sweep(const workload_config& base, const sweep_options& s, std::ostream& table) {
  table << table_header() << "\n" << std::flush;
  const std::vector<planned_run> plan = plan_runs(sweep_settings(base, s), {s.repeat, s.order_seed});
  return run_planned(plan, run_workload, [&](const run_result& r) {
    table << table_row(r) << "\n" << std::flush;
  });
}

namespace {

// A point's median with its interval, per panel: requests/s, p99 request RT (ms), spin % of CPU.
struct point_spread {
  double delay = 0;
  runtime::median_interval rps, p99_ms, spin_pct;
};

int delay_of(const run_result& r) { return static_cast<int>(knob_value(r, "spin_wait_delay").value_or(0)); }

// (policy, cpu) -> points sorted by delay, summarized over repeats.
std::map<std::pair<std::string, std::string>, std::vector<point_spread>> series_of(
    const std::vector<run_result>& runs) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<const run_result*>> groups;
  for (const run_result& r : runs) {
    groups[{std::string(to_string(r.policy)), cpu_label(r.config.cpu, r.config.relax_ns), delay_of(r)}]
        .push_back(&r);
  }
  std::map<std::pair<std::string, std::string>, std::vector<point_spread>> out;
  for (const auto& [key, rs] : groups) {
    std::vector<double> rps, p99, spin;
    for (const run_result* r : rs) {
      rps.push_back(r->requests_per_s);
      p99.push_back(r->request_rt.p99_ns / 1e6);
      spin.push_back(100.0 * r->spin_cpu_share);
    }
    out[{std::get<0>(key), std::get<1>(key)}].push_back({static_cast<double>(std::get<2>(key)),
                                                         runtime::median_ci(rps), runtime::median_ci(p99),
                                                         runtime::median_ci(spin)});
  }
  return out;
}

// The most runs behind one point.
std::size_t runs_per_point(
    const std::map<std::pair<std::string, std::string>, std::vector<point_spread>>& series) {
  std::size_t n = 0;
  for (const auto& [key, pts] : series) {
    for (const point_spread& p : pts) n = std::max(n, p.rps.n);
  }
  return n;
}

const char* color_of(const std::string& cpu) {
  if (cpu == "broadwell") return "#1f77b4";
  if (cpu == "skylake") return "#d62728";
  if (cpu == "native") return "#2ca02c";
  if (cpu == "2ns") return "#9467bd";
  if (cpu == "20ns") return "#ff7f0e";
  if (cpu == "100ns") return "#8c564b";
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
  // The adaptive policy has no spin_wait_delay: its point is drawn as a level across the delays.
  double x_lo = 0, x_hi = 0;
  for (const auto& [key, pts] : series) {
    for (const point_spread& p : pts) x_hi = std::max(x_hi, p.delay);
  }
  for (const auto& [key, pts] : series) {
    const std::string name = "$s" + std::to_string(n++);
    blocks.emplace_back(name, key.first, key.second);
    // delay, then median, lo, hi of each panel's metric (gnuplot's x y ylow yhigh)
    o << name << " << EOD\n";
    const bool level = key.first == "adaptive";
    for (const point_spread& p : pts) {
      for (double x : level ? std::vector<double>{x_lo, x_hi} : std::vector<double>{p.delay}) {
        o << x;
        for (const runtime::median_interval* m : {&p.rps, &p.p99_ms, &p.spin_pct}) {
          o << " " << m->median << " " << m->lo << " " << m->hi;
        }
        o << "\n";
      }
    }
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
  const std::size_t per_point = runs_per_point(series);
  esc_title += per_point > 1 ? "\\nmedian of " + std::to_string(per_point) +
                                   " runs per point; bars: the median's 95% interval (min..max below 6 runs)"
                             : std::string("\\none run per point: no spread to draw (--repeat)");
  std::string esc_png;
  for (char c : png_path) esc_png += (c == '"' ? '_' : c);
  // One legend for the three panels, under them: inside each panel, at the top right, it covered
  // the highest delays' points. Every panel keeps the same bottom margin, so their axes line up.
  o << "set terminal pngcairo size 1500,640 font 'sans,10' noenhanced\n"
    << "set output \"" << esc_png << "\"\n"
    << "set multiplot layout 1,3 title \"" << esc_title << "\"\n"
    << "set grid\nset bmargin at screen 0.24\nset xlabel 'spin_wait_delay'\n"
    << "set xrange [-1:*]\nset yrange [0:*]\n";
  const char* panels[3][2] = {{"requests/s", "2:3:4"},
                              {"p99 request RT (ms)", "5:6:7"},
                              {"spin delays (% of process CPU)", "8:9:10"}};
  bool keyed = false;
  for (const auto& panel : panels) {
    o << (keyed ? "unset key\n"
                : "set key at screen 0.5,0.09 center center vertical maxrows 3 font 'sans,9'\n");
    keyed = true;
    o << "set title '" << panel[0] << "'\nset ylabel '" << panel[0] << "'\nplot ";
    bool first = true;
    for (const auto& [name, policy, cpu] : blocks) {
      if (!first) o << ", \\\n     ";
      first = false;
      std::string label = cpu == "native" && !native_ns.empty() ? "native (" + native_ns + " ns)" : cpu;
      if (policy == "adaptive") {
        o << name << " using 1:" << panel[1] << " with yerrorlines dt 2 lw 2 pt 4 lc rgb '" << color_of(cpu)
          << "' title '" << label << " (adaptive, no knob)'";
      } else if (policy == "innodb") {
        o << name << " using 1:" << panel[1] << " with yerrorlines lw 2 pt 7 lc rgb '" << color_of(cpu)
          << "' title '" << label << " (innodb)'";
      } else {
        o << name << " using 1:" << panel[1] << " with yerrorbars pt 6 ps 3 lw 2 lc rgb '" << color_of(cpu)
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
  const std::string gp = detail::plot_stem(png_path) + ".gp";
  {
    std::ofstream f(gp);
    if (!f) return "cannot write " + gp;
    f << gnuplot_script(runs, png_path, title);
    if (!f) return "cannot write " + gp;
  }
  return detail::run_gnuplot(gp, "the script is in " + gp);
}

}  // namespace spinwise::stress
