// A profile document, field by field: JSON -> calibration_result with every field's type and range
// checked, and the JSON path of the first bad one in the message.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <set>

#include "config/profile_internal.hpp"
#include "spinwise/relax_table.hpp"

namespace spinwise {
namespace {

using detail::profile_failure;
using json = nlohmann::json;

constexpr int kMaxCpuIndex = 1 << 16;

// A field that is missing, mistyped or out of range; `what` starts with its JSON path.
struct invalid_field : std::exception {
  explicit invalid_field(std::string w) : what_(std::move(w)) {}
  const char* what() const noexcept override { return what_.c_str(); }
  std::string what_;
};

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw invalid_field(path + ": " + why);
}

std::string type_of(const json& v) { return v.type_name(); }

// Readers of one field each; `p` is the field's path.
const json* opt_member(const json& obj, const std::string& p, const char* name) {
  if (!obj.is_object()) bad(p, "expected an object, got " + type_of(obj));
  const auto it = obj.find(name);
  return it == obj.end() ? nullptr : &*it;
}

const json& member(const json& obj, const std::string& p, const char* name) {
  const json* v = opt_member(obj, p, name);
  if (v == nullptr) bad(p, std::string("missing field '") + name + "'");
  return *v;
}

std::string as_string(const json& v, const std::string& p) {
  if (!v.is_string()) bad(p, "expected a string, got " + type_of(v));
  return v.get<std::string>();
}

double as_number(const json& v, const std::string& p, double lo, double hi) {
  if (!v.is_number()) bad(p, "expected a number, got " + type_of(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), "%g is outside %g..%g", d, lo, hi);
    bad(p, buf);
  }
  return d;
}

long long as_int(const json& v, const std::string& p, long long lo, long long hi) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) bad(p, std::to_string(u) + " is above " + std::to_string(hi));
    if (static_cast<long long>(u) < lo) bad(p, std::to_string(u) + " is below " + std::to_string(lo));
    return static_cast<long long>(u);
  }
  if (!v.is_number_integer()) bad(p, "expected an integer, got " + type_of(v));
  const auto i = v.get<long long>();
  if (i < lo || i > hi)
    bad(p, std::to_string(i) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return i;
}

bool as_bool(const json& v, const std::string& p) {
  if (!v.is_boolean()) bad(p, "expected true or false, got " + type_of(v));
  return v.get<bool>();
}

const json& as_array(const json& v, const std::string& p) {
  if (!v.is_array()) bad(p, "expected an array, got " + type_of(v));
  return v;
}

template <class T, class F>
void opt(const json& obj, const std::string& p, const char* name, T& out, F read) {
  if (const json* v = opt_member(obj, p, name)) out = read(*v, p + "." + name);
}

std::string opt_string(const json& obj, const std::string& p, const char* name) {
  std::string s;
  opt(obj, p, name, s, as_string);
  return s;
}

double opt_number(const json& obj, const std::string& p, const char* name, double lo, double hi,
                  double def = 0) {
  double d = def;
  opt(obj, p, name, d, [&](const json& v, const std::string& q) { return as_number(v, q, lo, hi); });
  return d;
}

long long opt_int(const json& obj, const std::string& p, const char* name, long long lo, long long hi,
                  long long def) {
  long long i = def;
  opt(obj, p, name, i, [&](const json& v, const std::string& q) { return as_int(v, q, lo, hi); });
  return i;
}

std::vector<int> int_list(const json& v, const std::string& p, long long lo, long long hi) {
  std::vector<int> out;
  const json& a = as_array(v, p);
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(static_cast<int>(as_int(a[i], p + "[" + std::to_string(i) + "]", lo, hi)));
  }
  return out;
}

relax_kind as_relax_kind(const json& v, const std::string& p) {
  const std::string s = as_string(v, p);
  relax_kind k{};
  if (!parse_relax_kind(s, k)) bad(p, "unknown relax kind '" + s + "'");
  return k;
}

