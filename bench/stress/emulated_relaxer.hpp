#pragma once
// The relax instruction of another CPU generation, issued on this one.
//
// The incident this tool replays is a spin budget written in PAUSE counts whose PAUSE got 14x
// longer: InnoDB waits random[0, innodb_spin_wait_delay) x 50 PAUSEs between polls (MySQL Reference
// Manual, "Configuring Spin Lock Polling"), and Intel's Optimization Reference Manual gives PAUSE
// "about 10 cycles" before Skylake and "as many as 140 cycles" from Skylake on ("Pause Latency in
// Skylake Client Microarchitecture"). To replay it on whatever CPU we have, `emulated_relaxer` is
// the Relax parameter of the stress locks' wait policies: its relax_n(n) waits as long as n
// relaxes of the emulated CPU would. An emulated relax
//   - shorter than this CPU's own relax is a calibrated loop of dependent instructions
//     (cpu_relax_n(relax_kind::none, k): a counter chain with a compiler barrier, about one
//     iteration per core cycle, from arch/);
//   - longer is this CPU's relaxes plus that loop for the remainder;
//   - `native` is this CPU's relax itself.
// The relaxer only emulates: the time spent in its delays is measured by the locks' statistics
// policy (the wait meter times every round), and the stress policy wrapper counts the rounds
// (counted_policy.hpp), so the share of CPU spent spinning is measured, not estimated (the
// incident's 28% in ut_delay was found with perf top; we have no perf counters on the dev
// machines).
//
// --relax-drift makes the emulated relax's cost wander over the run (relax_drift.hpp). The level
// is looked up at a counter reading: once per spin round, at the reading the stress policy
// wrapper takes anyway (begin_round), and held for the round's relax_n() calls, so a clock-bounded
// delay's short chunks cost no extra counter read; a relax_n() outside a round reads the counter
// itself and pays for that read out of its own emulated time. A level change lands at the next
// round (rounds last ~0.1 to ~40 us; levels 2 to 5 ms). relax_ns() keeps the nominal length, as a
// calibration table would.
//
// Configure, start and stop the drift only while no thread relaxes (between runs): the plan is
// read without ordering.

#include <cstdint>
#include <string>
#include <string_view>

#include "relax_drift.hpp"
#include "spinwise/arch.hpp"

namespace spinwise::stress {

enum class cpu_model : std::uint8_t { native, broadwell, skylake, custom };

// One PAUSE at 3 GHz on the generations the incident spans: "about 10 cycles" before Skylake, "as
// many as 140 cycles" from Skylake on (Intel 64 and IA-32 Architectures Optimization Reference
// Manual).
inline constexpr double kBroadwellRelaxNs = 10.0 / 3.0;
inline constexpr double kSkylakeRelaxNs = 140.0 / 3.0;

std::string_view to_string(cpu_model m) noexcept;
bool parse_cpu_model(std::string_view s, cpu_model& out) noexcept;

// What this CPU offers the emulation: measured once per process (a few milliseconds).
struct relax_calibration {
  relax_kind kind = relax_kind::none;  // this CPU's relax (the active kind)
  double native_relax_ns = 0;          // one relax of that kind, median of 31 trials
  double loop_iter_ns = 0;             // one iteration of the dependent loop, median
  double counter_hz = 0;               // read_counter() ticks per second
  double counter_read_ns = 0;          // one read_counter(): a drifted relax_n() outside a round pays it
};
const relax_calibration& calibration();

// The work loop's figure for a run (workload_config::calibrate_ms), set while no thread relaxes or
// works (between runs). 0: the process's first calibration, a median of 15 trials within 0.1 ms
// at its start: one snapshot of the machine, which a busy sibling thread or another job can make
// 1.5x slower than the next process's, and then every sub-query of the process does less work.
// M > 0: trials back to back for M ms, the fastest (the loop's cost when nothing slows it),
// measured at the first run that asks and reused, so the runs of a process do the same work.
// Returns the ns per iteration now in use: busy_work_ns() and the plans made from here on use it.
double use_loop_calibration(double calibrate_ms);

// How relax_n(n) spends its time.
struct relax_plan {
  cpu_model model = cpu_model::native;
  double target_ns = 0;                  // one emulated relax
  std::uint32_t native_per_relax = 0;    // this CPU's relaxes per emulated relax (0 when shorter)
  std::uint64_t loop_per_relax_q10 = 0;  // dependent-loop iterations per emulated relax, x1024
  double expected_ticks_per_relax = 0;
};

// The plan for a model (custom: `relax_ns`; native: this CPU's relax). Throws
// std::invalid_argument for a non-positive or absurd relax_ns.
relax_plan make_plan(cpu_model m, double relax_ns = 0);

class emulated_relaxer {
 public:
  // Waits as long as n relaxes of the emulated CPU.
  static void relax_n(std::uint32_t n) noexcept;
  static void relax() noexcept { relax_n(1); }
  // One emulated relax in ns: the time policies convert their ns budgets with it, so an
  // emulated Skylake PAUSE is counted at its own length, not this CPU's.
  static double relax_ns() noexcept;

  static void configure(const relax_plan& plan) noexcept;
  static relax_plan plan() noexcept;
  // Measures what the plan achieves: ns per emulated relax over `n` relaxes (not accounted).
  // Call it without drift: it reports the nominal length.
  static double measure_achieved_ns(std::uint32_t n = 20000);

  // From counter reading `start_ticks` (the run's start) on, a relax costs the pattern's level
  // at that moment x the plan's length. A pattern of factor 1 is no drift. Starting again
  // restarts every thread's place in the pattern.
  static void start_drift(const drift_pattern& p, std::uint64_t start_ticks) noexcept;
  static void stop_drift() noexcept;
  // The level relax_n() on the calling thread uses at counter reading `now` (1 without drift).
  static double drift_level(std::uint64_t now) noexcept;
  // A spin round begins on the calling thread at counter reading `now`: its relax_n() calls use
  // the level at `now` until end_round(). No-ops without drift.
  static void begin_round(std::uint64_t now) noexcept;
  static void end_round() noexcept;
};

// Spends about `ns` nanoseconds on the dependent loop: the workload's own CPU work.
void busy_work_ns(double ns) noexcept;

}  // namespace spinwise::stress
