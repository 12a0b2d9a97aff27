// Installing a profile in this process: the active relax kind's per-CPU costs and the counter rate,
// all or nothing, and never a knob (a profile says what this machine measures; the engine's
// configuration says how long to spin); and load_profile_text, which parses, checks the machine
// and applies.
#include <algorithm>
#include <exception>
#include <map>
#include <vector>

#include "common/enum_names.hpp"
#include "config/profile_internal.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise {
namespace {

using detail::kProfileUnchanged;
using detail::profile_failure;

constexpr detail::enum_name<profile_errc> kErrcNames[] = {
    {profile_errc::ok, "ok"},
    {profile_errc::not_set, "not_set"},
    {profile_errc::not_found, "not_found"},
    {profile_errc::unreadable, "unreadable"},
    {profile_errc::too_large, "too_large"},
    {profile_errc::empty, "empty"},
    {profile_errc::truncated, "truncated"},
    {profile_errc::malformed, "malformed"},
    {profile_errc::wrong_version, "wrong_version"},
    {profile_errc::invalid, "invalid"},
    {profile_errc::other_machine, "other_machine"},
    {profile_errc::kind_missing, "kind_missing"},
    {profile_errc::rejected, "rejected"},
};

}  // namespace

std::string_view to_string(profile_errc e) noexcept { return detail::name_in(kErrcNames, e); }

profile_status apply_profile(const calibration_result& p) {
  const relax_kind kind = active_relax();
  std::map<int, double> by_cpu;
  std::map<int, std::vector<double>> by_core_kind;
  std::vector<double> all;
  std::vector<relax_kind> present;
  for (const cpu_calibration& c : p.cpus) {
    for (const relax_measurement& m : c.relax) {
      if (std::find(present.begin(), present.end(), m.kind) == present.end()) present.push_back(m.kind);
    }
    const relax_measurement* m = c.find(kind);
    if (!c.error.empty() || m == nullptr || m->trials == 0) continue;
    if (!(m->ns_median >= 0) || m->ns_median > 100'000) {
      return profile_failure(profile_errc::invalid, "cpu " + std::to_string(c.cpu) +
                                                        ": relax cost out of range" + kProfileUnchanged);
    }
    // Below the counter's resolution: the floor relax_table.hpp applies.
    const double ns = std::max(m->ns_median, 0.05);
    by_cpu[c.cpu] = ns;
    by_core_kind[c.core_kind].push_back(ns);
    all.push_back(ns);
  }
  if (all.empty()) {
    std::string have;
    for (relax_kind k : present) have += (have.empty() ? "" : ", ") + std::string(to_string(k));
    return profile_failure(profile_errc::kind_missing,
                           "the profile has no measurement of the active relax kind '" +
                               std::string(to_string(kind)) +
                               "' (it has: " + (have.empty() ? "nothing" : have) + ")" + kProfileUnchanged);
  }
  const double fallback = runtime::median(all);
  // CPUs the profile did not measure, but whose core kind it knows, get that kind's median.
  std::map<int, double> kind_median;
  for (const auto& [k, v] : by_core_kind) kind_median[k] = runtime::median(v);
  for (const topology_cpu& c : p.topo.cpus) {
    if (by_cpu.count(c.cpu) != 0 || c.cpu < 0 || static_cast<std::size_t>(c.cpu) >= kMaxRelaxCpus) continue;
    const auto it = kind_median.find(c.core_kind);
    if (it != kind_median.end()) by_cpu[c.cpu] = it->second;
  }
  const std::size_t n = static_cast<std::size_t>(by_cpu.rbegin()->first) + 1;
  std::vector<double> table(n, 0.0);
  for (const auto& [cpu, ns] : by_cpu) table[static_cast<std::size_t>(cpu)] = ns;
  if (p.machine.counter_hz == 0)
    return profile_failure(profile_errc::invalid, "machine.counter_hz is 0" + std::string(kProfileUnchanged));
  if (!install_relax_ns(kind, table.data(), table.size(), fallback)) {
    return profile_failure(profile_errc::rejected, "install_relax_ns refused the profile's costs of '" +
                                                       std::string(to_string(kind)) + "'" +
                                                       kProfileUnchanged);
  }
  set_counter_frequency(p.machine.counter_hz);
  return {};
}

profile_status load_profile_text(std::string_view text, const profile_load_options& opt) {
  try {
    calibration_result p;
    profile_status st = parse_profile(text, p);
    if (!st) {
      st.message += kProfileUnchanged;
      return st;
    }
    if (opt.check_machine) {
      const std::string why = machine_mismatch(p.machine, detect_machine());
      if (!why.empty())
        return profile_failure(profile_errc::other_machine,
                               "the profile is for another machine: " + why + kProfileUnchanged);
    }
    if (!opt.apply) return {};
    return apply_profile(p);
  } catch (const std::exception& e) {  // bad_alloc and the like: report, never throw
    return profile_failure(profile_errc::invalid,
                           std::string("could not load the profile: ") + e.what() + kProfileUnchanged);
  }
}

}  // namespace spinwise
