// Calibration, measuring: the full run over every CPU and relax kind, and the quick in-process
// one. What the measurements mean (summaries per core kind, recommendations, warnings) is
// recommend.cpp's.
#include "spinwise/runtime/calibration.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "calibration/calibration_internal.hpp"
#include "spinwise/relax_table.hpp"
#include "spinwise/runtime/affinity.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/machine_info.hpp"
#include "spinwise/runtime/order_stats.hpp"
#include "spinwise/runtime/relax_cost.hpp"
#include "spinwise/version.hpp"

namespace spinwise {
namespace {

using detail::fmt;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

std::vector<relax_kind> supported_kinds() {
  std::vector<relax_kind> out;
  for (relax_kind k : kAllRelaxKinds) {
    if (relax_supported(k)) out.push_back(k);
  }
  return out;
}

std::string kind_list(const std::vector<relax_kind>& kinds) {
  std::string s;
  for (relax_kind k : kinds) s += (s.empty() ? "" : ", ") + std::string(to_string(k));
  return s;
}

}  // namespace

void detail::warm_up(double ms) {
  if (ms <= 0) return;
  const auto end = steady::now() + std::chrono::microseconds(static_cast<long long>(ms * 1000));
  volatile std::uint64_t sink = 0;
  while (steady::now() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + 1;
  }
}

const relax_measurement* cpu_calibration::find(relax_kind k) const noexcept {
  for (const relax_measurement& m : relax) {
    if (m.kind == k) return &m;
  }
  return nullptr;
}

const cpu_calibration* calibration_result::find(int cpu) const noexcept {
  for (const cpu_calibration& c : cpus) {
    if (c.cpu == cpu) return &c;
  }
  return nullptr;
}

bool calibration_result::all_stable() const noexcept {
  for (const cpu_calibration& c : cpus) {
    if (!c.error.empty()) return false;
    for (const relax_measurement& m : c.relax) {
      // The loop-overhead baselines (none, barrier) are a few instructions per trial step: a
      // timer tick or a cache miss splits them into modes that mean nothing for any spin wait.
      if (!detail::trivial_kind(m.kind) && m.ticks.status != stability::stable) return false;
    }
  }
  return true;
}

std::string check_calibration_options(const calibration_options& opt) {
  const std::vector<int> allowed = runtime::allowed_cpus();
  const std::vector<int> online = runtime::online_cpus();
  for (int cpu : opt.cpus) {
    if (std::binary_search(allowed.begin(), allowed.end(), cpu)) continue;
    const std::string have = format_cpu_list(online.empty() ? allowed : online);
    if (cpu < 0 || !std::binary_search(online.begin(), online.end(), cpu)) {
      return "cpu " + std::to_string(cpu) +
             " does not exist or is offline (this machine's online CPUs: " + have + ")";
    }
    return "cpu " + std::to_string(cpu) +
           " is not in this process's CPU affinity mask (allowed: " + format_cpu_list(allowed) + ")";
  }
  for (relax_kind k : opt.kinds) {
    if (!relax_supported(k)) {
      return "relax kind '" + std::string(to_string(k)) + "' is not supported on this CPU with the " +
             std::string(backend_name()) + " backend (supported: " + kind_list(supported_kinds()) + ")";
    }
  }
  if (opt.trials != 0 && (opt.trials < 3 || opt.trials > kMaxCalibrationTrials)) {
    return "trials must be between 3 and " + std::to_string(kMaxCalibrationTrials) + ", not " +
           std::to_string(opt.trials);
  }
  if (opt.target_ns != 0 && !(std::isfinite(opt.target_ns) && opt.target_ns > 0 && opt.target_ns <= 1e7)) {
    return "target must be a time in ns above 0 and at most 10 ms, not " + fmt("%g", opt.target_ns);
  }
  return "";
}

bool calibrate(const calibration_options& opt, calibration_result& out, std::string* error) {
  const auto t0 = steady::now();
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  if (std::string why = check_calibration_options(opt); !why.empty()) return fail(why);

  calibration_result r;
  r.tool = "spinwise " + std::string(kVersion);
  r.created = runtime::utc_now();
  r.machine = detect_machine();
  const std::vector<int> cpus = opt.cpus.empty() ? runtime::allowed_cpus() : opt.cpus;
  const std::vector<relax_kind> kinds = opt.kinds.empty() ? supported_kinds() : opt.kinds;
  if (cpus.empty()) return fail("no CPU to measure: the affinity mask could not be read");

  if (opt.discover_topology) {
    r.topo = discover_topology();
  } else {
    r.topo.source = "none";
    r.topo.note = "topology discovery was turned off";
    for (int cpu : cpus) {
      topology_cpu c;
      c.cpu = cpu;
      c.smt_siblings = {cpu};
      r.topo.cpus.push_back(c);
    }
    core_kind k;
    k.name = "all";
    k.cpus = cpus;
    r.topo.core_kinds.push_back(k);
  }

  calibration_settings& st = r.settings;
  st.quick = opt.quick;
  st.trials = opt.trials != 0 ? opt.trials : (opt.quick ? 15 : 101);
  st.rounds = opt.quick ? 1 : 5;
  st.trial_ns = opt.quick ? 2'000 : 10'000;
  st.warmup_ms = opt.quick ? 0 : 20;
  st.round_warmup_ms = opt.quick ? 0 : 5;
  st.cycles_requested = opt.cycles;
  st.target_ns = opt.target_ns;
  if (opt.target_ns > 0) st.target_reason = "given (--target-ns / calibration_options::target_ns)";

  perf_cycle_counter perf;
  if (opt.cycles != cycles_source::estimate) {
    if (!perf.open()) {
      st.perf_error = perf.error();
      if (opt.cycles == cycles_source::perf)
        return fail("core cycles from perf_event were requested, but " + perf.error());
    }
  } else {
    st.perf_error = "not tried (cycles source 'estimate' requested)";
  }
  st.cycles_used = perf.valid() ? "perf_event" : "estimate";

  // Rounds revisit every CPU, so each (CPU, kind) is sampled across the whole run rather than
  // in one ~1 ms burst: a slow phase (another VM on the host's SMT sibling, a frequency step) of
  // tens of milliseconds then moves one round, which the drift check reports, not the median.
  struct pooled {
    std::vector<double> ticks, cycles, round_medians;
    std::uint32_t relaxes_per_trial = 0;  // fixed by the first round, so every trial is alike
  };
  struct cpu_state {
    std::vector<pooled> kinds;
    std::vector<core_clock_estimate> clocks;
    bool pinned = true;
  };
  std::vector<cpu_state> state(cpus.size());
  for (cpu_state& cs : state) cs.kinds.resize(kinds.size());
  const std::uint32_t rounds = std::min(st.rounds, st.trials);
  const std::uint32_t clock_trials = opt.quick ? 15 : 31;
  const std::size_t steps = static_cast<std::size_t>(rounds) * cpus.size() * kinds.size();
  std::size_t step = 0;
  {
    runtime::scoped_pin pin;  // puts the caller's mask back
    std::uint32_t trials_done = 0;
    for (std::uint32_t round = 0; round < rounds; ++round) {
      const std::uint32_t trials = (st.trials - trials_done) / (rounds - round);
      trials_done += trials;
      for (std::size_t ci = 0; ci < cpus.size(); ++ci) {
        cpu_state& cs = state[ci];
        if (!cs.pinned || !pin.pin(cpus[ci])) {
          cs.pinned = false;
          step += kinds.size();
          continue;
        }
        detail::warm_up(round == 0 ? st.warmup_ms : st.round_warmup_ms);
        cs.clocks.push_back(estimate_core_clock(clock_trials));
        for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
          pooled& pk = cs.kinds[ki];
          relax_cost_options ro;
          ro.kind = kinds[ki];
          ro.trials = trials;
          ro.relaxes_per_trial = pk.relaxes_per_trial;  // 0 in the first round: sized to trial_ns
          ro.trial_ns = st.trial_ns;
          ro.perf = perf.valid() ? &perf : nullptr;
          relax_cost c = measure_relax_cost(ro);
          pk.relaxes_per_trial = c.relaxes_per_trial;
          pk.round_medians.push_back(c.ticks.median);
          pk.ticks.insert(pk.ticks.end(), c.samples.begin(), c.samples.end());
          pk.cycles.insert(pk.cycles.end(), c.cycle_samples.begin(), c.cycle_samples.end());
          ++step;
          if (opt.progress) opt.progress({step, steps, cpus[ci], kinds[ki], seconds_since(t0)});
        }
      }
    }
  }

