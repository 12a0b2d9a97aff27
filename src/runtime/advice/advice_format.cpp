// The engine advice as text (the my.cnf lines with their reasons, and the same as SET GLOBAL) and
// as a JSON document, and a refusal as a document (engine_advice.hpp; the arithmetic is in
// engine_advice.cpp).
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/calibration_internal.hpp"
#include "common/machine_json.hpp"
#include "spinwise/runtime/engine_advice.hpp"

namespace spinwise {

using detail::fmt;

namespace {

std::string machine_line(const calibration_result& r) {
  return r.machine.cpu_model + (r.machine.cpu_id.empty() ? "" : " (" + r.machine.cpu_id + ")") + ", " +
         std::to_string(r.cpus.size()) + " CPUs measured";
}

std::string pause_line(const engine_advice& a) {
  std::string s =
      fmt("%.2f", a.relax_ns) + " ns = " + fmt("%.1f", a.relax_ticks) + " TSC ticks (median over the CPUs";
  if (a.relax_ns_hi > 0)
    s += (a.range_from_trials ? "; p10 .. p90 " : "; its 95% interval ") + fmt("%.2f", a.relax_ns_lo) +
         " .. " + fmt("%.2f", a.relax_ns_hi) + " ns";
  if (a.trial_ns_p90 > 0 && !a.stable && !a.range_from_trials)
    s += "; single trials " + fmt("%.2f", a.trial_ns_p10) + " .. " + fmt("%.2f", a.trial_ns_p90) +
         " ns, p10 .. p90";
  return s + (a.stable ? ", stable)" : ", NOT stable)");
}

// The PAUSE cost the advice is from; "cpus": how many CPUs its median is over (null: not known).
nlohmann::ordered_json relax_json(const engine_advice& a, const calibration_result* r) {
  return {{"kind", "pause"},
          {"ns", a.relax_ns},
          {"ticks", a.relax_ticks},
          {"range", a.range_from_trials ? "p10..p90 of trials (profile without the median's interval)"
                                        : "95% interval of the median"},
          {"ns_lo", a.relax_ns_lo},
          {"ns_hi", a.relax_ns_hi},
          {"trial_ns_p10", a.trial_ns_p10},
          {"trial_ns_p90", a.trial_ns_p90},
          {"stable", a.stable},
          {"measured", a.measured.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(a.measured)},
          {"cpus", r != nullptr ? nlohmann::ordered_json(r->cpus.size()) : nlohmann::ordered_json()}};
}

// What measures the setting on the operator's server (--tune, docs/operators.md).
std::string tune_command(const engine_advice& a) {
  return std::string("spinwise-calibrate --tune ") + (a.which == engine::mysql ? "mysql" : "mariadb");
}

// Strings from /proc/cpuinfo are whatever the kernel printed: invalid UTF-8 is replaced, not thrown.
std::string document_text(const nlohmann::ordered_json& d) {
  return d.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string format_advice_text(const engine_advice& a, const calibration_result* r) {
  std::string out = "# spinwise-calibrate --advise: " + a.engine_name + "\n";
  if (r != nullptr) out += "# machine: " + machine_line(*r) + "\n";
  out += "# PAUSE: " + pause_line(a) + "\n";
  if (!a.measured.empty()) out += "# measured: " + a.measured + "\n";
  out += "# target: the spin time per round the defaults gave before Skylake (" + fmt("%.0f", a.unit_ns) +
         " ns per 50-PAUSE unit)\n";
  for (const std::string& w : a.warnings) out += "# WARNING: " + w + "\n";
  if (!a.cannot_tell.empty()) {
    out += "# CANNOT TELL: " + a.cannot_tell + ".\n";
    out += "# The settings below are the rule's. " + tune_command(a) +
           " measures innodb_spin_wait_delay on the server under its own load (docs/operators.md); "
           "gaps of a few percent take more rounds than its 5 minutes\n";
  }
  out += "[" + a.section + "]\n";
  for (const engine_setting& s : a.settings) {
    out += s.name + " = " + std::to_string(s.value) + "\n";
    for (const std::string& c : s.comment) out += "#   " + c + "\n";
  }
  // Every setting the advice gives is a dynamic server variable: the same values, live.
  out += "# The same on the running server (dynamic variables; my.cnf above keeps them over a restart):\n";
  for (const engine_setting& s : a.settings)
    out += "#   SET GLOBAL " + s.name + " = " + std::to_string(s.value) + ";\n";
  // The rule restores a spin time; whether spinning pays at all is the server's to say.
  if (a.cannot_tell.empty())
    out += "# To confirm on the running server under its own load: " + tune_command(a) +
           " (docs/operators.md)\n";
  return out;
}

std::string format_advice_json(const engine_advice& a, const calibration_result* r, const run_context* run) {
  nlohmann::ordered_json d;
  d["engine"] = a.which == engine::mysql ? "mysql" : "mariadb";
  d["engine_name"] = a.engine_name;
  d["section"] = a.section;
  if (run != nullptr) d[kRunContextKey] = detail::run_json(*run);
  d["relax"] = relax_json(a, r);
  d["target"] = {{"unit_ns", a.unit_ns},
                 {"round_ns", a.target_round_ns},
                 {"default_round_ns_here", a.default_round_ns},
                 {"advised_round_ns_here", a.advised_round_ns}};
  if (a.which == engine::mariadb) d["my_cpu_relax_multiplier"] = a.relax_multiplier;
  d["settings"] = nlohmann::ordered_json::object();
  for (const engine_setting& s : a.settings) {
    d["settings"][s.name] = {{"value", s.value}, {"default", s.engine_default}, {"comment", s.comment}};
  }
  d["set_global"] = nlohmann::ordered_json::array();
  for (const engine_setting& s : a.settings)
    d["set_global"].push_back("SET GLOBAL " + s.name + " = " + std::to_string(s.value) + ";");
  d["warnings"] = a.warnings;
  // The host's CPUs (null: not known); cannot_tell null where the rule applies, else why it cannot
  // tell on this host; tune, what measures on the server.
  d["host_cpus"] = a.cpus > 0 ? nlohmann::ordered_json(a.cpus) : nlohmann::ordered_json();
  d["cannot_tell"] = a.cannot_tell.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(a.cannot_tell);
  d["tune"] = tune_command(a);
  d["refused"] = nullptr;
  return document_text(d);
}

std::string format_refusal_json(const advice_result& refused, const calibration_result* r,
                                const run_context* run) {
  const engine_advice& a = refused.advice;
  nlohmann::ordered_json d;
  d["engine"] = a.which == engine::mysql ? "mysql" : "mariadb";
  if (!a.engine_name.empty()) d["engine_name"] = a.engine_name;
  if (run != nullptr) d[kRunContextKey] = detail::run_json(*run);
  if (a.relax_ns > 0) d["relax"] = relax_json(a, r);
  d["settings"] = nullptr;
  d["refused"] = refused.message;
  d["exit_code"] = refused.status == advice_status::usage ? 2 : 3;
  d["suggestions"] = refused.suggestions;
  return document_text(d);
}

}  // namespace spinwise