constexpr double kMaxTicks = 1e9;  // per relax: far above any real cost, well inside double range

sample_summary read_summary(const json& v, const std::string& p) {
  sample_summary s;
  s.n = static_cast<std::uint32_t>(opt_int(v, p, "n", 0, 100'000'000, 0));
  s.median = as_number(member(v, p, "median"), p + ".median", 0, kMaxTicks);
  s.min = opt_number(v, p, "min", 0, kMaxTicks, s.median);
  s.p10 = opt_number(v, p, "p10", 0, kMaxTicks, s.median);
  s.p90 = opt_number(v, p, "p90", 0, kMaxTicks, s.median);
  s.max = opt_number(v, p, "max", 0, kMaxTicks, s.median);
  // 0 in profiles written before the median's interval was kept (the advice then says it uses
  // p10..p90 instead).
  s.median_lo = opt_number(v, p, "median_lo", 0, kMaxTicks, 0);
  s.median_hi = opt_number(v, p, "median_hi", 0, kMaxTicks, 0);
  if ((s.median_lo > 0 || s.median_hi > 0) && (s.median_lo > s.median || s.median_hi < s.median))
    bad(p, "median_lo <= median <= median_hi does not hold");
  s.spread = opt_number(v, p, "spread", 0, 1e9, 0);
  const std::string st = opt_string(v, p, "status");
  s.status = stability::stable;
  if (!st.empty() && !parse_stability(st, s.status)) bad(p + ".status", "unknown verdict '" + st + "'");
  s.low_mode = opt_number(v, p, "low_mode", 0, kMaxTicks);
  s.high_mode = opt_number(v, p, "high_mode", 0, kMaxTicks);
  s.high_share = opt_number(v, p, "high_share", 0, 1);
  return s;
}

