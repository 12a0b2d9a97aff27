#pragma once
// The machine a document was measured on, as JSON: the same keys in a profile and in a --watch
// report, and first in a tool's run context (run_json). Not installed.

#include <nlohmann/json.hpp>

#include "spinwise/runtime/machine_info.hpp"
#include "spinwise/runtime/run_context.hpp"

namespace spinwise::detail {

inline nlohmann::ordered_json machine_json(const machine_info& m) {
  return {{"arch", m.arch},
          {"cpu_vendor", m.cpu_vendor},
          {"cpu_model", m.cpu_model},
          {"cpu_id", m.cpu_id},
          {"cpu_count", m.cpu_count},
          {"kernel", m.kernel},
          {"virtualization", m.virtualization},
          {"container", m.container},
          {"counter", m.counter},
          {"counter_hz", m.counter_hz},
          {"counter_invariant", m.counter_invariant}};
}

// The one writer of a run context (run_context.hpp): the machine's keys as a profile writes them
// (its "" and 0 keep a profile's meaning: a container "" is none detected), then what the run adds,
// "not known" as null, so every document has every key.
inline nlohmann::ordered_json run_json(const run_context& c) {
  using ojson = nlohmann::ordered_json;
  const auto known_int = [](int v) { return v > 0 ? ojson(v) : ojson(); };
  const auto known_text = [](const std::string& v) { return v.empty() ? ojson() : ojson(v); };
  ojson j = machine_json(c.machine);
  j["cpus_online"] = known_int(c.cpus_online);
  j["cpus_allowed"] = known_int(c.cpus_allowed);
  j["kernel_arch"] = known_text(c.kernel_arch);
  j["compiler"] = known_text(c.compiler);
  j["relax"] = known_text(c.relax);
  j["relax_ns"] = c.relax_ns > 0 ? ojson(c.relax_ns) : ojson();
  j["date"] = known_text(c.date);
  ojson load = ojson::array();
  for (const double l : c.load_average) load.push_back(l >= 0 ? ojson(l) : ojson());
  j["load_average"] = std::move(load);
  return j;
}

}  // namespace spinwise::detail
