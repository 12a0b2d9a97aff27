// spinwise-calibrate --watch: each CPU's relax cost over time, a table or a document, and a
// gnuplot timeline (docs/calibration.md, "Watching the relax cost over time").
#include <cstdio>
#include <fstream>
#include <string>

#include "cli.hpp"
#include "common/gnuplot.hpp"  // src/: the tools' gnuplot
#include "spinwise/runtime/atomic_file.hpp"

namespace spinwise::calibrate_tool {

namespace {

// The verdict over time in a table cell.
std::string time_verdict(const sw::watch_series& w, const sw::time_stability_limits& lim) {
  if (!w.error.empty()) return "ERROR: " + w.error;
  const sw::relax_time_summary& t = w.summary;
  switch (t.status) {
    case sw::stability::stable:
      return "stable";
    case sw::stability::drifting:
      return "DRIFTING (p10..p90 " + fmt("%.2f", t.ns_p10) + " .. " + fmt("%.2f", t.ns_p90) +
             " ns = " + fmt("%.0f", t.central_spread * 100) +
             "% of the median; stable is <= " + fmt("%.0f", lim.stable_spread * 100) + "%)";
    default:
      return "too few samples (" + std::to_string(t.samples) + " < " + std::to_string(lim.min_samples) + ")";
  }
}

void print_watch_table(const sw::watch_result& r, std::FILE* o) {
  const sw::watch_options& st = r.settings;
  std::string kinds;
  for (sw::relax_kind k : st.kinds) kinds += (kinds.empty() ? "" : ", ") + str(sw::to_string(k));
  std::fprintf(
      o,
      "%s --watch: %s on %zu CPU(s) every %.0f ms for %.1f s (%.2f s); each sample: %u trials of ~%.0f us "
      "after %.0f ms of warm-up, pinned\n",
      r.tool.c_str(), kinds.c_str(), st.cpus.size(), st.interval_ms, st.duration_s, r.elapsed_s, st.trials,
      st.trial_ns / 1000.0, st.warmup_ms);
  print_machine(r.machine, o);
  std::fprintf(o, "\n%4s %-7s %7s %13s %7s %7s %11s %7s %7s %7s %9s  %s\n", "cpu", "relax", "samples",
               "ns/relax: min", "median", "max", "ticks: min", "median", "max", "spread", "p10..p90",
               "verdict over time");
  for (const sw::watch_series& w : r.series) {
    const sw::relax_time_summary& t = w.summary;
    std::fprintf(o, "%4d %-7s %7u %13.2f %7.2f %7.2f %11.2f %7.2f %7.2f %6.1f%% %8.1f%%  %s\n", w.cpu,
                 str(sw::to_string(w.kind)).c_str(), t.samples, t.ns_min, t.ns_median, t.ns_max, t.ticks_min,
                 t.ticks_median, t.ticks_max, t.spread * 100, t.central_spread * 100,
                 time_verdict(w, st.limits).c_str());
  }
  std::fprintf(o, "\n");
  for (const sw::watch_conclusion& c : r.conclusions) std::fprintf(o, "%s\n", c.meaning.c_str());
}

using sw::detail::gnuplot_quote;

// --plot: like spinwise-stress --png, a data file and a script next to the PNG (same name, .dat
// and .gp), then gnuplot on the script. "" on success, else why not; the data and the script stay
// either way, so the plot can be drawn elsewhere.
std::string plot_watch(const sw::watch_result& r, const std::string& png) {
  const std::string stem = sw::detail::plot_stem(png);
  const std::string dat = stem + ".dat", gp = stem + ".gp";
  {
    // One block per CPU and kind (gnuplot's `index`): seconds since the start, ns per relax.
    std::ofstream f(dat);
    f << "# spinwise-calibrate --watch: t_s ns_per_relax, one block per CPU and relax kind\n";
    for (const sw::watch_series& w : r.series) {
      f << "# cpu " << w.cpu << " " << sw::to_string(w.kind) << "\n";
      for (const sw::relax_time_sample& x : w.samples)
        f << fmt("%.3f", x.t_ms / 1000.0) << " " << fmt("%.4f", x.ns) << "\n";
      if (w.samples.empty()) f << "0 NaN\n";  // keeps the block, so index i is still series i
      f << "\n\n";
    }
    if (!f) return "cannot write " + dat;
  }
  {
    std::ofstream f(gp);
    const sw::machine_info& m = r.machine;
    f << "# spinwise-calibrate --watch plot (generated)\n"
      << "set terminal pngcairo size 1100,520 font 'sans,10' noenhanced\n"
      << "set output " << gnuplot_quote(png) << "\n"
      << "set title "
      << gnuplot_quote("relax cost over time, every " + fmt("%.0f", r.settings.interval_ms) +
                       " ms: " + m.cpu_model + ", " + m.virtualization + ", " + r.created)
      << "\nset xlabel 'time (s)'\nset ylabel 'ns per relax (median of each sample)'\n"
      << "set grid\nset key outside right top\nset yrange [0:*]\nset xrange [0:"
      << fmt("%g", r.settings.duration_s) << "]\nset datafile missing 'NaN'\n";
    for (std::size_t i = 0; i < r.conclusions.size(); ++i) {
      const sw::watch_conclusion& c = r.conclusions[i];
      f << "set label " << i + 1 << " "
        << gnuplot_quote(str(sw::to_string(c.kind)) + ": " + str(sw::to_string(c.status)))
        << " at graph 0.01, graph " << fmt("%.2f", 0.05 + 0.05 * static_cast<double>(i)) << "\n";
    }
    f << "plot ";
    for (std::size_t i = 0; i < r.series.size(); ++i) {
      const sw::watch_series& w = r.series[i];
      f << (i == 0 ? "" : ", \\\n     ") << gnuplot_quote(dat) << " index " << i
        << " using 1:2 with linespoints lw 2 pt 7 ps 0.6 title "
        << gnuplot_quote("cpu " + std::to_string(w.cpu) + " " + str(sw::to_string(w.kind)));
    }
    f << "\n";
    if (!f) return "cannot write " + gp;
  }
  return sw::detail::run_gnuplot(gp, "the data is in " + dat + ", the script in " + gp);
}

// Writes `text` to `path` (spinwise::write_file_atomically, as write_profile does).
bool write_text(const std::string& path, const std::string& text, std::string& why) {
  return sw::write_file_atomically(path, text, &why);
}

}  // namespace

int run_watch(sw::watch_options wo, const std::string& format, const std::string& output,
              const std::string& plot, bool strict) {
  std::string why;
  for (const std::string* path : {&output, &plot}) {
    if (path->empty()) continue;
    if (why = cannot_create(*path); !why.empty()) {
      std::fprintf(stderr, "spinwise-calibrate: %s (nothing was measured)\n", why.c_str());
      return kExitFailure;
    }
  }
  progress_line progress;
  wo.progress = [&progress](const sw::watch_progress& p) { progress.update(p); };
  sw::watch_result wr;
  const bool ok = sw::watch_relax_cost(wo, wr, &why);
  progress.clear();
  if (!ok) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitFailure;
  }
  const std::string doc = format == "json" || !output.empty() ? sw::watch_to_json(wr) : "";
  if (format == "json") {
    std::fputs(doc.c_str(), stdout);
  } else {
    print_watch_table(wr, stdout);
  }
  std::fflush(stdout);
  std::FILE* notes = format == "json" ? stderr : stdout;
  int rc = kExitOk;
  if (!output.empty()) {
    if (write_text(output, doc, why)) {
      std::fprintf(notes, "\nwatch document written to %s\n", output.c_str());
    } else {
      std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
      rc = kExitFailure;
    }
  }
  if (!plot.empty()) {
    if (why = plot_watch(wr, plot); why.empty()) {
      std::fprintf(notes, "plot written to %s\n", plot.c_str());
    } else {
      std::fprintf(stderr, "spinwise-calibrate: --plot: %s\n", why.c_str());
      rc = kExitFailure;
    }
  }
  if (rc == kExitOk && strict && !wr.all_stable()) {
    std::fprintf(stderr, "spinwise-calibrate: --strict: the relax cost was not stable over time\n");
    return kExitUnstable;
  }
  return rc;
}

}  // namespace spinwise::calibrate_tool