void read_machine(const json& d, machine_info& m) {
  const std::string p = "machine";
  const json& j = member(d, "profile", "machine");
  m.arch = as_string(member(j, p, "arch"), p + ".arch");
  m.cpu_model = as_string(member(j, p, "cpu_model"), p + ".cpu_model");
  m.cpu_id = opt_string(j, p, "cpu_id");
  m.cpu_vendor = opt_string(j, p, "cpu_vendor");
  m.cpu_count = static_cast<int>(as_int(member(j, p, "cpu_count"), p + ".cpu_count", 1, kMaxCpuIndex));
  m.kernel = opt_string(j, p, "kernel");
  m.virtualization = opt_string(j, p, "virtualization");
  m.container = opt_string(j, p, "container");
  m.counter = as_string(member(j, p, "counter"), p + ".counter");
  m.counter_hz = static_cast<std::uint64_t>(
      as_int(member(j, p, "counter_hz"), p + ".counter_hz", 1'000, 1'000'000'000'000LL));  // 1 kHz .. 1 THz
  opt(j, p, "counter_invariant", m.counter_invariant, as_bool);
}

void read_settings(const json& d, calibration_settings& s) {
  const json* j = opt_member(d, "profile", "settings");
  if (j == nullptr) return;
  const std::string p = "settings";
  opt(*j, p, "quick", s.quick, as_bool);
  s.trials = static_cast<std::uint32_t>(opt_int(*j, p, "trials", 0, 100'000, 0));
  s.rounds = static_cast<std::uint32_t>(opt_int(*j, p, "rounds", 0, 100'000, 0));
  s.trial_ns = opt_number(*j, p, "trial_ns", 0, 1e10);
  s.warmup_ms = opt_number(*j, p, "warmup_ms", 0, 1e7);
  s.round_warmup_ms = opt_number(*j, p, "round_warmup_ms", 0, 1e7);
  const std::string req = opt_string(*j, p, "cycles_requested");
  if (!req.empty() && !parse_cycles_source(req, s.cycles_requested))
    bad(p + ".cycles_requested", "unknown source '" + req + "'");
  s.cycles_used = opt_string(*j, p, "cycles_used");
  s.perf_error = opt_string(*j, p, "perf_error");
  s.target_ns = opt_number(*j, p, "target_ns", 0, 1e7);
  s.target_reason = opt_string(*j, p, "target_reason");
}

void read_topology(const json& d, topology& t) {
  const json* j = opt_member(d, "profile", "topology");
  if (j == nullptr) return;
  const std::string p = "topology";
  t.source = opt_string(*j, p, "source");
  t.note = opt_string(*j, p, "note");
  t.packages = static_cast<int>(opt_int(*j, p, "packages", 0, kMaxCpuIndex, 0));
  t.cores = static_cast<int>(opt_int(*j, p, "cores", 0, kMaxCpuIndex, 0));
  t.numa_nodes = static_cast<int>(opt_int(*j, p, "numa_nodes", 0, kMaxCpuIndex, 0));
  if (const json* kinds = opt_member(*j, p, "core_kinds")) {
    const json& a = as_array(*kinds, p + ".core_kinds");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string q = p + ".core_kinds[" + std::to_string(i) + "]";
      core_kind k;
      k.index = static_cast<int>(opt_int(a[i], q, "index", 0, kMaxCpuIndex, static_cast<long long>(i)));
      if (k.index != static_cast<int>(i)) bad(q + ".index", "core kinds must be listed in index order");
      k.name = opt_string(a[i], q, "name");
      k.efficiency = static_cast<int>(opt_int(a[i], q, "efficiency", -1, kMaxCpuIndex, -1));
      if (const json* cpus = opt_member(a[i], q, "cpus"))
        k.cpus = int_list(*cpus, q + ".cpus", 0, kMaxCpuIndex - 1);
      if (const json* infos = opt_member(a[i], q, "infos")) {
        if (!infos->is_object()) bad(q + ".infos", "expected an object, got " + type_of(*infos));
        for (const auto& [name, value] : infos->items())
          k.infos.emplace_back(name, as_string(value, q + ".infos." + name));
      }
      t.core_kinds.push_back(std::move(k));
    }
  }
  const auto nkinds = static_cast<long long>(t.core_kinds.size());
  if (const json* cpus = opt_member(*j, p, "cpus")) {
    const json& a = as_array(*cpus, p + ".cpus");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string q = p + ".cpus[" + std::to_string(i) + "]";
      topology_cpu c;
      c.cpu = static_cast<int>(as_int(member(a[i], q, "cpu"), q + ".cpu", 0, kMaxCpuIndex - 1));
      c.package = static_cast<int>(opt_int(a[i], q, "package", -1, kMaxCpuIndex, -1));
      c.core = static_cast<int>(opt_int(a[i], q, "core", -1, kMaxCpuIndex, -1));
      c.numa_node = static_cast<int>(opt_int(a[i], q, "numa_node", -1, kMaxCpuIndex, -1));
      c.core_kind = static_cast<int>(opt_int(a[i], q, "core_kind", 0, std::max(0LL, nkinds - 1), 0));
      if (const json* sib = opt_member(a[i], q, "smt_siblings"))
        c.smt_siblings = int_list(*sib, q + ".smt_siblings", 0, kMaxCpuIndex - 1);
      t.cpus.push_back(std::move(c));
    }
  }
  if (const json* caches = opt_member(*j, p, "caches")) {
    const json& a = as_array(*caches, p + ".caches");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string q = p + ".caches[" + std::to_string(i) + "]";
      cache_level c;
      c.level = static_cast<int>(opt_int(a[i], q, "level", 0, 16, 0));
      c.type = opt_string(a[i], q, "type");
      c.size = static_cast<std::uint64_t>(opt_int(a[i], q, "size", 0, 1LL << 50, 0));
      c.line = static_cast<std::uint32_t>(opt_int(a[i], q, "line", 0, 1 << 20, 0));
      c.instances = static_cast<int>(opt_int(a[i], q, "instances", 0, kMaxCpuIndex, 0));
      c.cpus_per_instance = static_cast<int>(opt_int(a[i], q, "cpus_per_instance", 0, kMaxCpuIndex, 0));
      t.caches.push_back(std::move(c));
    }
  }
  if (const json* dist = opt_member(*j, p, "numa_distances")) {
    const json& a = as_array(*dist, p + ".numa_distances");
    for (std::size_t i = 0; i < a.size(); ++i) {
      t.numa_distances.push_back(
          int_list(a[i], p + ".numa_distances[" + std::to_string(i) + "]", 0, 1 << 20));
    }
  }
}

void read_cpus(const json& d, calibration_result& r) {
  const json& a = as_array(member(d, "profile", "cpus"), "cpus");
  std::set<int> seen;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = "cpus[" + std::to_string(i) + "]";
    cpu_calibration c;
    c.cpu = static_cast<int>(
        as_int(member(a[i], p, "cpu"), p + ".cpu", 0, static_cast<long long>(kMaxRelaxCpus) - 1));
    if (!seen.insert(c.cpu).second) bad(p + ".cpu", "cpu " + std::to_string(c.cpu) + " is listed twice");
    c.core_kind = static_cast<int>(opt_int(a[i], p, "core_kind", 0, kMaxCpuIndex, 0));
    if (!r.topo.core_kinds.empty() && c.core_kind >= static_cast<int>(r.topo.core_kinds.size())) {
      bad(p + ".core_kind", "no core kind " + std::to_string(c.core_kind) + " in topology.core_kinds");
    }
    c.error = opt_string(a[i], p, "error");
    if (const json* clock = opt_member(a[i], p, "core_clock")) {
      const std::string q = p + ".core_clock";
      c.core_hz = opt_number(*clock, q, "hz", 0, 1e12);
      c.ticks_per_cycle = opt_number(*clock, q, "ticks_per_cycle", 0, 1e9);
      c.chain_check = opt_number(*clock, q, "chain_check", 0, 1e9);
      opt(*clock, q, "plausible", c.core_clock_plausible, as_bool);
      c.core_clock_change = opt_number(*clock, q, "change", 0, 1e9);
    }
    const json& relax = as_array(member(a[i], p, "relax"), p + ".relax");
    for (std::size_t k = 0; k < relax.size(); ++k) {
      const std::string q = p + ".relax[" + std::to_string(k) + "]";
      relax_measurement m;
      m.kind = as_relax_kind(member(relax[k], q, "kind"), q + ".kind");
      if (c.find(m.kind) != nullptr)
        bad(q + ".kind", "relax kind '" + std::string(to_string(m.kind)) + "' is listed twice");
      m.trials = static_cast<std::uint32_t>(opt_int(relax[k], q, "trials", 0, 100'000, 0));
      m.relaxes_per_trial =
          static_cast<std::uint32_t>(opt_int(relax[k], q, "relaxes_per_trial", 0, 1 << 30, 0));
      m.ticks = read_summary(member(relax[k], q, "ticks"), q + ".ticks");
      // The value load_profile installs: 0 .. 100 us per relax, as install_relax_ns accepts.
      m.ns_median = as_number(member(relax[k], q, "ns_median"), q + ".ns_median", 0, 100'000);
      m.cycles_median = opt_number(relax[k], q, "cycles_median", 0, kMaxTicks);
      m.cycles_method = opt_string(relax[k], q, "cycles_method");
      m.round_drift = opt_number(relax[k], q, "round_drift", 0, 1e9);
      if (m.trials == 0)
        m.trials = std::max<std::uint32_t>(1, m.ticks.n);  // a hand-written entry still counts
      c.relax.push_back(std::move(m));
    }
    r.cpus.push_back(std::move(c));
  }
}

void read_c2c(const json& d, calibration_result& r) {
  const json* j = opt_member(d, "profile", "c2c");
  if (j == nullptr) return;
  const std::string p = "c2c";
  r.has_c2c = true;
  r.c2c.method = opt_string(*j, p, "method");
  r.c2c.cpus = int_list(member(*j, p, "cpus"), p + ".cpus", 0, kMaxCpuIndex - 1);
  const std::size_t n = r.c2c.cpus.size();
  const json& rows = as_array(member(*j, p, "one_way_ns"), p + ".one_way_ns");
  if (rows.size() != n)
    bad(p + ".one_way_ns", "expected " + std::to_string(n) + " rows, got " + std::to_string(rows.size()));
  r.c2c.one_way_ns.assign(n * n, -1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string q = p + ".one_way_ns[" + std::to_string(i) + "]";
    const json& row = as_array(rows[i], q);
    if (row.size() != n)
      bad(q, "expected " + std::to_string(n) + " values, got " + std::to_string(row.size()));
    for (std::size_t k = 0; k < n; ++k) {
      if (!row[k].is_null())
        r.c2c.one_way_ns[i * n + k] = as_number(row[k], q + "[" + std::to_string(k) + "]", 0, 1e9);
    }
  }
  if (const json* errs = opt_member(*j, p, "errors")) {
    const json& a = as_array(*errs, p + ".errors");
    for (std::size_t i = 0; i < a.size(); ++i)
      r.c2c.errors.push_back(as_string(a[i], p + ".errors[" + std::to_string(i) + "]"));
  }
}

}  // namespace

namespace detail {

profile_status profile_from_document(const nlohmann::json& doc, calibration_result& out) {
  try {
    if (!doc.is_object())
      return profile_failure(profile_errc::wrong_version,
                             "not a spinwise profile (the document is a " + type_of(doc) + ")");
    const auto fmt = doc.find("format");
    if (fmt == doc.end() || !fmt->is_string() || fmt->get<std::string>() != kProfileFormat) {
      return profile_failure(profile_errc::wrong_version, "not a spinwise profile (\"format\" is not \"" +
                                                              std::string(kProfileFormat) + "\")");
    }
    const auto ver = doc.find("version");
    if (ver == doc.end() || !ver->is_number_integer()) {
      return profile_failure(profile_errc::wrong_version, "the profile has no integer \"version\"");
    }
    if (ver->get<long long>() != kProfileVersion) {
      return profile_failure(profile_errc::wrong_version,
                             "profile version " + std::to_string(ver->get<long long>()) +
                                 " is not supported (this spinwise reads version " +
                                 std::to_string(kProfileVersion) + ")");
    }
    calibration_result r;
    r.tool = opt_string(doc, "profile", "tool");
    r.created = opt_string(doc, "profile", "created");
    read_machine(doc, r.machine);
    read_settings(doc, r.settings);
    read_topology(doc, r.topo);
    read_cpus(doc, r);
    read_c2c(doc, r);
    for (const char* derived : {"summaries", "recommendations"}) {
      if (const json* v = opt_member(doc, "profile", derived)) as_array(*v, derived);
    }
    if (const json* w = opt_member(doc, "profile", "warnings")) {
      const json& a = as_array(*w, "warnings");
      for (std::size_t i = 0; i < a.size(); ++i)
        r.warnings.push_back(as_string(a[i], "warnings[" + std::to_string(i) + "]"));
    }
    r.elapsed_s = opt_number(doc, "profile", "elapsed_s", 0, 1e9);
    // The derived sections are recomputed, so a profile can never disagree with itself.
    summarize_kinds(r);
    derive_recommendations(r);
    out = std::move(r);
  } catch (const invalid_field& e) {
    return profile_failure(profile_errc::invalid, std::string("invalid profile: ") + e.what());
  } catch (const std::exception& e) {
    return profile_failure(profile_errc::invalid, std::string("invalid profile: ") + e.what());
  }
  return {};
}

}  // namespace detail

}  // namespace spinwise
