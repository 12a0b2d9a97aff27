// Recommendations: what a calibration's measurements mean for the settings of spin waits
// (spinwise's delay unit, MySQL's innodb_spin_wait_pause_multiplier and ut_delay), the per-kind
// summaries they rest on, and the warnings a reader must not miss. calibration.cpp measures.
#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/calibration_internal.hpp"
#include "spinwise/innodb_policy.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise {

using detail::fmt;
using detail::trivial_kind;

double innodb_budget_ns(double core_hz) {
  const double hz = core_hz >= 1e8 && core_hz <= 1e10 ? core_hz : kFallbackCoreHz;
  return kInnodbBudgetCycles / hz * 1e9;
}

ut_delay_figure ut_delay(unsigned spin_wait_delay, unsigned pause_multiplier, double relax_ns) {
  ut_delay_figure f;
  f.spin_wait_delay = spin_wait_delay;
  f.pause_multiplier = pause_multiplier;
  const unsigned top = spin_wait_delay > 0 ? spin_wait_delay - 1 : 0;  // random[0, delay): at most delay-1
  f.max_relaxes = top * pause_multiplier;
  f.mean_relaxes = 0.5 * top * pause_multiplier;
  f.max_us = f.max_relaxes * relax_ns / 1000.0;
  f.mean_us = f.mean_relaxes * relax_ns / 1000.0;
  return f;
}

void summarize_kinds(calibration_result& r) {
  r.summaries.clear();
  std::map<std::pair<int, int>, std::vector<std::pair<const cpu_calibration*, const relax_measurement*>>>
      groups;
  for (const cpu_calibration& c : r.cpus) {
    if (!c.error.empty()) continue;
    for (const relax_measurement& m : c.relax) {
      if (m.trials == 0) continue;
      groups[{c.core_kind, static_cast<int>(m.kind)}].emplace_back(&c, &m);
    }
  }
  for (const auto& [key, members] : groups) {
    kind_summary s;
    s.core_kind = key.first;
    s.relax = static_cast<relax_kind>(key.second);
    std::vector<double> ns, ticks, cycles;
    bool perf = false, estimate = false;
    for (const auto& [cpu, m] : members) {
      s.cpus.push_back(cpu->cpu);
      ns.push_back(m->ns_median);
      ticks.push_back(m->ticks.median);
      cycles.push_back(m->cycles_median);
      (m->cycles_method == "perf_event" ? perf : estimate) = true;
      if (m->ticks.status != stability::stable) s.unstable_cpus.push_back(cpu->cpu);
    }
    const runtime::order_summary by_cpu = runtime::summarize_order(ns);
    s.ns_median = by_cpu.median;
    s.ns_min = by_cpu.min;
    s.ns_max = by_cpu.max;
    s.ticks_median = runtime::median(ticks);
    s.cycles_median = runtime::median(cycles);
    s.cycles_method = perf && estimate ? "mixed" : perf ? "perf_event" : "estimate";
    s.cpu_spread = s.ns_median > 0 ? (s.ns_max - s.ns_min) / s.ns_median : 0;
    r.summaries.push_back(std::move(s));
  }
}

