#include "workload_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/enum_names.hpp"
#include "spinwise/runtime/affinity.hpp"

namespace spinwise::stress {

namespace {

constexpr detail::enum_name<scenario> kScenarioNames[] = {{scenario::stats_lock, "stats-lock"},
                                                          {scenario::hot_page, "hot-page"}};

}  // namespace

std::string_view to_string(scenario s) noexcept { return name_in(kScenarioNames, s); }

bool parse_scenario(std::string_view s, scenario& out) noexcept { return parse_in(kScenarioNames, s, out); }

std::string_view default_lock(scenario s) noexcept {
  return s == scenario::stats_lock ? "hybrid_mutex" : "sx_lock";
}

unsigned available_cpus() {
  const std::size_t n = runtime::allowed_cpus().size();
  if (n > 0) return static_cast<unsigned>(n);
  return std::max(1u, std::thread::hardware_concurrency());  // the mask could not be read
}

unsigned default_threads(unsigned cpus) {
  return std::max(2u, static_cast<unsigned>(std::lround(12.5 * static_cast<double>(cpus))));
}

namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Fills the fields left at "default" (0, negative, empty) with the scenario's defaults.
void fill_defaults(workload_config& c) {
  const bool stats = c.sc == scenario::stats_lock;
  if (c.lock.lock.empty()) c.lock.lock = std::string(default_lock(c.sc));
  if (c.threads == 0) c.threads = default_threads(available_cpus());
  if (c.clients == 0) c.clients = stats ? 1 : 100;
  if (c.fanout == 0) c.fanout = stats ? 256 : 1;
}

void check_shape(const workload_config& c) {
  require(c.threads <= 4096, "--threads must be in 1..4096, got " + std::to_string(c.threads));
  require(c.clients <= 4096, "--clients must be in 1..4096, got " + std::to_string(c.clients));
  require(c.fanout <= 65536, "--fanout must be in 1..65536, got " + std::to_string(c.fanout));
}

// The warm-up's default depends on the duration, so it is filled in here, once the duration is
// known to be valid.
void check_timing(workload_config& c) {
  require(c.duration_s > 0 && c.duration_s <= 86400,
          "--duration must be in (0, 86400] s, got " + num(c.duration_s));
  if (c.warmup_s < 0) c.warmup_s = std::min(1.0, c.duration_s / 5);
  require(c.warmup_s < c.duration_s, "--warmup must be shorter than --duration (" + num(c.warmup_s) +
                                         " s >= " + num(c.duration_s) + " s)");
  require(c.min_requests <= 1'000'000'000,
          "--min-requests must be in 0..1000000000, got " + std::to_string(c.min_requests));
  if (c.max_duration_s < 0) c.max_duration_s = 3 * c.duration_s;
  require(c.max_duration_s >= c.duration_s && c.max_duration_s <= 3 * 86400,
          "--max-duration must be in [--duration, 259200] s, got " + num(c.max_duration_s));
  require(c.calibrate_ms >= 0 && c.calibrate_ms <= 10000,
          "--calibrate-ms must be in 0..10000, got " + num(c.calibrate_ms));
}

void check_work(const workload_config& c) {
  const auto ns_ok = [](double v) { return v >= 0 && v <= 1e9; };
  require(ns_ok(c.work_before_ns), "--work-before-ns must be in 0..1e9, got " + num(c.work_before_ns));
  require(ns_ok(c.cs_ns), "--cs-ns must be in 0..1e9, got " + num(c.cs_ns));
  require(ns_ok(c.work_after_ns), "--work-after-ns must be in 0..1e9, got " + num(c.work_after_ns));
}

void check_hot_page(const workload_config& c) {
  require(
      c.inserts + c.updates + c.selects > 0 && c.inserts <= 1000 && c.updates <= 1000 && c.selects <= 1000,
      "--inserts, --updates and --selects must each be in 0..1000 and not all 0");
  require(c.rows_per_page >= 1 && c.rows_per_page <= 1'000'000,
          "--rows-per-page must be in 1..1000000, got " + std::to_string(c.rows_per_page));
  require(c.pages >= 1 && c.pages <= 1'000'000,
          "--pages must be in 1..1000000, got " + std::to_string(c.pages));
}

void check_sampling(const workload_config& c) {
  require(c.sample_ms >= 0.1 && c.sample_ms <= 10000,
          "--sample-ms must be in 0.1..10000, got " + num(c.sample_ms));
}

void check_emulation(const workload_config& c) {
  if (c.cpu == cpu_model::custom) {
    require(c.relax_ns > 0 && c.relax_ns <= 100'000,
            "--relax-ns must be in (0, 100000] ns, got " + num(c.relax_ns));
  }
  require(c.relax_drift >= 1 && c.relax_drift <= kMaxRelaxDrift,
          "--relax-drift must be in [1, " + num(kMaxRelaxDrift) +
              "] (1: no drift; 3: the relax costs 1 to 3 x its " + "nominal length), got " +
              num(c.relax_drift));
}

void check_faults(const workload_config& c) {
  require(c.stall_holder_ms <= kMaxStallHolderMs,
          "--stall-holder-ms must be in 1.." + std::to_string(kMaxStallHolderMs) + " ms (0: no stall), got " +
              std::to_string(c.stall_holder_ms));
}

}  // namespace

// The checks run in this order, so a command line with several bad values is told about the same
// one first every time.
workload_config resolve(workload_config c) {
  fill_defaults(c);
  check_shape(c);
  check_timing(c);
  check_work(c);
  check_hot_page(c);
  check_sampling(c);
  check_emulation(c);
  check_faults(c);
  resolve_policy(c.lock);  // unknown lock, wrong policy or a knob the policy lacks
  return c;
}

}  // namespace spinwise::stress
