// What a calibration means for a real engine's spin settings: the lines an operator pastes into
// my.cnf for MySQL 8.0.16+ or MariaDB 10.6/10.11, each with the arithmetic behind it. The engines'
// spin code, in our words, is in docs/engines.md; this header is the arithmetic.
//
// The aim: the spin time per round that the engine's defaults gave on the CPUs they were tuned on
// (PAUSE ~10 cycles, before Skylake: 50 PAUSEs ~ 200 ns per delay unit, the library's own
// delay_unit_ns). Where the engine cannot express that time exactly, the advice takes the setting
// nearest in ratio (the smaller of over/target and target/under), and says which way it rounded.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "spinwise/runtime/calibration.hpp"
#include "spinwise/runtime/run_context.hpp"

namespace spinwise {

enum class engine { mysql, mariadb };

// MariaDB's my_cpu_init() (mysys/my_cpu.c, 10.6 and 10.11): two runs of 16 PAUSEs timed with
// RDTSC; when both take more than 480 ticks (30 per PAUSE), my_cpu_relax_multiplier is 100,
// else 200. One delay unit is my_cpu_relax_multiplier / 4 PAUSEs (integer division).
inline constexpr double kMariadbSlowPauseTicks = 30.0;
inline constexpr unsigned kMariadbFastMultiplier = 200;
inline constexpr unsigned kMariadbSlowMultiplier = 100;
// Within this share of the threshold, the engine's own 32-PAUSE timing may land either side.
inline constexpr double kMariadbThresholdBand = 0.10;

// The defaults the advice starts from.
inline constexpr unsigned kMysqlDefaultSpinWaitDelay = 6;    // MySQL: innodb_spin_wait_delay
inline constexpr unsigned kMariadbDefaultSpinWaitDelay = 4;  // MariaDB 10.6+: innodb_spin_wait_delay
inline constexpr unsigned kDefaultSyncSpinLoops = 30;        // both: innodb_sync_spin_loops
inline constexpr unsigned kMysqlMaxSpinWaitDelay = 1000;
inline constexpr unsigned kMariadbMaxSpinWaitDelay = 6000;

// On a host of this many CPUs or fewer the rule cannot tell (engine_advice::cannot_tell). It
// restores the spin time per round the defaults were tuned for on many-core servers, where a
// waiter that spins holds one CPU of many; on a few CPUs it holds one of the few the threads it
// waits for need, and whether any spinning pays depends on the load: the project's sweeps of a
// real MariaDB (sysbench oltp_read_write) on 2-vCPU guests put the best innodb_spin_wait_delay at
// 0, 1, 2 and 6, and three sweeps of one Zen 5 guest at 0, 2 and 0 (bench/results/tune-zen5*).
// The line at 4 is a judgment: every kept sweep is from 2 CPUs, none from 3-16.
// bench/engines/mariadb/analyze.py rule-check uses the same value.
inline constexpr int kAdviceFewCpus = 4;

struct engine_advice_input {
  engine which = engine::mysql;
  std::string version;     // as given ("" = the newest covered: MySQL 8.0.30+, MariaDB 10.11)
  std::string arch;        // machine_info::arch: only "x86_64" is covered
  double relax_ns = 0;     // PAUSE, median over the machine's CPUs
  double relax_ticks = 0;  // the same in counter (TSC) ticks, what MariaDB's own timing sees
  // Where the median cost may be: the lowest and highest end of the CPUs' 95% intervals of their
  // median (sample_summary::median_lo/hi; 0: unknown). A noisy measurement still gives advice when
  // every cost in that range gives the same settings. A tail of slow trials (a loaded host) widens
  // the trials' p10..p90 far more than this.
  double relax_ns_lo = 0, relax_ns_hi = 0, relax_ticks_lo = 0, relax_ticks_hi = 0;
  // Where single trials fell: the lowest p10 and highest p90 over the CPUs, in ns (reported only).
  double trial_ns_p10 = 0, trial_ns_p90 = 0;
  // The range above is p10..p90 of single trials instead: a profile from before the median's
  // interval was kept (wider, so it refuses where a new measurement might not).
  bool range_from_trials = false;
  bool stable = false;                         // every CPU's PAUSE measurement was stable
  std::string unstable_why;                    // which CPUs were not, when not
  double unit_ns = kDefaultTargetNs;           // the target delay unit (--target-ns)
  std::optional<unsigned> mariadb_multiplier;  // the engine's my_cpu_relax_multiplier, when known
  int cpus = 0;  // CPUs of the host the engine runs on (machine_info::cpu_count; 0: not known)
};

struct engine_setting {
  std::string name;  // "innodb_spin_wait_delay"
  unsigned value = 0;
  unsigned engine_default = 0;
  std::vector<std::string> comment;  // the arithmetic, one line each
};

struct engine_advice {
  engine which = engine::mysql;
  std::string engine_name;  // "MySQL 8.0.30+", "MariaDB 10.11"
  std::string section;      // "mysqld" or "mariadbd"
  double relax_ns = 0, relax_ticks = 0;
  double relax_ns_lo = 0, relax_ns_hi = 0;    // the median's 95% interval (0: not known)
  bool range_from_trials = false;             // ... or, from an older profile, p10..p90 of trials
  double trial_ns_p10 = 0, trial_ns_p90 = 0;  // where single trials fell (0: not known)
  bool stable = false;
  std::string measured;           // how the cost was measured, when more than once (the tool's note)
  double unit_ns = 0;             // the target delay unit
  double target_round_ns = 0;     // what the default round meant on the CPUs it was tuned on
  double default_round_ns = 0;    // what the default round takes on this machine
  double advised_round_ns = 0;    // what the advised settings give here
  unsigned relax_multiplier = 0;  // MariaDB: my_cpu_relax_multiplier assumed; MySQL: 0
  std::vector<engine_setting> settings;
  std::vector<std::string> warnings;
  int cpus = 0;             // the host's CPUs, as given (0: not known)
  std::string cannot_tell;  // why the rule cannot tell on this host ("": it can): kAdviceFewCpus
};

enum class advice_status {
  ok,
  usage,      // an engine, version or architecture the advice does not cover: exit 2
  uncertain,  // no stable PAUSE measurement: exit 3
};

struct advice_result {
  advice_status status = advice_status::ok;
  std::string message;                   // why, when not ok
  std::vector<std::string> suggestions;  // what to do instead, when uncertain
  engine_advice advice;                  // when uncertain: the cost and its range, no settings
};

// "mysql" or "mariadb"; false for anything else.
bool parse_engine(const std::string& name, engine& out);
// The advice from the inputs (pure: no measurement).
advice_result advise_engine(const engine_advice_input& in);
// "" when advise_engine would take the request (engine version, architecture, unit, multiplier;
// the measurement fields are not looked at), else the usage error it would give: to refuse a bad
// request before anything is measured.
std::string advice_request_error(const engine_advice_input& in);
// The input from a calibration: PAUSE over every measured CPU.
engine_advice_input advice_input_from(const calibration_result& r, engine which, const std::string& version);
// The snippet: "[section]" and "name = value" lines, each followed by its "# ..." comment lines.
std::string format_advice_text(const engine_advice& a, const calibration_result* r = nullptr);
// The same as data. With `r`, relax.cpus says how many CPUs the PAUSE median is over; with `run`,
// "run" is the run context of the measurement (run_context.hpp: the keys spinwise-stress and
// spinwise-bench write).
std::string format_advice_json(const engine_advice& a, const calibration_result* r = nullptr,
                               const run_context* run = nullptr);
// A refusal as a JSON document ("advice": null, "refused": why, the measurement, the suggestions):
// what --format json prints on stdout when there is no advice.
std::string format_refusal_json(const advice_result& refused, const calibration_result* r = nullptr,
                                const run_context* run = nullptr);

// Advice on a busy host: the advice from `first`, and while it is open within the measurement's
// interval (advice_status::uncertain), a new measurement with three times the trials, `retries`
// times at most and never past `max_trials`. `measure(trials, out, why)` takes one measurement
// (false: it failed, why said); `advise(r)` gives the advice from one. When more than one
// measurement was taken, advice.measured (and an uncertain advice's message) says with how many
// trials each; a core-to-core figure of the first is kept in the last.
struct advice_rounds {
  advice_result advice;
  calibration_result result;          // the measurement the advice is from (the last)
  std::vector<std::uint32_t> trials;  // the trials a CPU of each measurement, in order
  bool failed = false;                // a measurement failed: `why`, and no advice
  std::string why;
};
advice_rounds advise_measuring_again(
    calibration_result first, const std::function<advice_result(const calibration_result&)>& advise,
    const std::function<bool(std::uint32_t trials, calibration_result& out, std::string* why)>& measure,
    int retries = 2, std::uint32_t max_trials = kMaxCalibrationTrials);

// MariaDB's multiplier for a PAUSE of `ticks` counter ticks (the start-up rule above).
unsigned mariadb_relax_multiplier(double ticks);
// The integer in [lo, hi] whose value * per gives the time nearest `target` in ratio; ties go up.
unsigned nearest_in_ratio(double target, double per, unsigned lo, unsigned hi);

}  // namespace spinwise