void derive_recommendations(calibration_result& r) {
  r.recommendations.clear();
  double target = r.settings.target_ns;
  if (!(target > 0)) {
    std::vector<double> hz;
    for (const cpu_calibration& c : r.cpus) {
      if (c.error.empty() && c.core_clock_plausible) hz.push_back(c.core_hz);
    }
    target = kDefaultTargetNs;
    r.settings.target_ns = target;
    // The cycles figure is context, not the target: it moves with the core clock estimate.
    const double core_hz = runtime::median(hz);
    const std::string budget =
        hz.empty() ? fmt("%.0f", innodb_budget_ns(0)) + " ns at an assumed 2.5 GHz (no plausible core clock)"
                   : fmt("%.0f", innodb_budget_ns(core_hz)) + " ns at the measured core clock of " +
                         fmt("%.2f", core_hz / 1e9) + " GHz";
    r.settings.target_reason =
        "time_policy's default delay unit: what 50 PAUSEs took on the pre-Skylake CPUs InnoDB's defaults "
        "were tuned on; InnoDB's 500-cycle budget is " +
        budget;
  }
  for (const kind_summary& s : r.summaries) {
    if (trivial_kind(s.relax) || !(s.ns_median > 0)) continue;
    recommendation rec;
    rec.core_kind = s.core_kind;
    rec.relax = s.relax;
    rec.relax_ns = s.ns_median;
    rec.target_ns = target;
    rec.uncertain = !s.unstable_cpus.empty();
    rec.delay_unit_ns = target;
    rec.delay_unit_is_default = target == kDefaultTargetNs;
    const double per_unit = target / s.ns_median;
    rec.relaxes_per_unit = static_cast<std::uint32_t>(std::clamp(std::round(per_unit), 1.0, 4e9));
    const double m = std::round(per_unit);
    rec.innodb_pause_multiplier =
        static_cast<unsigned>(std::clamp(m, 1.0, static_cast<double>(kInnodbMaxPauseMultiplier)));
    rec.multiplier_clamped = m < 1.0 || m > kInnodbMaxPauseMultiplier;
    rec.innodb_unit_ns = rec.innodb_pause_multiplier * s.ns_median;
    for (unsigned delay : {6u, 30u})
      rec.ut_delay.push_back(ut_delay(delay, kInnodbDefaultPauseMultiplier, s.ns_median));
    if (rec.innodb_pause_multiplier != kInnodbDefaultPauseMultiplier) {
      for (unsigned delay : {6u, 30u})
        rec.ut_delay.push_back(ut_delay(delay, rec.innodb_pause_multiplier, s.ns_median));
    }
    r.recommendations.push_back(std::move(rec));
  }
}

std::string relax_drift_meaning(const relax_drift_observation& o) {
  const std::string kind(to_string(o.kind));
  const std::string range = fmt("%.2f", o.ns_min) + " .. " + fmt("%.2f", o.ns_max) +
                            " ns per relax (median " + fmt("%.2f", o.ns_median) + ")";
  const std::string seen = o.seen.empty() ? "" : " " + o.seen;
  if (o.status != stability::stable && o.status != stability::drifting) {
    return kind + ": too few samples" + seen +
           " to tell whether its cost drifts over time: watch longer, or sample "
           "more often";
  }
  // InnoDB's stock settings, as innodb_policy has them: what a full spin costs at both ends.
  const innodb_settings d{};
  const ut_delay_figure lo = ut_delay(d.spin_wait_delay, d.pause_multiplier, o.ns_min);
  const ut_delay_figure hi = ut_delay(d.spin_wait_delay, d.pause_multiplier, o.ns_max);
  const ut_delay_figure mid = ut_delay(d.spin_wait_delay, d.pause_multiplier, o.ns_median);
  const std::string innodb_cfg = "innodb_policy's default spin_wait_delay " +
                                 std::to_string(d.spin_wait_delay) + " x pause_multiplier " +
                                 std::to_string(d.pause_multiplier) + " (at most " +
                                 std::to_string(hi.max_relaxes) + " " + kind + " a round)";
  const std::string rounds = std::to_string(d.spin_loops) + " rounds";
  if (o.status == stability::stable) {
    std::string out =
        kind + " is stable on this host" + seen + ": " + range + ": a profile's per-CPU table holds";
    if (!trivial_kind(o.kind)) {
      // At the median: a stable host's max is a lone outlier (a preempted sample).
      out += "; " + innodb_cfg + " spins up to " + fmt("%.2f", mid.max_us) + " us a round, " +
             fmt("%.1f", mid.max_us * d.spin_loops) + " us over " + rounds + " at the median cost";
    }
    return out;
  }
  const double spread = o.ns_median > 0 ? (o.ns_max - o.ns_min) / o.ns_median : 0;
  std::string out =
      kind + " drifts on this host" + seen + ": " + range + ", a range of " + fmt("%.0f", spread * 100) +
      "% of it: a profile's per-CPU table is a snapshot of one moment. time_policy and the other "
      "time-based policies end each delay at a deadline on the cycle counter and keep their time";
  if (!trivial_kind(o.kind)) {
    out += "; " + innodb_cfg + " counts relaxes, so it spins up to " + fmt("%.2f", lo.max_us) + " .. " +
           fmt("%.2f", hi.max_us) + " us a round and " + fmt("%.1f", lo.max_us * d.spin_loops) + " .. " +
           fmt("%.1f", hi.max_us * d.spin_loops) + " us over " + rounds + ", depending on the moment";
  }
  return out;
}

