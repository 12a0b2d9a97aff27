// The relax cost over time (spinwise-calibrate --watch): each CPU's quick measurement repeated at
// a fixed interval, and the verdict over the samples. What the verdict means for profiles and
// InnoDB's settings is recommend.cpp's (relax_drift_meaning); the document is watch_json.cpp's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "calibration/calibration_internal.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/order_stats.hpp"
#include "spinwise/runtime/relax_cost.hpp"
#include "spinwise/version.hpp"

namespace spinwise {
namespace {

using detail::fmt;
using steady = std::chrono::steady_clock;

double ms_since(steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(steady::now() - t0).count();
}

// Ticks k = 0, 1, ... at k x interval while k x interval <= duration: a 10 s watch every 500 ms
// takes 21 samples, the first at once and the last at 10 s. The small slack keeps 0.3 s / 100 ms
// at 4 ticks despite binary fractions.
std::uint64_t tick_count(double duration_s, double interval_ms) {
  return static_cast<std::uint64_t>(std::floor(duration_s * 1000.0 / interval_ms + 1e-9)) + 1;
}

}  // namespace

relax_time_summary summarize_over_time(const std::vector<relax_time_sample>& samples,
                                       const time_stability_limits& limits) {
  std::vector<double> ns, ticks;
  for (const relax_time_sample& s : samples) {
    if (!std::isfinite(s.ns) || !std::isfinite(s.ticks)) continue;
    ns.push_back(s.ns);
    ticks.push_back(s.ticks);
  }
  relax_time_summary r;
  r.samples = static_cast<std::uint32_t>(ns.size());
  if (ns.empty()) return r;
  const std::vector<double> sorted = runtime::sorted_sample(std::move(ns));
  r.ns_min = sorted.front();
  r.ns_p10 = runtime::quantile_sorted(sorted, 0.10);
  r.ns_median = runtime::median_sorted(sorted);
  r.ns_p90 = runtime::quantile_sorted(sorted, 0.90);
  r.ns_max = sorted.back();
  const runtime::order_summary t = runtime::summarize_order(std::move(ticks));
  r.ticks_min = t.min;
  r.ticks_median = t.median;
  r.ticks_max = t.max;
  if (r.ns_median > 0) {
    r.spread = (r.ns_max - r.ns_min) / r.ns_median;
    r.central_spread = (r.ns_p90 - r.ns_p10) / r.ns_median;
  }
  if (r.samples < limits.min_samples) {
    r.status = stability::insufficient;
  } else {
    r.status = r.central_spread <= limits.stable_spread ? stability::stable : stability::drifting;
  }
  return r;
}

bool watch_result::all_stable() const noexcept {
  for (const watch_series& s : series) {
    if (!s.error.empty() || s.summary.status != stability::stable) return false;
  }
  return true;
}

std::string check_watch_options(const watch_options& opt) {
  if (!(std::isfinite(opt.duration_s) && opt.duration_s > 0 && opt.duration_s <= kMaxWatchSeconds)) {
    return "the watch must last more than 0 s and at most " + fmt("%.0f", kMaxWatchSeconds) + " s, not " +
           fmt("%g", opt.duration_s) + " s";
  }
  if (!(std::isfinite(opt.interval_ms) && opt.interval_ms >= 1)) {
    return "the sampling interval must be at least 1 ms, not " + fmt("%g", opt.interval_ms) + " ms";
  }
  if (opt.interval_ms > opt.duration_s * 1000.0) {
    return "the sampling interval (" + fmt("%g", opt.interval_ms) + " ms) is longer than the watch (" +
           fmt("%g", opt.duration_s * 1000.0) + " ms): nothing would be seen twice";
  }
  if (static_cast<double>(tick_count(opt.duration_s, opt.interval_ms)) > kMaxWatchSamples) {
    return "the watch would take more than " + fmt("%.0f", kMaxWatchSamples) +
           " samples per CPU: lengthen the interval or shorten the watch";
  }
  if (opt.trials < 3 || opt.trials > 100000) {
    return "trials per sample must be between 3 and 100000, not " + std::to_string(opt.trials);
  }
  if (!(std::isfinite(opt.trial_ns) && opt.trial_ns > 0) ||
      !(std::isfinite(opt.warmup_ms) && opt.warmup_ms >= 0)) {
    return "the trial length must be above 0 and the warm-up at least 0";
  }
  // CPUs and relax kinds are checked as a calibration checks them.
  calibration_options c;
  c.cpus = opt.cpus;
  c.kinds = opt.kinds;
  return check_calibration_options(c);
}

bool watch_relax_cost(const watch_options& opt, watch_result& out, std::string* error) {
  const auto t0 = steady::now();
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  if (std::string why = check_watch_options(opt); !why.empty()) return fail(why);

  watch_result r;
  r.tool = "spinwise " + std::string(kVersion);
  r.created = runtime::utc_now();
  r.machine = detect_machine();
  r.settings = opt;
  r.settings.progress = nullptr;
  if (r.settings.cpus.empty()) r.settings.cpus = runtime::allowed_cpus();
  if (r.settings.kinds.empty()) r.settings.kinds = {active_relax()};
  const std::vector<int>& cpus = r.settings.cpus;
  const std::vector<relax_kind>& kinds = r.settings.kinds;
  if (cpus.empty()) return fail("no CPU to watch: the affinity mask could not be read");
  for (int cpu : cpus) {
    for (relax_kind k : kinds) {
      watch_series s;
      s.cpu = cpu;
      s.kind = k;
      r.series.push_back(std::move(s));
    }
  }

  const std::uint64_t counter_hz = counter_frequency();
  const std::uint64_t ticks = tick_count(opt.duration_s, opt.interval_ms);
  const auto interval = std::chrono::duration<double, std::milli>(opt.interval_ms);
  {
    runtime::scoped_pin pin;  // puts the caller's mask back
    const auto start = steady::now();
    for (std::uint64_t tick = 0; tick < ticks; ++tick) {
      // A tick that ran late (a loaded host, many CPUs) makes the next one start at once: the
      // samples keep their true times, so a late tick only thins the series out.
      std::this_thread::sleep_until(start + std::chrono::duration_cast<steady::duration>(interval * tick));
      for (std::size_t ci = 0; ci < cpus.size(); ++ci) {
        watch_series* row = &r.series[ci * kinds.size()];
        if (!row->error.empty()) continue;
        if (!pin.pin(cpus[ci])) {
          const std::string why = "could not pin to this CPU at " + fmt("%.0f", ms_since(start)) + " ms";
          for (std::size_t ki = 0; ki < kinds.size(); ++ki) row[ki].error = why;
          continue;
        }
        detail::warm_up(opt.warmup_ms);
        for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
          watch_series& s = row[ki];
          relax_cost_options ro;
          ro.kind = s.kind;
          ro.trials = opt.trials;
          ro.relaxes_per_trial = s.relaxes_per_trial;  // 0 on the first sample: sized to trial_ns
          ro.trial_ns = opt.trial_ns;
          const double t_ms = ms_since(start);
          const relax_cost c = measure_relax_cost(ro);
          s.relaxes_per_trial = c.relaxes_per_trial;
          s.samples.push_back({t_ms, runtime::ticks_to_ns(c.ticks.median, counter_hz), c.ticks.median});
        }
      }
      if (opt.progress)
        opt.progress({ms_since(start) / 1000.0, opt.duration_s, static_cast<std::size_t>(tick + 1)});
    }
  }

