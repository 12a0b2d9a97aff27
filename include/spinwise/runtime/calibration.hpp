#pragma once
// Calibration: what one relax costs on every CPU and core kind of this machine, and the settings
// that keep spin waits the same length in time (spinwise::runtime).
//
// For each CPU (the calling thread is pinned to each in turn and restored afterwards) and each
// relax kind the CPU supports, measure_relax_cost() times trials of back-to-back relaxes with the
// cycle counter. Every figure carries its unit and its source: counter ticks (TSC, CNTVCT),
// nanoseconds (ticks / counter rate), core cycles (perf_event where a PMU is exposed, else ticks
// / the core clock estimated with a dependent add chain; see cycles.hpp). A CPU whose trials do
// not agree is reported as noisy, bimodal or drifting, never as one confident number.
//
// Cost: a full run makes 5 rounds over all CPUs (so each CPU is sampled across the whole run, not
// in one burst): 20 ms of warm-up on a CPU's first visit, 5 ms on later ones, and 101 trials of
// ~10 us per CPU and relax kind in all: ~70 ms for 2 CPUs and 2 kinds. The quick mode makes one
// round without warm-up, 15 trials of ~2 us: well under 1 ms per CPU and kind.
//
// Recommendations. InnoDB's spin delay is `random[0, innodb_spin_wait_delay) x 50` relaxes, a
// budget set when PAUSE took ~10 cycles: 50 x 10 = 500 core cycles per delay unit (167 ns at
// 3 GHz). On Skylake (PAUSE ~140 cycles) the same setting spins 14x longer. The default target is
// time_policy's default delay unit, 200 ns (that budget in time; spinwise's locks wait in it on
// every CPU), so MySQL's setting and spinwise's aim at one time; `target_ns` overrides it. For each
// core kind and relax kind: spinwise's delay_unit_ns (a knob: a profile never sets it) and relaxes
// per unit, MySQL 8.0.16+'s innodb_spin_wait_pause_multiplier that gives the target, and
// ut_delay's worst-case and mean wait per spin round at innodb_spin_wait_delay 6 and 30 with the
// stock multiplier of 50.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/c2c.hpp"
#include "spinwise/runtime/cycles.hpp"
#include "spinwise/runtime/machine_info.hpp"
#include "spinwise/runtime/sample_summary.hpp"
#include "spinwise/runtime/topology.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

// The pre-Skylake budget InnoDB's defaults were tuned on: 50 PAUSEs of ~10 cycles per delay unit.
inline constexpr double kPreSkylakePauseCycles = 10.0;
inline constexpr unsigned kInnodbDefaultPauseMultiplier = 50;
inline constexpr double kInnodbBudgetCycles = kPreSkylakePauseCycles * kInnodbDefaultPauseMultiplier;
// Used for innodb_budget_ns() when no plausible core clock was measured.
inline constexpr double kFallbackCoreHz = 2.5e9;
// The recommendations' default target: the delay unit spinwise's time policy waits in by default.
// Not InnoDB's 500 cycles at the measured core clock (the earlier default): that figure moves
// with a core clock estimate (frequency scaling, a busy host) and from machine to machine, while
// the point of a unit in time is that it does not; and a target the library does not wait in
// recommended a delay_unit_ns that no lock used unless the engine set the knob.
inline constexpr double kDefaultTargetNs = time_settings{}.delay_unit_ns;
// MySQL's bounds for innodb_spin_wait_pause_multiplier (8.0.16+).
inline constexpr unsigned kInnodbMaxPauseMultiplier = 100;

// One relax kind on one CPU.
struct relax_measurement {
  relax_kind kind = relax_kind::none;
  std::uint32_t trials = 0;
  std::uint32_t relaxes_per_trial = 0;
  sample_summary ticks;       // counter ticks per relax
  double ns_median = 0;       // ticks.median at the machine's counter rate
  double cycles_median = 0;   // core cycles per relax
  std::string cycles_method;  // "perf_event" (counted) or "estimate" (ticks / ticks per core cycle)
  double round_drift = 0;     // disagreement between the rounds of trials
  // The lowest and highest round median in ns (what a drifting verdict moved between); set by
  // calibrate(), not stored in profiles (0 in a loaded one).
  double round_ns_min = 0, round_ns_max = 0;
};

