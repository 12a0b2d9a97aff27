// The profile document: writing it (profile_to_json) and reading text into JSON (parse_profile:
// size, nesting depth and syntax; the fields are profile_validate.cpp's).
#include <algorithm>
#include <cmath>
#include <exception>

#include "common/machine_json.hpp"
#include "config/profile_internal.hpp"

namespace spinwise {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
using detail::profile_failure;

ojson summary_json(const sample_summary& s) {
  ojson j;
  j["n"] = s.n;
  j["min"] = s.min;
  j["p10"] = s.p10;
  j["median"] = s.median;
  j["p90"] = s.p90;
  j["median_lo"] = s.median_lo;
  j["median_hi"] = s.median_hi;
  j["max"] = s.max;
  j["spread"] = s.spread;
  j["status"] = std::string(to_string(s.status));
  if (s.status == stability::bimodal) {
    j["low_mode"] = s.low_mode;
    j["high_mode"] = s.high_mode;
    j["high_share"] = s.high_share;
  }
  return j;
}

ojson to_document(const calibration_result& r) {
  ojson d;
  d["format"] = std::string(kProfileFormat);
  d["version"] = kProfileVersion;
  d["tool"] = r.tool;
  d["created"] = r.created;
  d["machine"] = detail::machine_json(r.machine);
  const calibration_settings& s = r.settings;
  d["settings"] = {{"quick", s.quick},
                   {"trials", s.trials},
                   {"rounds", s.rounds},
                   {"trial_ns", s.trial_ns},
                   {"warmup_ms", s.warmup_ms},
                   {"round_warmup_ms", s.round_warmup_ms},
                   {"cycles_requested", std::string(to_string(s.cycles_requested))},
                   {"cycles_used", s.cycles_used},
                   {"perf_error", s.perf_error},
                   {"target_ns", s.target_ns},
                   {"target_reason", s.target_reason}};

  const topology& t = r.topo;
  ojson topo;
  topo["source"] = t.source;
  topo["note"] = t.note;
  topo["packages"] = t.packages;
  topo["cores"] = t.cores;
  topo["numa_nodes"] = t.numa_nodes;
  topo["cpus"] = ojson::array();
  for (const topology_cpu& c : t.cpus) {
    topo["cpus"].push_back({{"cpu", c.cpu},
                            {"package", c.package},
                            {"core", c.core},
                            {"numa_node", c.numa_node},
                            {"core_kind", c.core_kind},
                            {"smt_siblings", c.smt_siblings}});
  }
  topo["caches"] = ojson::array();
  for (const cache_level& c : t.caches) {
    topo["caches"].push_back({{"level", c.level},
                              {"type", c.type},
                              {"size", c.size},
                              {"line", c.line},
                              {"instances", c.instances},
                              {"cpus_per_instance", c.cpus_per_instance}});
  }
  topo["core_kinds"] = ojson::array();
  for (const core_kind& k : t.core_kinds) {
    ojson infos = ojson::object();
    for (const auto& [name, value] : k.infos) infos[name] = value;
    topo["core_kinds"].push_back({{"index", k.index},
                                  {"name", k.name},
                                  {"efficiency", k.efficiency},
                                  {"cpus", k.cpus},
                                  {"infos", infos}});
  }
  topo["numa_distances"] = t.numa_distances;
  d["topology"] = topo;

  d["cpus"] = ojson::array();
  for (const cpu_calibration& c : r.cpus) {
    ojson cj;
    cj["cpu"] = c.cpu;
    cj["core_kind"] = c.core_kind;
    if (!c.error.empty()) cj["error"] = c.error;
    cj["core_clock"] = {
        {"hz", c.core_hz},
        {"ticks_per_cycle", c.ticks_per_cycle},
        {"chain_check", c.chain_check},
        {"plausible", c.core_clock_plausible},
        {"change", c.core_clock_change},
        {"method", "estimate: loop-carried chain of dependent integer adds, timed with the counter"}};
    cj["relax"] = ojson::array();
    for (const relax_measurement& m : c.relax) {
      cj["relax"].push_back({{"kind", std::string(to_string(m.kind))},
                             {"trials", m.trials},
                             {"relaxes_per_trial", m.relaxes_per_trial},
                             {"ticks", summary_json(m.ticks)},
                             {"ns_median", m.ns_median},
                             {"cycles_median", m.cycles_median},
                             {"cycles_method", m.cycles_method},
                             {"round_drift", m.round_drift}});
    }
    d["cpus"].push_back(std::move(cj));
  }

  d["summaries"] = ojson::array();
  for (const kind_summary& k : r.summaries) {
    d["summaries"].push_back({{"core_kind", k.core_kind},
                              {"relax", std::string(to_string(k.relax))},
                              {"cpus", k.cpus},
                              {"ns_median", k.ns_median},
                              {"ns_min", k.ns_min},
                              {"ns_max", k.ns_max},
                              {"ticks_median", k.ticks_median},
                              {"cycles_median", k.cycles_median},
                              {"cycles_method", k.cycles_method},
                              {"cpu_spread", k.cpu_spread},
                              {"unstable_cpus", k.unstable_cpus}});
  }
  d["recommendations"] = ojson::array();
  for (const recommendation& rec : r.recommendations) {
    ojson delays = ojson::array();
    for (const ut_delay_figure& f : rec.ut_delay) {
      delays.push_back({{"innodb_spin_wait_delay", f.spin_wait_delay},
                        {"pause_multiplier", f.pause_multiplier},
                        {"max_relaxes", f.max_relaxes},
                        {"mean_relaxes", f.mean_relaxes},
                        {"max_us", f.max_us},
                        {"mean_us", f.mean_us}});
    }
    d["recommendations"].push_back({{"core_kind", rec.core_kind},
                                    {"relax", std::string(to_string(rec.relax))},
                                    {"relax_ns", rec.relax_ns},
                                    {"target_ns", rec.target_ns},
                                    {"uncertain", rec.uncertain},
                                    {"spinwise",
                                     {{"delay_unit_ns", rec.delay_unit_ns},
                                      {"delay_unit_is_default", rec.delay_unit_is_default},
                                      {"relaxes_per_unit", rec.relaxes_per_unit}}},
                                    {"mysql",
                                     {{"innodb_spin_wait_pause_multiplier", rec.innodb_pause_multiplier},
                                      {"clamped", rec.multiplier_clamped},
                                      {"unit_ns", rec.innodb_unit_ns}}},
                                    {"ut_delay", delays}});
  }
  if (r.has_c2c) {
    ojson matrix = ojson::array();
    const std::size_t n = r.c2c.cpus.size();
    for (std::size_t i = 0; i < n; ++i) {
      ojson row = ojson::array();
      for (std::size_t j = 0; j < n; ++j) {
        const double v = r.c2c.at(i, j);
        if (v >= 0 && std::isfinite(v)) {
          row.push_back(v);
        } else {
          row.push_back(nullptr);
        }
      }
      matrix.push_back(std::move(row));
    }
    d["c2c"] = {
        {"method", r.c2c.method}, {"cpus", r.c2c.cpus}, {"one_way_ns", matrix}, {"errors", r.c2c.errors}};
  }
  d["warnings"] = r.warnings;
  d["elapsed_s"] = r.elapsed_s;
  return d;
}

// Deepest nesting of arrays and objects, outside strings. Checked before parsing so that no
// input, however deep, reaches a recursive code path.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (ch == '\\') {
        escaped = true;
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
    } else if (ch == '{' || ch == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((ch == '}' || ch == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

std::string profile_to_json(const calibration_result& r, int indent) {
  return to_document(r).dump(indent, ' ', false, ojson::error_handler_t::replace) + (indent >= 0 ? "\n" : "");
}

profile_status parse_profile(std::string_view text, calibration_result& out) {
  if (text.size() > kMaxProfileBytes) {
    return profile_failure(profile_errc::too_large,
                           "the profile is larger than " + std::to_string(kMaxProfileBytes >> 20) + " MiB");
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return profile_failure(profile_errc::empty, "the profile is empty");
  if (nesting_depth(text) > kMaxProfileDepth) {
    return profile_failure(profile_errc::malformed, "the profile nests deeper than " +
                                                        std::to_string(kMaxProfileDepth) +
                                                        " levels: not a spinwise profile");
  }
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // Cut off: the parser read past the last byte wanting more (nlohmann counts reading the end
    // of input as byte size + 1; an error on a real byte reports that byte's 1-based position).
    const auto last = text.find_last_not_of(" \t\r\n");
    if (e.byte > text.size()) {
      return profile_failure(profile_errc::truncated, "the profile ends early (after " +
                                                          std::to_string(last + 1) +
                                                          " bytes): a partial copy or a full disk?");
    }
    return profile_failure(profile_errc::malformed,
                           "not valid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const std::exception& e) {
    return profile_failure(profile_errc::malformed, std::string("not valid JSON: ") + e.what());
  }

  return detail::profile_from_document(doc, out);
}

}  // namespace spinwise