  for (watch_series& s : r.series) s.summary = summarize_over_time(s.samples, opt.limits);

  // Per relax kind over every CPU: a thread may run on any of them, so the range that matters to
  // a spin wait is all of it, and one drifting CPU makes the host drifting.
  for (relax_kind k : kinds) {
    std::vector<double> ns;
    bool any_drifting = false, all_stable = true;
    for (const watch_series& s : r.series) {
      if (s.kind != k) continue;
      for (const relax_time_sample& x : s.samples) ns.push_back(x.ns);
      any_drifting = any_drifting || s.summary.status == stability::drifting;
      all_stable = all_stable && s.error.empty() && s.summary.status == stability::stable;
    }
    watch_conclusion c;
    c.kind = k;
    c.status = any_drifting ? stability::drifting : all_stable ? stability::stable : stability::insufficient;
    const runtime::order_summary all = runtime::summarize_order(std::move(ns));
    c.ns_min = all.min;
    c.ns_median = all.median;
    c.ns_max = all.max;
    relax_drift_observation o;
    o.kind = k;
    o.status = c.status;
    o.ns_min = c.ns_min;
    o.ns_median = c.ns_median;
    o.ns_max = c.ns_max;
    o.seen = "over " + fmt("%.1f", opt.duration_s) + " s on " + std::to_string(cpus.size()) + " CPU(s)";
    c.meaning = relax_drift_meaning(o);
    r.conclusions.push_back(std::move(c));
  }
  r.elapsed_s = ms_since(t0) / 1000.0;
  out = std::move(r);
  return true;
}

}  // namespace spinwise
