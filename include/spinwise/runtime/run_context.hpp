#pragma once
// Where and how a tool's numbers were taken: the machine (as a profile names it), the CPUs this
// process could use, the compiler, the relax instruction and its cost, the date and how busy the
// machine was. spinwise-stress, spinwise-bench and spinwise-calibrate --advise write it with the one
// writer below under the key kRunContextKey, so a script reads the same keys from each
// (docs/run-context.md).
//
// Internal to spinwise's own tools; installed with the runtime, with no stability promise to engines.

#include <string>
#include <utility>
#include <vector>

#include "spinwise/runtime/machine_info.hpp"

namespace spinwise {

// The key the context is written under: {"run": {...}} in a JSON document, "run.<field>" in
// Google Benchmark's flat context.
inline constexpr const char* kRunContextKey = "run";

struct run_context {
  machine_info machine;     // detect_machine(): written with a profile's "machine" keys
  int cpus_online = 0;      // CPUs the kernel has online; 0: not known
  int cpus_allowed = 0;     // CPUs this process may run on (its affinity mask); 0: not known
  std::string kernel_arch;  // uname's machine field ("x86_64" under the generic backend too)
  std::string compiler;     // runtime::compiler_id(); "" not known
  std::string relax;        // the relax instruction the numbers spin with: "pause", "isb"
  double relax_ns = 0;      // one relax in ns, when the tool knows it; 0: not known
  std::string date;         // UTC, ISO 8601; "" not known
  // 1, 5 and 15 minute load averages at the start; negative: not known. A run's own threads are
  // not in them yet: they say what else the machine was doing.
  double load_average[3] = {-1, -1, -1};
};

// This process, now: everything but relax_ns (which the tool measures or reads from a profile).
// Never fails; what cannot be read stays "not known".
run_context detect_run_context();

// The context as a JSON object, every field always present: the machine as in a profile, the
// run's own fields null where not known:
//   {<machine_json keys: arch, cpu_vendor, cpu_model, cpu_id, cpu_count, kernel, virtualization,
//    container, counter, counter_hz, counter_invariant>, "cpus_online", "cpus_allowed",
//    "kernel_arch", "compiler", "relax", "relax_ns", "date", "load_average": [1m, 5m, 15m]}
std::string run_context_json(const run_context& c, int indent = -1);

// The same fields, flat, for a key/value context (Google Benchmark's): {"run.cpu_model", "Intel..."},
// {"run.cpus_allowed", "2"}, ...; a string as itself, any other value as its JSON text.
std::vector<std::pair<std::string, std::string>> run_context_fields(const run_context& c);

}  // namespace spinwise