  const std::uint64_t counter_hz = counter_frequency();
  for (std::size_t ci = 0; ci < cpus.size(); ++ci) {
    cpu_state& cs = state[ci];
    cpu_calibration cc;
    cc.cpu = cpus[ci];
    cc.core_kind = r.topo.kind_of(cc.cpu);
    if (!cs.pinned || cs.clocks.empty()) {
      cc.error = "could not pin to this CPU";
      r.cpus.push_back(std::move(cc));
      continue;
    }
    std::vector<double> clock_hz, tpc, check;
    cc.core_clock_plausible = true;
    for (const core_clock_estimate& e : cs.clocks) {
      clock_hz.push_back(e.hz);
      tpc.push_back(e.ticks_per_cycle);
      check.push_back(e.chain_check);
      cc.core_clock_plausible = cc.core_clock_plausible && e.plausible;
    }
    const runtime::order_summary clock = runtime::summarize_order(clock_hz);
    cc.core_hz = clock.median;
    cc.ticks_per_cycle = runtime::median(tpc);
    cc.chain_check = runtime::median(check);
    cc.core_clock_change = cc.core_hz > 0 ? (clock.max - clock.min) / cc.core_hz : 0;
    for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
      pooled& pk = cs.kinds[ki];
      relax_measurement m;
      m.kind = kinds[ki];
      m.relaxes_per_trial = pk.relaxes_per_trial;
      m.ticks = summarize(pk.ticks);
      m.trials = m.ticks.n;
      if (rounds > 1) m.round_drift = check_drift(m.ticks, pk.round_medians);
      m.ns_median = runtime::ticks_to_ns(m.ticks.median, counter_hz);
      if (!pk.round_medians.empty()) {
        const auto [lo, hi] = std::minmax_element(pk.round_medians.begin(), pk.round_medians.end());
        m.round_ns_min = runtime::ticks_to_ns(*lo, counter_hz);
        m.round_ns_max = runtime::ticks_to_ns(*hi, counter_hz);
      }
      if (!pk.cycles.empty()) {
        m.cycles_median = summarize(pk.cycles).median;
        m.cycles_method = "perf_event";
      } else if (cc.ticks_per_cycle > 0) {
        m.cycles_median = m.ticks.median / cc.ticks_per_cycle;
        m.cycles_method = "estimate";
      }
      cc.relax.push_back(std::move(m));
    }
    r.cpus.push_back(std::move(cc));
  }

  summarize_kinds(r);
  derive_recommendations(r);

  detail::add_calibration_warnings(r);
  r.elapsed_s = seconds_since(t0);
  out = std::move(r);
  return true;
}

