#include "spinwise/runtime/run_context.hpp"

#include <cstdlib>

#include "common/machine_json.hpp"
#include "spinwise/arch.hpp"
#include "spinwise/runtime/affinity.hpp"

namespace spinwise {

run_context detect_run_context() {
  run_context c;
  c.machine = detect_machine();
  c.cpus_online = static_cast<int>(runtime::online_cpus().size());
  c.cpus_allowed = static_cast<int>(runtime::allowed_cpus().size());
  c.kernel_arch = runtime::kernel_machine();
  c.compiler = runtime::compiler_id();
  c.relax = std::string(to_string(active_relax()));
  c.date = runtime::utc_now();
  double load[3];
  const int n = ::getloadavg(load, 3);
  for (int i = 0; i < n; ++i) c.load_average[i] = load[i];
  return c;
}

std::string run_context_json(const run_context& c, int indent) {
  // Strings from /proc/cpuinfo are whatever the kernel printed: invalid UTF-8 is replaced, not thrown.
  return detail::run_json(c).dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<std::pair<std::string, std::string>> run_context_fields(const run_context& c) {
  using ojson = nlohmann::ordered_json;
  const ojson j = detail::run_json(c);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = j.cbegin(); it != j.cend(); ++it) {
    const ojson& v = it.value();
    out.emplace_back(
        std::string(kRunContextKey) + "." + it.key(),
        v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, ojson::error_handler_t::replace));
  }
  return out;
}

}  // namespace spinwise
