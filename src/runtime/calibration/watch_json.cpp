// The --watch document (spinwise.calibrate.watch, version 1): samples over time per CPU and relax
// kind, their summaries and the conclusions. A report to read, not a profile: nothing loads it.
#include <nlohmann/json.hpp>

#include "common/machine_json.hpp"
#include "spinwise/runtime/calibration.hpp"

namespace spinwise {

std::string watch_to_json(const watch_result& r, int indent) {
  using ojson = nlohmann::ordered_json;
  ojson d;
  d["format"] = kWatchFormat;
  d["version"] = kWatchFormatVersion;
  d["tool"] = r.tool;
  d["created"] = r.created;
  d["machine"] = detail::machine_json(r.machine);
  const watch_options& s = r.settings;
  ojson kinds = ojson::array();
  for (relax_kind k : s.kinds) kinds.push_back(std::string(to_string(k)));
  d["settings"] = {{"duration_s", s.duration_s},
                   {"interval_ms", s.interval_ms},
                   {"cpus", s.cpus},
                   {"relax", kinds},
                   {"trials", s.trials},
                   {"trial_ns", s.trial_ns},
                   {"warmup_ms", s.warmup_ms},
                   {"stable_spread", s.limits.stable_spread},
                   {"min_samples", s.limits.min_samples}};
  d["elapsed_s"] = r.elapsed_s;

  d["cpus"] = ojson::array();
  for (const watch_series& w : r.series) {
    ojson samples = ojson::array();
    for (const relax_time_sample& x : w.samples) samples.push_back(ojson::array({x.t_ms, x.ns}));
    const relax_time_summary& t = w.summary;
    ojson j;
    j["cpu"] = w.cpu;
    j["relax"] = std::string(to_string(w.kind));
    j["relaxes_per_trial"] = w.relaxes_per_trial;
    j["samples"] = std::move(samples);
    j["summary"] = {{"samples", t.samples},
                    {"ns",
                     {{"min", t.ns_min},
                      {"p10", t.ns_p10},
                      {"median", t.ns_median},
                      {"p90", t.ns_p90},
                      {"max", t.ns_max}}},
                    {"ticks", {{"min", t.ticks_min}, {"median", t.ticks_median}, {"max", t.ticks_max}}},
                    {"spread", t.spread},
                    {"central_spread", t.central_spread},
                    {"status", std::string(to_string(t.status))}};
    if (!w.error.empty()) j["error"] = w.error;
    d["cpus"].push_back(std::move(j));
  }
  d["conclusions"] = ojson::array();
  for (const watch_conclusion& c : r.conclusions) {
    d["conclusions"].push_back({{"relax", std::string(to_string(c.kind))},
                                {"status", std::string(to_string(c.status))},
                                {"ns_min", c.ns_min},
                                {"ns_median", c.ns_median},
                                {"ns_max", c.ns_max},
                                {"meaning", c.meaning}});
  }
  // Strings from /proc/cpuinfo are whatever the kernel printed: invalid UTF-8 is replaced, not thrown.
  return d.dump(indent, ' ', false, ojson::error_handler_t::replace) + (indent >= 0 ? "\n" : "");
}

}  // namespace spinwise
