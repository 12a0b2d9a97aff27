#pragma once
// The machine a document was measured on, as JSON: the same keys in a profile and in a --watch
// report. Not installed.

#include <nlohmann/json.hpp>

#include "spinwise/runtime/machine_info.hpp"

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

}  // namespace spinwise::detail
