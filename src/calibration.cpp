#include "spinwise/runtime/calibration.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "spinwise/relax_time.hpp"
#include "spinwise/runtime/relax_cost.hpp"
#include "spinwise/version.hpp"

namespace spinwise {
namespace {

using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::vector<int> thread_cpus(cpu_set_t* save = nullptr) {
  cpu_set_t s;
  CPU_ZERO(&s);
  std::vector<int> out;
  if (pthread_getaffinity_np(pthread_self(), sizeof(s), &s) != 0) return out;
  if (save != nullptr) *save = s;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &s)) out.push_back(c);
  }
  return out;
}

bool pin_to(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof(s), &s) == 0;
}

// Restores the calling thread's affinity mask when a measurement is done.
class affinity_guard {
 public:
  affinity_guard() { ok_ = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) == 0; }
  affinity_guard(const affinity_guard&) = delete;
  affinity_guard& operator=(const affinity_guard&) = delete;
  ~affinity_guard() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

std::vector<int> online_cpus() {
  std::vector<int> out;
  std::FILE* f = std::fopen("/sys/devices/system/cpu/online", "r");
  if (f != nullptr) {
    char buf[4096];
    const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    if (!parse_cpu_list(buf, out)) out.clear();
  }
  return out;
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

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Busy for `ms` so a core that idled ramps its clock before it is measured.
void warm_up(double ms) {
  if (ms <= 0) return;
  const auto end = steady::now() + std::chrono::microseconds(static_cast<long long>(ms * 1000));
  volatile std::uint64_t sink = 0;
  while (steady::now() < end) {
    for (int i = 0; i < 1000; ++i) sink = sink + 1;
  }
}

// A relax kind whose cost is only loop overhead: no recommendation is meaningful for it.
bool trivial_kind(relax_kind k) { return k == relax_kind::none || k == relax_kind::barrier; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

}  // namespace

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
      if (m.ticks.status != stability::stable) return false;
    }
  }
  return true;
}

std::string check_calibration_options(const calibration_options& opt) {
  const std::vector<int> allowed = thread_cpus();
  const std::vector<int> online = online_cpus();
  for (int cpu : opt.cpus) {
    if (std::binary_search(allowed.begin(), allowed.end(), cpu)) continue;
    const std::string have = format_cpu_list(online.empty() ? allowed : online);
    if (cpu < 0 || !std::binary_search(online.begin(), online.end(), cpu)) {
      return "cpu " + std::to_string(cpu) + " does not exist or is offline (this machine's online CPUs: " + have + ")";
    }
    return "cpu " + std::to_string(cpu) + " is not in this process's CPU affinity mask (allowed: " +
           format_cpu_list(allowed) + ")";
  }
  for (relax_kind k : opt.kinds) {
    if (!relax_supported(k)) {
      return "relax kind '" + std::string(to_string(k)) + "' is not supported on this CPU with the " +
             std::string(backend_name()) + " backend (supported: " + kind_list(supported_kinds()) + ")";
    }
  }
  if (opt.trials != 0 && (opt.trials < 3 || opt.trials > 100000)) {
    return "trials must be between 3 and 100000, not " + std::to_string(opt.trials);
  }
  if (opt.target_ns != 0 && !(std::isfinite(opt.target_ns) && opt.target_ns > 0 && opt.target_ns <= 1e7)) {
    return "target must be a time in ns above 0 and at most 10 ms, not " + fmt("%g", opt.target_ns);
  }
  return "";
}

double default_target_ns(double core_hz) {
  const double hz = core_hz >= 1e8 && core_hz <= 1e10 ? core_hz : kFallbackCoreHz;
  return kDefaultTargetCycles / hz * 1e9;
}

ut_delay_figure ut_delay(unsigned spin_wait_delay, unsigned pause_multiplier, double relax_ns) {
  ut_delay_figure f;
  f.spin_wait_delay = spin_wait_delay;
  f.pause_multiplier = pause_multiplier;
  const unsigned top = spin_wait_delay > 0 ? spin_wait_delay - 1 : 0;  // random[0, delay): at most delay-1
  f.max_relaxes = top * pause_multiplier;
  f.mean_relaxes = 0.5 * top * pause_multiplier;
  f.max_us = f.max_relaxes * relax_ns / 1000.0;
  f.mean_us = f.mean_relaxes * relax_ns / 1000.0;
  return f;
}

