// spinwise-calibrate, the measurement: the relax cost on every CPU, its table or its profile
// (docs/calibration.md).
#include <algorithm>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "spinwise/runtime/c2c.hpp"
#include "spinwise/runtime/profile.hpp"

namespace spinwise::calibrate_tool {

namespace {

std::string bytes(std::uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + " GiB";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
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

}  // namespace

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

bool measure(const sw::calibration_options& opt, bool c2c, progress_line& progress,
             sw::calibration_result& out) {
  std::string why;
  if (!sw::calibrate(opt, out, &why)) {
    progress.clear();
    std::fprintf(stderr, "spinwise-calibrate: %s\n", why.c_str());
    return false;
  }
  if (c2c) {
    progress.note("measuring core-to-core latency...");
    sw::c2c_options co;
    co.cpus = opt.cpus;
    out.c2c = sw::measure_c2c(co);
    out.has_c2c = true;
  }
  progress.clear();
  return true;
}

int print_calibration(const sw::calibration_result& result, const std::string& format,
                      const std::string& output, bool strict) {
  std::string why;
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

}  // namespace spinwise::calibrate_tool