struct cpu_calibration {
  int cpu = -1;
  int core_kind = 0;
  double core_hz = 0;  // from the dependent add chain, median of one estimate per round
  double ticks_per_cycle = 0;
  double chain_check = 0;  // see core_clock_estimate
  bool core_clock_plausible = false;
  double core_clock_change = 0;  // (max - min) / median of the per-round estimates
  std::vector<relax_measurement> relax;
  std::string error;  // non-empty: this CPU could not be measured (and why)

  const relax_measurement* find(relax_kind k) const noexcept;
};

// One relax kind over the CPUs of one core kind.
struct kind_summary {
  int core_kind = 0;
  relax_kind relax = relax_kind::none;
  std::vector<int> cpus;          // measured CPUs of this kind
  double ns_median = 0;           // median over the CPUs' medians
  double ns_min = 0, ns_max = 0;  // range of the CPUs' medians
  double ticks_median = 0;
  double cycles_median = 0;
  std::string cycles_method;       // "perf_event", "estimate" or "mixed"
  double cpu_spread = 0;           // (ns_max - ns_min) / ns_median
  std::vector<int> unstable_cpus;  // CPUs whose verdict is not stable
};

// ut_delay per spin round: random[0, delay) x multiplier relaxes.
struct ut_delay_figure {
  unsigned spin_wait_delay = 0;
  unsigned pause_multiplier = 0;
  std::uint32_t max_relaxes = 0;  // (delay - 1) x multiplier
  double mean_relaxes = 0;        // (delay - 1) / 2 x multiplier
  double max_us = 0;
  double mean_us = 0;
};

struct recommendation {
  int core_kind = 0;
  relax_kind relax = relax_kind::none;
  double relax_ns = 0;     // the kind summary's median
  double target_ns = 0;    // one delay unit
  bool uncertain = false;  // a CPU of this kind was not stable
  // spinwise's time policy. delay_unit_ns is a knob (time_policy<>::set_delay_unit_ns, or a
  // lock's own): a profile never sets it. At the default target it is the library's default
  // (delay_unit_is_default: nothing to set); relaxes_per_unit is what the profile's relax table
  // makes of it on this core kind.
  double delay_unit_ns = 0;
  bool delay_unit_is_default = false;
  std::uint32_t relaxes_per_unit = 0;
  // MySQL 8.0.16+
  unsigned innodb_pause_multiplier = 0;   // within MySQL's 1..100
  bool multiplier_clamped = false;        // the target needs more (or fewer) than MySQL allows
  double innodb_unit_ns = 0;              // what that multiplier gives per delay unit
  std::vector<ut_delay_figure> ut_delay;  // delay 6 and 30 at multiplier 50, then at the recommended one
};

struct calibration_settings {
  bool quick = false;
  std::uint32_t trials = 0;
  std::uint32_t rounds = 0;  // passes over all CPUs; each takes trials / rounds trials per kind
  double trial_ns = 0;
  double warmup_ms = 0;        // busy time on a CPU before its first round
  double round_warmup_ms = 0;  // and before each later round
  cycles_source cycles_requested = cycles_source::automatic;
  std::string cycles_used;  // "perf_event" or "estimate"
  std::string perf_error;   // why perf_event was not used, when it was not
  double target_ns = 0;
  std::string target_reason;  // how target_ns was chosen
};

struct calibration_result {
  std::string tool;     // "spinwise <version>" (kVersion)
  std::string created;  // ISO 8601 UTC
  machine_info machine;
  topology topo;
  calibration_settings settings;
  std::vector<cpu_calibration> cpus;
  std::vector<kind_summary> summaries;
  std::vector<recommendation> recommendations;
  bool has_c2c = false;
  c2c_result c2c;
  std::vector<std::string> warnings;
  double elapsed_s = 0;

  const cpu_calibration* find(int cpu) const noexcept;
  // True when every measured (cpu, kind) is stable and no CPU failed; the loop-overhead
  // baselines `none` and `barrier` are reported but not judged.
  bool all_stable() const noexcept;
};

struct calibration_progress {
  std::size_t step = 0, steps = 0;  // (cpu, kind) pairs done / total
  int cpu = -1;
  relax_kind kind = relax_kind::none;
  double elapsed_s = 0;
};

// The most trials a calibration takes per CPU and relax kind (check_calibration_options' bound).
inline constexpr std::uint32_t kMaxCalibrationTrials = 100000;

