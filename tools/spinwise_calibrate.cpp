// spinwise-calibrate: measure what one relax instruction costs on every CPU of this machine,
// write the profile engines load, and print the settings that keep spin waits the same length in
// time (spinwise's and MySQL's). See docs/calibration.md.
//
// --watch SECONDS follows each CPU's relax cost over time instead (docs/calibration.md, "Watching
// the relax cost over time"): a table or JSON, and a gnuplot timeline with --plot.
//
// --advise mysql|mariadb prints the my.cnf lines for a real engine instead (docs/engines.md): the
// spin settings that give the spin time per round the engine's defaults gave before Skylake.
//
// Exit codes: 0 measured (warnings are printed); 1 the measurement or the output failed;
// 2 usage error (bad flag or value, unknown CPU or relax kind; with --advise: an engine, version
// or architecture the advice does not cover); 3 --strict and a measurement was not stable (with
// --advise: the PAUSE measurement is not stable and its spread could change the advice; no advice
// is printed).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/gnuplot.hpp"  // src/: the tools' gnuplot
#include "spinwise/arch.hpp"
#include "spinwise/runtime/atomic_file.hpp"
#include "spinwise/runtime/c2c.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/engine_advice.hpp"
#include "spinwise/runtime/profile.hpp"
#include "spinwise/runtime/run_context.hpp"
#include "spinwise/version.hpp"

namespace sw = spinwise;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnstable = 3;