void summarize_kinds(calibration_result& r) {
  r.summaries.clear();
  std::map<std::pair<int, int>, std::vector<std::pair<const cpu_calibration*, const relax_measurement*>>> groups;
  for (const cpu_calibration& c : r.cpus) {
    if (!c.error.empty()) continue;
    for (const relax_measurement& m : c.relax) {
      if (m.trials == 0) continue;
      groups[{c.core_kind, static_cast<int>(m.kind)}].emplace_back(&c, &m);
    }
  }
  for (const auto& [key, members] : groups) {
    kind_summary s;
    s.core_kind = key.first;
    s.relax = static_cast<relax_kind>(key.second);
    std::vector<double> ns, ticks, cycles;
    bool perf = false, estimate = false;
    for (const auto& [cpu, m] : members) {
      s.cpus.push_back(cpu->cpu);
      ns.push_back(m->ns_median);
      ticks.push_back(m->ticks.median);
      cycles.push_back(m->cycles_median);
      (m->cycles_method == "perf_event" ? perf : estimate) = true;
      if (m->ticks.status != stability::stable) s.unstable_cpus.push_back(cpu->cpu);
    }
    s.ns_median = median_of(ns);
    s.ns_min = *std::min_element(ns.begin(), ns.end());
    s.ns_max = *std::max_element(ns.begin(), ns.end());
    s.ticks_median = median_of(ticks);
    s.cycles_median = median_of(cycles);
    s.cycles_method = perf && estimate ? "mixed" : perf ? "perf_event" : "estimate";
    s.cpu_spread = s.ns_median > 0 ? (s.ns_max - s.ns_min) / s.ns_median : 0;
    r.summaries.push_back(std::move(s));
  }
}