struct calibration_options {
  std::vector<int> cpus;          // empty: every CPU this thread may run on
  std::vector<relax_kind> kinds;  // empty: every kind relax_supported() says this CPU can issue
  std::uint32_t trials = 0;       // 0: 101 (full) or 15 (quick)
  bool quick = false;
  cycles_source cycles = cycles_source::automatic;
  double target_ns = 0;           // 0: kDefaultTargetNs, time_policy's default delay unit
  bool discover_topology = true;  // false: one core kind, no hwloc/sysfs
  std::function<void(const calibration_progress&)> progress;  // called on the calling thread
};

// "" when `opt` can run here, else why not: a CPU this thread may not run on (or that does not
// exist), a relax kind this CPU cannot issue, a trial count out of 3..100000, a bad target.
std::string check_calibration_options(const calibration_options& opt);

// Runs the calibration. False, with the reason, for bad options or a cycles_source::perf request
// that perf_event cannot serve; per-CPU failures are recorded in the result instead.
bool calibrate(const calibration_options& opt, calibration_result& out, std::string* error);

// The derived parts, recomputed from `r.cpus` (profiles store them, loaders recompute them).
void summarize_kinds(calibration_result& r);
void derive_recommendations(calibration_result& r);
// InnoDB's pre-Skylake budget, kInnodbBudgetCycles, in ns at `core_hz` (kFallbackCoreHz when
// implausible): what the default target's reason compares the target with.
double innodb_budget_ns(double core_hz);
ut_delay_figure ut_delay(unsigned spin_wait_delay, unsigned pause_multiplier, double relax_ns);

// The in-process quick calibration for engines that ship no profile: one CPU (the one the calling
// thread runs on; it is not pinned, a migration during the ~0.1 ms of trials is detected and the
// measurement repeated), one relax kind. ~0.1 ms, plus ~1 ms the first time a process reads the
// counter rate (counter_frequency() timing the TSC where CPUID does not give it): under 5 ms.
struct quick_calibration {
  relax_kind kind = relax_kind::none;
  int cpu = -1;       // -1: the thread migrated during every attempt
  double ns = 0;      // per relax, median
  double ticks = 0;   // counter ticks per relax, median
  double cycles = 0;  // core cycles per relax (estimate)
  double core_hz = 0;
  stability status = stability::insufficient;
  double elapsed_ms = 0;
};
quick_calibration quick_calibrate(relax_kind kind = active_relax());

// Quick calibration, installed for every CPU (install_relax_ns with this CPU's cost as the
// fallback). False, and nothing installed, when the measurement is not usable.
bool apply_quick_calibration(relax_kind kind = active_relax(), quick_calibration* out = nullptr);

// ---------------------------------------------------------------------------------------------
// The relax cost over time (spinwise-calibrate --watch).
//
// A profile is a snapshot, and the relax cost is not a constant: on a Skylake-class cloud VM (2
// vCPUs, Firecracker) PAUSE pinned to one CPU and measured every half second wandered from one
// sample to the next, and on a hybrid CPU a thread that migrates between core kinds sees ~3x. One
// guest's --watch figures are in bench/results/calibration-vms/README.md. watch_relax_cost()
// repeats the quick measurement on each CPU at a fixed interval and judges the samples over time
// (not the trials of one burst, which summarize() judges).

// One sample of one (CPU, relax kind): the median of one quick measurement.
struct relax_time_sample {
  double t_ms = 0;   // since the watch started
  double ns = 0;     // per relax
  double ticks = 0;  // counter ticks per relax
};

// Limits of the verdict over time. 10% is the same bound the trials of one measurement must meet
// (stability_limits::noisy_spread): PAUSE on a quiet machine repeats within ~1% between runs.
struct time_stability_limits {
  double stable_spread = 0.10;    // (p10..p90 of the samples) / median at most this: stable
  std::uint32_t min_samples = 5;  // fewer: insufficient
};

// Samples over time, summarized. Quantiles by order_stats.hpp's one rank rule.
struct relax_time_summary {
  std::uint32_t samples = 0;  // finite ones
  double ns_min = 0, ns_p10 = 0, ns_median = 0, ns_p90 = 0, ns_max = 0;
  double ticks_min = 0, ticks_median = 0, ticks_max = 0;
  double spread = 0;          // (ns_max - ns_min) / ns_median: everything seen
  double central_spread = 0;  // (ns_p90 - ns_p10) / ns_median: what the verdict judges, so one
                              // outlier (a preempted sample) does not make a host drifting
  stability status = stability::insufficient;  // stable, drifting or insufficient
};

// Pure: the summary and the verdict of `samples` (any order; non-finite ones dropped).
relax_time_summary summarize_over_time(const std::vector<relax_time_sample>& samples,
                                       const time_stability_limits& limits = {});