quick_calibration quick_calibrate(relax_kind kind) {
  const auto t0 = steady::now();
  quick_calibration q;
  q.kind = kind;
  if (!relax_supported(kind)) return q;
  // No pinning: narrowing the affinity mask can cost the caller a scheduler slice on a loaded
  // machine (10-20 ms measured on the 2-vCPU VM at load 10). The trials take ~0.1 ms in all, so
  // a migration is rare; it is detected (CPU before != after) and the measurement repeated.
  relax_cost c;
  core_clock_estimate clock;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int before = sched_getcpu();
    relax_cost_options ro;
    ro.kind = kind;
    ro.trials = 15;
    ro.relaxes_per_trial = 0;
    ro.trial_ns = 2'000;
    c = measure_relax_cost(ro);
    clock = estimate_core_clock(15, 4096);
    const int after = sched_getcpu();
    q.cpu = before == after ? before : -1;
    if (q.cpu >= 0) break;
  }
  q.ticks = c.ticks.median;
  q.ns = c.ns_median;
  q.status = c.ticks.status;
  q.core_hz = clock.hz;
  if (clock.ticks_per_cycle > 0) q.cycles = q.ticks / clock.ticks_per_cycle;
  q.elapsed_ms = seconds_since(t0) * 1e3;
  return q;
}

bool apply_quick_calibration(relax_kind kind, quick_calibration* out) {
  const quick_calibration q = quick_calibrate(kind);
  if (out != nullptr) *out = q;
  if (!(q.ns > 0) || !std::isfinite(q.ns)) return false;
  return install_relax_ns(kind, nullptr, 0, std::max(q.ns, 0.05));
}

}  // namespace spinwise