void derive_recommendations(calibration_result& r) {
  r.recommendations.clear();
  double target = r.settings.target_ns;
  if (!(target > 0)) {
    std::vector<double> hz;
    for (const cpu_calibration& c : r.cpus) {
      if (c.error.empty() && c.core_clock_plausible) hz.push_back(c.core_hz);
    }
    const double core_hz = median_of(hz);
    target = default_target_ns(core_hz);
    r.settings.target_ns = target;
    r.settings.target_reason =
        hz.empty() ? "pre-Skylake budget: 50 PAUSE x 10 cycles = 500 core cycles at an assumed 2.5 GHz (no plausible core clock measured)"
                   : "pre-Skylake budget: 50 PAUSE x 10 cycles = 500 core cycles at the measured core clock of " +
                         fmt("%.2f", core_hz / 1e9) + " GHz";
  }
  for (const kind_summary& s : r.summaries) {
    if (trivial_kind(s.relax) || !(s.ns_median > 0)) continue;
    recommendation rec;
    rec.core_kind = s.core_kind;
    rec.relax = s.relax;
    rec.relax_ns = s.ns_median;
    rec.target_ns = target;
    rec.uncertain = !s.unstable_cpus.empty();
    rec.delay_unit_ns = target;
    const double per_unit = target / s.ns_median;
    rec.relaxes_per_unit = static_cast<std::uint32_t>(std::clamp(std::round(per_unit), 1.0, 4e9));
    const double m = std::round(per_unit);
    rec.innodb_pause_multiplier = static_cast<unsigned>(std::clamp(m, 1.0, static_cast<double>(kInnodbMaxPauseMultiplier)));
    rec.multiplier_clamped = m < 1.0 || m > kInnodbMaxPauseMultiplier;
    rec.innodb_unit_ns = rec.innodb_pause_multiplier * s.ns_median;
    for (unsigned delay : {6u, 30u}) rec.ut_delay.push_back(ut_delay(delay, kInnodbDefaultPauseMultiplier, s.ns_median));
    if (rec.innodb_pause_multiplier != kInnodbDefaultPauseMultiplier) {
      for (unsigned delay : {6u, 30u}) rec.ut_delay.push_back(ut_delay(delay, rec.innodb_pause_multiplier, s.ns_median));
    }
    r.recommendations.push_back(std::move(rec));
  }
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
  r.created = utc_now();
  r.machine = detect_machine();
  const std::vector<int> cpus = opt.cpus.empty() ? thread_cpus() : opt.cpus;
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
      if (opt.cycles == cycles_source::perf) return fail("core cycles from perf_event were requested, but " + perf.error());
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
    affinity_guard restore;
    std::uint32_t trials_done = 0;
    for (std::uint32_t round = 0; round < rounds; ++round) {
      const std::uint32_t trials = (st.trials - trials_done) / (rounds - round);
      trials_done += trials;
      for (std::size_t ci = 0; ci < cpus.size(); ++ci) {
        cpu_state& cs = state[ci];
        if (!cs.pinned || !pin_to(cpus[ci])) {
          cs.pinned = false;
          step += kinds.size();
          continue;
        }
        warm_up(round == 0 ? st.warmup_ms : st.round_warmup_ms);
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
    cc.core_hz = median_of(clock_hz);
    cc.ticks_per_cycle = median_of(tpc);
    cc.chain_check = median_of(check);
    const auto [lo, hi] = std::minmax_element(clock_hz.begin(), clock_hz.end());
    cc.core_clock_change = cc.core_hz > 0 ? (*hi - *lo) / cc.core_hz : 0;
    for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
      pooled& pk = cs.kinds[ki];
      relax_measurement m;
      m.kind = kinds[ki];
      m.relaxes_per_trial = pk.relaxes_per_trial;
      m.ticks = summarize(pk.ticks);
      m.trials = m.ticks.n;
      if (rounds > 1) m.round_drift = check_drift(m.ticks, pk.round_medians);
      m.ns_median = detail::ticks_to_ns(m.ticks.median, counter_hz);
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

  // What a reader must not miss.
  for (const cpu_calibration& c : r.cpus) {
    const std::string who = "cpu " + std::to_string(c.cpu);
    if (!c.error.empty()) r.warnings.push_back(who + ": " + c.error);
    if (c.error.empty() && !c.core_clock_plausible) {
      r.warnings.push_back(who + ": core clock estimate implausible (chain check " + fmt("%.2f", c.chain_check) +
                           ", expected ~2; " + fmt("%.0f", c.core_hz / 1e6) + " MHz): cycle figures are unreliable");
    }
    if (c.core_clock_change > 0.05) {
      r.warnings.push_back(who + ": core clock estimates differ by " + fmt("%.0f", c.core_clock_change * 100) +
                           "% between rounds (frequency scaling?)");
    }
    for (const relax_measurement& m : c.relax) {
      if (m.trials == 0 || m.ticks.status == stability::stable) continue;
      std::string w = who + " " + std::string(to_string(m.kind)) + ": " + std::string(to_string(m.ticks.status));
      if (m.ticks.status == stability::bimodal) {
        w += " (" + fmt("%.1f", m.ticks.low_mode) + " and " + fmt("%.1f", m.ticks.high_mode) + " ticks, " +
             fmt("%.0f", m.ticks.high_share * 100) + "% slow: VM PAUSE-loop exits or SMT contention?)";
      } else if (m.ticks.status == stability::noisy) {
        w += " (p10..p90 spans " + fmt("%.0f", m.ticks.spread * 100) + "% of the median)";
      } else if (m.ticks.status == stability::drifting) {
        w += " (rounds differ by " + fmt("%.0f", m.round_drift * 100) + "%: the clock moved)";
      }
      r.warnings.push_back(w);
    }
  }
  for (const kind_summary& s : r.summaries) {
    if (!trivial_kind(s.relax) && s.cpus.size() > 1 && s.cpu_spread > 0.25) {
      r.warnings.push_back("core kind " + std::to_string(s.core_kind) + " " + std::string(to_string(s.relax)) +
                           ": CPUs differ by " + fmt("%.0f", s.cpu_spread * 100) +
                           "% (hybrid cores the OS does not report, or a busy CPU?)");
    }
  }
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
