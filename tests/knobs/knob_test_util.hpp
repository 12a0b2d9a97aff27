#pragma once
// Shared by the knob tests: every knob of the registry as text, to compare before and after a
// batch that must change nothing, and a reset of every class.

#include <string>
#include <vector>

#include "spinwise/knob_text.hpp"

namespace knob_test {

// "class.knob=value" (with "*" when the class overrides it), every knob of every class and family.
inline std::vector<std::string> snapshot() {
  std::vector<std::string> s;
  spinwise::for_each_knob_class([&](const spinwise::knob_class& c) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      const spinwise::knob_info k = c.knob(i);
      s.push_back(std::string(c.name()) + "." + std::string(k.name) + "=" + std::to_string(k.value) +
                  (k.overridden ? "*" : ""));
    }
  });
  return s;
}

// Every class back to its family, every family back to its defaults.
inline void reset_all() {
  spinwise::for_each_knob_class([](const spinwise::knob_class& c) { c.reset(); });
}

}  // namespace knob_test