std::string str(std::string_view s) { return std::string(s); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string bytes(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + " GiB";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

std::string kinds_supported() {
  std::string s;
  for (sw::relax_kind k : sw::kAllRelaxKinds) {
    if (sw::relax_supported(k)) s += (s.empty() ? "" : ", ") + str(sw::to_string(k));
  }
  return s;
}

bool parse_backends(const std::string& text, std::vector<sw::relax_kind>& out, std::string& error) {
  out.clear();
  if (text == "all") return true;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string name = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    sw::relax_kind k{};
    if (!sw::parse_relax_kind(name, k)) {
      std::string known;
      for (sw::relax_kind any : sw::kAllRelaxKinds)
        known += (known.empty() ? "" : ", ") + str(sw::to_string(any));
      error = "unknown relax kind '" + name + "' in --backends (known: " + known +
              "; this CPU supports: " + kinds_supported() + ")";
      return false;
    }
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

// The loop-overhead baselines: printed for comparison, never judged (a few instructions a step
// split into modes by a timer tick mean nothing for a spin wait).
bool baseline(sw::relax_kind k) { return k == sw::relax_kind::none || k == sw::relax_kind::barrier; }

// What a verdict other than stable looks like in a table cell.
std::string verdict(const sw::sample_summary& s) {
  switch (s.status) {
    case sw::stability::stable:
      return "stable";
    case sw::stability::bimodal:
      return "BIMODAL " + fmt("%.1f", s.low_mode) + "|" + fmt("%.1f", s.high_mode) + " ticks (" +
             fmt("%.0f", s.high_share * 100) + "% slow)";
    case sw::stability::noisy:
      return "NOISY";
    case sw::stability::drifting:
      return "DRIFTING";
    case sw::stability::insufficient:
      return "too few trials";
  }
  return "?";
}

void print_machine(const sw::machine_info& m, std::FILE* o) {
  std::fprintf(o, "machine   %s (%s%s%s), %d CPUs\n", m.cpu_model.c_str(), m.cpu_vendor.c_str(),
               m.cpu_vendor.empty() ? "" : " ", m.cpu_id.c_str(), m.cpu_count);
  std::fprintf(o, "          %s; virtualization: %s%s%s\n", m.kernel.c_str(), m.virtualization.c_str(),
               m.container.empty() ? "" : "; container: ", m.container.c_str());
  std::fprintf(o, "counter   %s at %.3f MHz, %s\n", m.counter.c_str(),
               static_cast<double>(m.counter_hz) / 1e6,
               m.counter_invariant ? "invariant" : "NOT invariant (ns figures assume a constant rate)");
}

void print_table(const sw::calibration_result& r, std::FILE* o) {
  const sw::machine_info& m = r.machine;
  const sw::calibration_settings& st = r.settings;
  std::fprintf(
      o, "%s: %s backend, %zu CPU(s) measured in %.2f s (%s: %u trials of ~%.0f us per CPU and relax kind)\n",
      r.tool.c_str(), m.arch.c_str(), r.cpus.size(), r.elapsed_s, st.quick ? "quick mode" : "full mode",
      st.trials, st.trial_ns / 1000.0);
  print_machine(m, o);

  const sw::topology& t = r.topo;
  std::size_t smt = 1;
  for (const sw::topology_cpu& c : t.cpus) smt = std::max(smt, c.smt_siblings.size());
  std::fprintf(o, "topology  %s: %d package(s), %d core(s), %zu CPU(s)%s, %d NUMA node(s)\n",
               t.source.c_str(), t.packages, t.cores, t.cpus.size(),
               smt > 1 ? (", " + std::to_string(smt) + "-way SMT").c_str() : " (no SMT)", t.numa_nodes);
  if (!t.caches.empty()) {
    std::string caches;
    for (const sw::cache_level& c : t.caches) {
      const char* suffix = c.type == "data" ? "d" : c.type == "instruction" ? "i" : "";
      caches += (caches.empty() ? "" : ", ") + std::string("L") + std::to_string(c.level) + suffix + " " +
                bytes(c.size) + " x" + std::to_string(c.instances);
    }
    std::fprintf(o, "          caches: %s\n", caches.c_str());
  }
  std::string kinds;
  for (const sw::core_kind& k : t.core_kinds) {
    kinds += (kinds.empty() ? "" : "; ") + std::to_string(k.index) + " = " + k.name + " (cpus " +
             sw::format_cpu_list(k.cpus) + ")";
  }
  std::fprintf(o, "          core kinds: %s\n", kinds.c_str());
  if (!t.note.empty()) std::fprintf(o, "          note: %s\n", t.note.c_str());
  if (st.cycles_used == "perf_event") {
    std::fprintf(o, "cycles    counted with perf_event (PERF_COUNT_HW_CPU_CYCLES, user mode)\n");
  } else {
    std::fprintf(o,
                 "cycles    estimated: counter ticks / ticks per core cycle (core clock from a dependent add "
                 "chain)\n");
    std::fprintf(o, "          perf_event not used: %s\n", st.perf_error.c_str());
  }

  std::fprintf(o, "\n%4s %4s %-7s %28s %10s %14s %8s %7s  %s\n", "cpu", "kind", "relax",
               "ticks/relax: min  median   p90", "ns/relax", "cycles/relax", "core GHz", "spread", "verdict");
  for (const sw::cpu_calibration& c : r.cpus) {
    if (!c.error.empty()) {
      std::fprintf(o, "%4d %4d %-7s %s\n", c.cpu, c.core_kind, "-", c.error.c_str());
      continue;
    }
    for (const sw::relax_measurement& mm : c.relax) {
      const bool confident = mm.ticks.status == sw::stability::stable;
      const std::string ns = confident ? fmt("%.2f", mm.ns_median) : "(" + fmt("%.2f", mm.ns_median) + ")";
      const std::string cyc =
          fmt("%.1f", mm.cycles_median) + (mm.cycles_method == "perf_event" ? " pmu" : " est");
      std::fprintf(o, "%4d %4d %-7s %12.2f %7.2f %7.2f %10s %14s %8.2f %6.1f%%  %s\n", c.cpu, c.core_kind,
                   str(sw::to_string(mm.kind)).c_str(), mm.ticks.min, mm.ticks.median, mm.ticks.p90,
                   ns.c_str(), cyc.c_str(), c.core_hz / 1e9, mm.ticks.spread * 100,
                   baseline(mm.kind)
                       ? ("baseline, " + str(sw::to_string(mm.ticks.status)) + ", not judged").c_str()
                       : verdict(mm.ticks).c_str());
    }
  }

  std::fprintf(o, "\nper core kind (median over its CPUs)\n%4s %-7s %-10s %10s %20s %8s %14s %8s\n", "kind",
               "relax", "cpus", "ns/relax", "range of CPUs (ns)", "ticks", "cycles/relax", "spread");
  for (const sw::kind_summary& s : r.summaries) {
    const std::string range = fmt("%.2f", s.ns_min) + " .. " + fmt("%.2f", s.ns_max);
    const std::string cyc =
        fmt("%.1f", s.cycles_median) + (s.cycles_method == "perf_event" ? " pmu" : " est");
    std::fprintf(o, "%4d %-7s %-10s %10.2f %20s %8.2f %14s %7.1f%%%s\n", s.core_kind,
                 str(sw::to_string(s.relax)).c_str(), sw::format_cpu_list(s.cpus).c_str(), s.ns_median,
                 range.c_str(), s.ticks_median, cyc.c_str(), s.cpu_spread * 100,
                 s.unstable_cpus.empty()
                     ? ""
                     : ("  unstable on cpus " + sw::format_cpu_list(s.unstable_cpus)).c_str());
  }

  std::fprintf(o, "\nrecommendations: target %.1f ns per delay unit (%s)\n", st.target_ns,
               st.target_reason.c_str());
  for (const sw::recommendation& rec : r.recommendations) {
    const std::string relax = str(sw::to_string(rec.relax));
    std::string kname;
    for (const sw::core_kind& k : t.core_kinds) {
      if (k.index == rec.core_kind) kname = k.name;
    }
    std::fprintf(o, "  core kind %d (%s), %s at %.2f ns%s:\n", rec.core_kind, kname.c_str(), relax.c_str(),
                 rec.relax_ns, rec.uncertain ? " [UNCERTAIN: a CPU of this kind was not stable]" : "");
    // The unit is a knob, never applied by a profile: say whether there is anything to set.
    if (rec.delay_unit_is_default) {
      std::fprintf(
          o,
          "    spinwise        delay_unit_ns = %.0f, time_policy's default: nothing to set (%u %s per "
          "unit with this profile)\n",
          rec.delay_unit_ns, rec.relaxes_per_unit, relax.c_str());
    } else {
      std::fprintf(
          o,
          "    spinwise        delay_unit_ns = %.0f  (%u %s per unit): a knob the profile does not set; "
          "set it yourself, e.g. time_policy<>::set_delay_unit_ns(%.0f) (default %.0f)\n",
          rec.delay_unit_ns, rec.relaxes_per_unit, relax.c_str(), rec.delay_unit_ns, sw::kDefaultTargetNs);
    }
    std::fprintf(o,
                 "    MySQL 8.0.16+   innodb_spin_wait_pause_multiplier = %u%s  (%.0f ns per delay unit; the "
                 "default %u gives %.0f ns)\n",
                 rec.innodb_pause_multiplier, rec.multiplier_clamped ? " (clamped to MySQL's 1..100)" : "",
                 rec.innodb_unit_ns, sw::kInnodbDefaultPauseMultiplier,
                 sw::kInnodbDefaultPauseMultiplier * rec.relax_ns);
    for (const sw::ut_delay_figure& f : rec.ut_delay) {
      std::fprintf(o,
                   "    ut_delay per spin round, innodb_spin_wait_delay = %2u, multiplier %3u: worst %7.2f "
                   "us (%u %s), mean %7.2f us\n",
                   f.spin_wait_delay, f.pause_multiplier, f.max_us, f.max_relaxes, relax.c_str(), f.mean_us);
    }
  }
  if (r.recommendations.empty())
    std::fprintf(o, "  none: no relax kind with a measurable cost was measured\n");

  if (r.has_c2c) {
    const std::size_t n = r.c2c.cpus.size();
    std::fprintf(o, "\ncore-to-core one-way latency, ns (%s)\n%6s", r.c2c.method.c_str(), "");
    for (std::size_t j = 0; j < n; ++j) std::fprintf(o, " %7d", r.c2c.cpus[j]);
    std::fprintf(o, "\n");
    for (std::size_t i = 0; i < n; ++i) {
      std::fprintf(o, "%6d", r.c2c.cpus[i]);
      for (std::size_t j = 0; j < n; ++j) {
        const double v = r.c2c.at(i, j);
        if (v >= 0) {
          std::fprintf(o, " %7.1f", v);
        } else {
          std::fprintf(o, " %7s", "-");
        }
      }
      std::fprintf(o, "\n");
    }
    for (const std::string& e : r.c2c.errors) std::fprintf(o, "  c2c: %s\n", e.c_str());
  }
  if (!r.warnings.empty()) {
    std::fprintf(o, "\nwarnings\n");
    for (const std::string& w : r.warnings) std::fprintf(o, "  %s\n", w.c_str());
  }
}

// A one-line progress display on stderr, shown only on a terminal and only once a run has taken
// more than a second.
struct progress_line {
  bool tty = ::isatty(STDERR_FILENO) == 1;
  bool shown = false;
  void update(const sw::calibration_progress& p) {
    if (!tty || p.elapsed_s < 1.0) return;
    shown = true;
    std::fprintf(stderr, "\r\033[Kcalibrating: %zu/%zu (cpu %d, %s) %.1f s", p.step, p.steps, p.cpu,
                 str(sw::to_string(p.kind)).c_str(), p.elapsed_s);
    std::fflush(stderr);
  }
  void update(const sw::watch_progress& p) {
    if (!tty || p.elapsed_s < 1.0) return;
    shown = true;
    std::fprintf(stderr, "\r\033[Kwatching: %.1f / %.1f s, %zu sample(s) per CPU", p.elapsed_s, p.duration_s,
                 p.samples);
    std::fflush(stderr);
  }
  void note(const char* what) {
    if (!tty) return;
    shown = true;
    std::fprintf(stderr, "\r\033[K%s", what);
    std::fflush(stderr);
  }
  void clear() {
    if (shown) std::fprintf(stderr, "\r\033[K");
    shown = false;
  }
};

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

// Why a file cannot be created at `path` ("" when its directory is writable): checked before a
// watch, so a mistyped path does not cost the whole watch.
std::string cannot_create(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK) == 0) return "";
  return "cannot create " + path + ": " + std::strerror(errno);
}

// Writes `text` to `path` (spinwise::write_file_atomically, as write_profile does).
bool write_text(const std::string& path, const std::string& text, std::string& why) {
  return sw::write_file_atomically(path, text, &why);
}

// --watch, its options checked: watch, print, write the document and the plot. The exit code.
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

// --advise: the advice from a calibration (measured now, or a saved profile).
sw::advice_result advice_from(const sw::calibration_result& r, sw::engine which, const std::string& version,
                              const CLI::Option* multiplier_opt, unsigned multiplier, double target_ns) {
  sw::engine_advice_input in = sw::advice_input_from(r, which, version);
  if (multiplier_opt->count() > 0) in.mariadb_multiplier = multiplier;
  if (target_ns > 0) in.unit_ns = target_ns;  // --target-ns, over a saved profile's own
  return sw::advise_engine(in);
}

// The run context of the measurement an advice is from: `here` (taken before measuring, so its
// load average is the host's, not the measurement's) with the calibration's machine, or for a
// saved profile (`here` null) what the profile says: its machine and date, the rest not known.
sw::run_context advice_context(const sw::calibration_result& r, const sw::advice_result& a,
                               const sw::run_context* here) {
  sw::run_context c = here != nullptr ? *here : sw::run_context{};
  c.machine = r.machine;
  if (here == nullptr) c.date = r.created;
  c.relax = str(sw::to_string(sw::relax_kind::pause));  // the only kind an engine's advice reads
  c.relax_ns = a.advice.relax_ns;
  return c;
}

// Prints the advice, or the refusal (on stderr, and as a JSON document on stdout with --format
// json, so that a script reading stdout sees why). The exit code.
int print_advice(const sw::advice_result& a, const sw::calibration_result& r, const sw::run_context& run,
                 const std::string& format) {
  if (a.status != sw::advice_status::ok) {
    std::fprintf(stderr, "spinwise-calibrate: --advise: %s\n", a.message.c_str());
    for (const std::string& s : a.suggestions) std::fprintf(stderr, "  - %s\n", s.c_str());
    if (format == "json") std::fputs(sw::format_refusal_json(a, &r, &run).c_str(), stdout);
    return a.status == sw::advice_status::usage ? kExitUsage : kExitUnstable;
  }
  const std::string text =
      format == "json" ? sw::format_advice_json(a.advice, &r, &run) : sw::format_advice_text(a.advice, &r);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "spinwise-calibrate: measure what one relax instruction (PAUSE, ISB, ...) costs on every CPU of this\n"
      "machine, in counter ticks, nanoseconds and core cycles; write a profile engines load\n"
      "(SPINWISE_PROFILE); print the settings that keep spin waits the same length in time.",
      "spinwise-calibrate"};
  std::string cpus_arg = "all", backends_arg = "all", format = "table", output, cycles_arg = "auto";
  std::uint32_t trials = 0;
  double target_ns = 0, watch_s = 0, interval_ms = 500;
  std::string plot;
  bool quick = false, c2c = false, list_backends = false, strict = false;
  std::string advise, engine_version, from_profile;
  unsigned mariadb_multiplier = 0;
  app.set_version_flag("--version", "spinwise-calibrate " + str(sw::kVersion));
  app.add_option("--cpus", cpus_arg, "CPUs to measure: all (default), or a list such as 0,2,4-7");
  CLI::Option* backends_opt = app.add_option(
      "--backends", backends_arg,
      "relax kinds to measure: all (default: every kind this CPU supports; with --watch: the active kind), "
      "or a list such as pause,tpause");
  app.add_option("--trials", trials,
                 "trials per CPU and relax kind, 3..100000 (default 101; 15 with --quick; with --watch: per "
                 "sample, default 15)")
      ->check(CLI::Range(std::uint32_t{3}, sw::kMaxCalibrationTrials));
  app.add_flag("--quick", quick,
               "quick calibration: no warm-up, 15 short trials (well under 1 ms per CPU and kind)");
  CLI::Option* c2c_opt =
      app.add_flag("--c2c", c2c, "also measure the core-to-core cache-line latency matrix");
  app.add_option(
         "--format", format,
         "stdout format: table (default) or json (the profile document; with --watch: the watch document)")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--output,-o", output,
                 "write the profile (JSON; with --watch: the watch document) to this file (atomically: temp "
                 "file + rename)");
  CLI::Option* target_opt = app.add_option("--target-ns", target_ns,
                                           "spin time per delay unit the recommendations aim at, in ns "
                                           "(default: 200, time_policy's delay unit, what 50 PAUSEs took "
                                           "before Skylake; another value is a knob to set, never applied "
                                           "by the profile)")
                                ->check(CLI::Range(0.001, 1e7));
  CLI::Option* cycles_opt = app.add_option("--cycles", cycles_arg,
                                           "core-cycle source: auto (perf_event, else estimate), perf (fail "
                                           "without a PMU), estimate (never use perf)")
                                ->check(CLI::IsMember({"auto", "perf", "estimate"}));
  CLI::Option* watch_opt = app.add_option(
      "--watch", watch_s,
      "follow each CPU's relax cost over this many seconds instead: the quick measurement, pinned to "
      "each CPU every --interval-ms; per CPU min/median/max over time and a verdict (stable or drifting)");
  CLI::Option* interval_opt = app.add_option(
      "--interval-ms", interval_ms, "with --watch: time between samples in ms (default 500, at least 1)");
  CLI::Option* plot_opt = app.add_option(
      "--plot", plot,
      "with --watch: draw ns per relax over time, one line per CPU, into this PNG (needs gnuplot)");
  app.add_flag(
      "--strict", strict,
      "exit with 3 when a measurement is noisy, bimodal or drifting (with --watch: not stable over time)");
  CLI::Option* advise_opt = app.add_option(
      "--advise", advise,
      "print the my.cnf lines for a real engine instead of the table: mysql (8.0.16-8.4) or mariadb (10.6, "
      "10.11); with --format json, the same as data");
  CLI::Option* version_opt = app.add_option("--engine-version", engine_version,
                                            "with --advise: the engine's version, e.g. 8.0.36, 8.4 or 10.11 "
                                            "(default: MySQL 8.0.30+, MariaDB 10.11)");
  CLI::Option* multiplier_opt = app.add_option(
      "--mariadb-multiplier", mariadb_multiplier,
      "with --advise mariadb: the server's my_cpu_relax_multiplier (100 or 200), when read from it (default: "
      "what MariaDB's start-up timing gives for the PAUSE cost measured here)");
  CLI::Option* from_profile_opt = app.add_option(
      "--from-profile", from_profile,
      "with --advise: advise from this saved profile (spinwise-calibrate -o) instead of measuring now");
  app.add_flag("--list-backends", list_backends,
               "print the relax kinds this CPU supports, one per line, and exit");
  app.footer(
      "Exit codes: 0 measured (warnings are printed); 1 the measurement or writing the output failed;\n"
      "            2 usage error (bad flag or value, unknown CPU or relax kind; --advise: an engine,\n"
      "            version or architecture not covered); 3 --strict and a measurement was not stable\n"
      "            (--advise: the PAUSE measurement is not stable enough to decide; no advice).\n"
      "Environment: SPINWISE_NO_PERF=1 never uses perf_event; SPINWISE_RELAX picks the relax kind engines "
      "use.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  if (list_backends) {
    // The relax kinds this CPU can issue through this build's backend, one per line.
    for (sw::relax_kind k : sw::kAllRelaxKinds) {
      if (sw::relax_supported(k)) std::printf("%s\n", str(sw::to_string(k)).c_str());
    }
    return kExitOk;
  }

  const bool advising = advise_opt->count() > 0;
  // Before anything is measured: its load average is what else the host was doing.
  const sw::run_context here = advising ? sw::detect_run_context() : sw::run_context{};
  sw::engine which = sw::engine::mysql;
  if (advising && !sw::parse_engine(advise, which)) {
    std::fprintf(stderr, "spinwise-calibrate: --advise '%s': unknown engine (known: mysql, mariadb)\n",
                 advise.c_str());
    return kExitUsage;
  }
  if (!advising) {
    for (const CLI::Option* o : {version_opt, multiplier_opt, from_profile_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s only applies to --advise\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
  } else {
    for (const CLI::Option* o : {watch_opt, c2c_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s does not go with --advise\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
    // Usage errors before anything is measured.
    {
      sw::engine_advice_input request;
      request.which = which;
      request.version = engine_version;
      request.arch =
          from_profile_opt->count() > 0 ? "x86_64" : str(sw::backend_name());  // a profile's: later
      if (multiplier_opt->count() > 0) request.mariadb_multiplier = mariadb_multiplier;
      if (const std::string why = sw::advice_request_error(request); !why.empty()) {
        std::fprintf(stderr, "spinwise-calibrate: --advise: %s\n", why.c_str());
        return kExitUsage;
      }
    }
    std::vector<sw::relax_kind> asked;
    std::string bad;
    if (backends_opt->count() > 0 && parse_backends(backends_arg, asked, bad) && !asked.empty() &&
        std::find(asked.begin(), asked.end(), sw::relax_kind::pause) == asked.end()) {
      std::fprintf(stderr, "spinwise-calibrate: --advise needs PAUSE measured: --backends %s leaves it out\n",
                   backends_arg.c_str());
      return kExitUsage;
    }
    if (from_profile_opt->count() > 0) {
      for (const CLI::Option* o : {app.get_option("--cpus"), backends_opt, app.get_option("--trials"),
                                   app.get_option("--quick"), cycles_opt, app.get_option("--output")}) {
        if (o->count() > 0) {
          std::fprintf(stderr, "spinwise-calibrate: %s measures; it does not go with --from-profile\n",
                       o->get_name().c_str());
          return kExitUsage;
        }
      }
      sw::calibration_result saved;
      if (const sw::profile_status st = sw::read_profile(from_profile, saved); !st) {
        std::fprintf(stderr, "spinwise-calibrate: --from-profile: %s\n", st.message.c_str());
        return kExitUsage;
      }
      const sw::advice_result a =
          advice_from(saved, which, engine_version, multiplier_opt, mariadb_multiplier, target_ns);
      return print_advice(a, saved, advice_context(saved, a, nullptr), format);
    }
    // Only PAUSE enters the engines' spin: measure it alone (other kinds cannot be advised).
    if (backends_opt->count() == 0 && sw::relax_supported(sw::relax_kind::pause)) backends_arg = "pause";
  }

  const bool watching = watch_opt->count() > 0;
  if (!watching && (interval_opt->count() > 0 || plot_opt->count() > 0)) {
    std::fprintf(stderr, "spinwise-calibrate: %s only applies to --watch\n",
                 interval_opt->count() > 0 ? "--interval-ms" : "--plot");
    return kExitUsage;
  }
  if (watching) {
    for (const CLI::Option* o : {c2c_opt, target_opt, cycles_opt}) {
      if (o->count() > 0) {
        std::fprintf(stderr, "spinwise-calibrate: %s does not apply to --watch\n", o->get_name().c_str());
        return kExitUsage;
      }
    }
  }

  sw::calibration_options opt;
  if (cpus_arg != "all" && !sw::parse_cpu_list(cpus_arg, opt.cpus)) {
    std::fprintf(stderr, "spinwise-calibrate: invalid --cpus '%s': expected all, or a list such as 0,2,4-7\n",
                 cpus_arg.c_str());
    return kExitUsage;
  }
  if (cpus_arg != "all" && opt.cpus.empty()) {
    std::fprintf(stderr, "spinwise-calibrate: --cpus '%s' names no CPU\n", cpus_arg.c_str());
    return kExitUsage;
  }
  std::string why;
  if (!parse_backends(backends_arg, opt.kinds, why)) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitUsage;
  }
  if (watching) {
    sw::watch_options wo;
    wo.cpus = opt.cpus;
    // --backends all, given, means every kind; not given, the kind engines use.
    if (backends_opt->count() > 0) {
      wo.kinds = opt.kinds;
      if (wo.kinds.empty()) {
        for (sw::relax_kind k : sw::kAllRelaxKinds) {
          if (sw::relax_supported(k)) wo.kinds.push_back(k);
        }
      }
    }
    wo.duration_s = watch_s;
    wo.interval_ms = interval_ms;
    if (trials != 0) wo.trials = trials;
    if (why = sw::check_watch_options(wo); !why.empty()) {
      std::fprintf(stderr, "spinwise-calibrate: --watch %g --interval-ms %g: %s\n", watch_s, interval_ms,
                   why.c_str());
      return kExitUsage;
    }
    return run_watch(wo, format, output, plot, strict);
  }

  opt.trials = trials;
  opt.quick = quick;
  opt.target_ns = target_ns;
  sw::parse_cycles_source(cycles_arg, opt.cycles);
  if (why = sw::check_calibration_options(opt); !why.empty()) {
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitUsage;
  }

  // The output is checked before the measurement, as --watch does: a missing directory is said at
  // once, naming the file asked for, not after a minute of measuring.
  if (!output.empty()) {
    if (why = cannot_create(output); !why.empty()) {
      std::fprintf(stderr, "spinwise-calibrate: %s (nothing was measured)\n", why.c_str());
      return kExitFailure;
    }
  }
  progress_line progress;
  opt.progress = [&progress](const sw::calibration_progress& p) { progress.update(p); };
  sw::calibration_result result;
  if (!sw::calibrate(opt, result, &why)) {
    progress.clear();
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return kExitFailure;
  }
  if (c2c) {
    progress.note("measuring core-to-core latency...");
    sw::c2c_options co;
    co.cpus = opt.cpus;
    result.c2c = sw::measure_c2c(co);
    result.has_c2c = true;
  }
  progress.clear();

  if (advising) {
    // A busy host: when the median's interval still leaves the advice open, measure again with
    // three times the trials, twice at most, and say so (sw::advise_measuring_again).
    const auto advise = [&](const sw::calibration_result& r) {
      return advice_from(r, which, engine_version, multiplier_opt, mariadb_multiplier, target_ns);
    };
    const auto measure = [&](std::uint32_t more_trials, sw::calibration_result& out, std::string* error) {
      opt.trials = more_trials;
      progress.note(("the advice is open within the measurement's interval: measuring again with " +
                     std::to_string(more_trials) + " trials a CPU...")
                        .c_str());
      const bool ok = sw::calibrate(opt, out, error);
      progress.clear();
      return ok;
    };
    sw::advice_rounds rounds = sw::advise_measuring_again(std::move(result), advise, measure);
    if (rounds.failed) {
      std::fprintf(stderr, "spinwise-calibrate: %s\n", rounds.why.c_str());
      return kExitFailure;
    }
    result = std::move(rounds.result);
    const sw::advice_result& a = rounds.advice;
    const int rc = print_advice(a, result, advice_context(result, a, &here), format);
    if (rc != kExitOk || output.empty()) return rc;
    if (!sw::write_profile(output, result, &why)) {
      std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
      return kExitFailure;
    }
    std::fprintf(stderr, "profile written to %s\n", output.c_str());
    return kExitOk;
  }
  if (format == "json") {
    std::fputs(sw::profile_to_json(result).c_str(), stdout);
  } else {
    print_table(result, stdout);
  }
  std::fflush(stdout);
  if (!output.empty()) {
    if (!sw::write_profile(output, result, &why)) {
      std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
      return kExitFailure;
    }
    std::fprintf(format == "json" ? stderr : stdout,
                 "\nprofile written to %s (engines apply it with SPINWISE_PROFILE=%s and "
                 "spinwise::load_profile_from_env(): it sets the per-CPU relax costs and the counter rate, "
                 "no knobs)\n",
                 output.c_str(), output.c_str());
  }
  if (strict && !result.all_stable()) {
    std::fprintf(stderr, "spinwise-calibrate: --strict: some measurements were not stable (see warnings)\n");
    return kExitUnstable;
  }
  return kExitOk;
}