// What a relax kind's cost over time means for profiles and for innodb_policy's settings on this
// host, in one line: the conclusion of --watch and the explanation under a full run's drifting
// warnings are both this text. InnoDB's figures are ut_delay() at MySQL's defaults
// (innodb_settings: spin_wait_delay 6, pause_multiplier 50, 30 spin rounds) at ns_min and ns_max.
struct relax_drift_observation {
  relax_kind kind = relax_kind::none;
  double ns_min = 0, ns_median = 0, ns_max = 0;  // per relax, as seen
  stability status = stability::insufficient;    // stable or drifting; anything else: too few
  std::string seen;  // how the range was seen: "over 10.0 s", "between this run's 5 rounds"
};
std::string relax_drift_meaning(const relax_drift_observation& o);

struct watch_progress {
  double elapsed_s = 0, duration_s = 0;
  std::size_t samples = 0;  // ticks done
};

struct watch_options {
  std::vector<int> cpus;          // empty: every CPU this thread may run on
  std::vector<relax_kind> kinds;  // empty: active_relax() only
  double duration_s = 10;         // > 0, at most kMaxWatchSeconds
  double interval_ms = 500;       // >= 1, at most duration_s: one sample per CPU and kind each
  std::uint32_t trials = 15;      // per sample, 3..100000: the quick calibration's 15 trials ...
  double trial_ns = 2'000;        // ... of ~2 us
  double warmup_ms = 1;           // busy on a CPU before each sample: a vCPU that slept for the
                                  // interval is woken before it is timed, not while
  time_stability_limits limits;
  std::function<void(const watch_progress&)> progress;  // after each tick, on the calling thread
};
inline constexpr double kMaxWatchSeconds = 7 * 24 * 3600.0;
inline constexpr double kMaxWatchSamples = 1e6;  // per CPU and kind: duration / interval + 1

// One (CPU, relax kind) over the watch.
struct watch_series {
  int cpu = -1;
  relax_kind kind = relax_kind::none;
  std::uint32_t relaxes_per_trial = 0;  // fixed by the first sample, so every sample is alike
  std::vector<relax_time_sample> samples;
  relax_time_summary summary;
  std::string error;  // non-empty: pinning to this CPU failed (and when); samples stop there
};

// The verdict per relax kind over every CPU watched (a thread may run on any of them).
struct watch_conclusion {
  relax_kind kind = relax_kind::none;
  stability status = stability::insufficient;    // drifting if any CPU drifted; stable if all were
  double ns_min = 0, ns_median = 0, ns_max = 0;  // over all samples of this kind
  std::string meaning;                           // relax_drift_meaning()
};

struct watch_result {
  std::string tool;     // "spinwise <version>" (kVersion)
  std::string created;  // ISO 8601 UTC
  machine_info machine;
  watch_options settings;            // as run (progress dropped), cpus and kinds filled in
  std::vector<watch_series> series;  // by CPU, then kind
  std::vector<watch_conclusion> conclusions;
  double elapsed_s = 0;

  // Every series has at least min_samples samples, no error, and is stable.
  bool all_stable() const noexcept;
};

// "" when `opt` can run here, else why not: the bounds above, a CPU outside this thread's mask, a
// relax kind this CPU cannot issue.
std::string check_watch_options(const watch_options& opt);

// Samples every (CPU, kind) each interval_ms for duration_s: tick k starts at k x interval (or
// as soon as the previous tick ends, when it ran late), pins to each CPU in turn and measures
// each kind; the caller's affinity mask is put back. False, with the reason, for bad options.
bool watch_relax_cost(const watch_options& opt, watch_result& out, std::string* error);

// The JSON document: {"format": kWatchFormat, "version": kWatchFormatVersion, "tool", "created",
// "machine": {as in a profile}, "settings": {...}, "elapsed_s", "cpus": [{"cpu", "relax",
// "relaxes_per_trial", "samples": [[t_ms, ns], ...], "summary": {"samples", "ns": {"min", "p10",
// "median", "p90", "max"}, "ticks": {"min", "median", "max"}, "spread", "central_spread",
// "status"}, "error"?}], "conclusions": [{"relax", "status", "ns_min", "ns_median", "ns_max",
// "meaning"}]}.
inline constexpr const char* kWatchFormat = "spinwise.calibrate.watch";
inline constexpr int kWatchFormatVersion = 1;
std::string watch_to_json(const watch_result& r, int indent = 2);

}  // namespace spinwise