namespace detail {
namespace {

// One line under the drifting warnings: what drift means (relax_drift_meaning), for the relax
// kind engines use when it drifted, else the first relax kind with a cost that did, over the
// range its drifting CPUs' rounds moved through. Trivial kinds (loop overhead) get none.
void add_drift_meaning(calibration_result& r) {
  std::vector<relax_kind> drifted;
  for (const cpu_calibration& c : r.cpus) {
    for (const relax_measurement& m : c.relax) {
      if (m.ticks.status == stability::drifting && !trivial_kind(m.kind) &&
          std::find(drifted.begin(), drifted.end(), m.kind) == drifted.end()) {
        drifted.push_back(m.kind);
      }
    }
  }
  if (drifted.empty()) return;
  const bool active = std::find(drifted.begin(), drifted.end(), active_relax()) != drifted.end();
  relax_drift_observation o;
  o.kind = active ? active_relax() : drifted.front();
  o.status = stability::drifting;
  std::vector<double> medians, lows, highs;
  for (const cpu_calibration& c : r.cpus) {
    const relax_measurement* m = c.find(o.kind);
    if (m == nullptr || m->ticks.status != stability::drifting) continue;
    medians.push_back(m->ns_median);
    lows.push_back(m->round_ns_min > 0 ? m->round_ns_min : m->ns_median);
    highs.push_back(m->round_ns_max > 0 ? m->round_ns_max : m->ns_median);
  }
  o.ns_median = runtime::median(medians);
  o.ns_min = *std::min_element(lows.begin(), lows.end());
  o.ns_max = *std::max_element(highs.begin(), highs.end());
  o.seen = "between this run's " + std::to_string(r.settings.rounds) + " rounds";
  r.warnings.push_back("what drift means: " + relax_drift_meaning(o) +
                       " (spinwise-calibrate --watch follows it over time)");
}

}  // namespace

void add_calibration_warnings(calibration_result& r) {
  for (const cpu_calibration& c : r.cpus) {
    const std::string who = "cpu " + std::to_string(c.cpu);
    if (!c.error.empty()) r.warnings.push_back(who + ": " + c.error);
    if (c.error.empty() && !c.core_clock_plausible) {
      r.warnings.push_back(who + ": core clock estimate implausible (chain check " +
                           fmt("%.2f", c.chain_check) + ", expected ~2; " + fmt("%.0f", c.core_hz / 1e6) +
                           " MHz): cycle figures are unreliable");
    }
    if (c.core_clock_change > 0.05) {
      r.warnings.push_back(who + ": core clock estimates differ by " +
                           fmt("%.0f", c.core_clock_change * 100) + "% between rounds (frequency scaling?)");
    }
    for (const relax_measurement& m : c.relax) {
      if (m.trials == 0 || m.ticks.status == stability::stable || trivial_kind(m.kind)) continue;
      std::string w =
          who + " " + std::string(to_string(m.kind)) + ": " + std::string(to_string(m.ticks.status));
      if (m.ticks.status == stability::bimodal) {
        w += " (" + fmt("%.1f", m.ticks.low_mode) + " and " + fmt("%.1f", m.ticks.high_mode) + " ticks, " +
             fmt("%.0f", m.ticks.high_share * 100) + "% slow: VM PAUSE-loop exits or SMT contention?)";
      } else if (m.ticks.status == stability::noisy) {
        w += " (p10..p90 spans " + fmt("%.0f", m.ticks.spread * 100) + "% of the median)";
      } else if (m.ticks.status == stability::drifting) {
        w += " (rounds differ by " + fmt("%.0f", m.round_drift * 100) + "%: the clock moved)";
      }
      r.warnings.push_back(w);
    }
  }
  add_drift_meaning(r);
  for (const kind_summary& s : r.summaries) {
    if (!trivial_kind(s.relax) && s.cpus.size() > 1 && s.cpu_spread > 0.25) {
      r.warnings.push_back("core kind " + std::to_string(s.core_kind) + " " +
                           std::string(to_string(s.relax)) + ": CPUs differ by " +
                           fmt("%.0f", s.cpu_spread * 100) +
                           "% (hybrid cores the OS does not report, or a busy CPU?)");
    }
  }
}

}  // namespace detail

}  // namespace spinwise
