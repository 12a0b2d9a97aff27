#pragma once
// The relax instruction of another CPU generation, issued on this one, and timed.
//
// The incident (../shared/DESIGN.md) is a spin budget written in PAUSE counts whose PAUSE got 14x
// longer (about 10 cycles before Skylake, about 140 from Skylake on). To replay it on whatever
// CPU we have, `emulated_relaxer` is the Relax parameter of the stress locks' wait policies: its
// relax_n(n) waits as long as n relaxes of the emulated CPU would. An emulated relax
//   - shorter than this CPU's own relax is a calibrated loop of dependent instructions
//     (cpu_relax_n(relax_kind::none, k): a counter chain with a compiler barrier, about one
//     iteration per core cycle, from arch/);
//   - longer is this CPU's relaxes plus that loop for the remainder;
//   - `native` is this CPU's relax itself.
// Every delay loop times itself with the cycle counter into per-thread accumulators, so the
// share of CPU spent in spin delays is measured, not estimated (the incident's 28% in ut_delay
// was found with perf top; we have no perf counters on the dev machines).
//
// Timing costs two counter reads per relax_n call (about 20 ns on our VM): noise against an
// InnoDB round (50 relaxes per unit), but it triples a no_backoff poll (one relax per call), so
// read no_backoff's spin figures as an upper bound.
//
// A delay loop that took far longer than its instructions can (more than twice the expected
// time plus 50 us) was preempted in the middle: it is counted at its expected length, and the
// count of such loops is reported, so a descheduled spinner does not inflate the spin share.
//
// Configure only while no thread relaxes (between runs): the plan is read without ordering.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "spinwise/arch.hpp"

namespace spinwise::stress {

enum class cpu_model : std::uint8_t { native, broadwell, skylake, custom };

// Cycles of one PAUSE at 3 GHz on the generations the incident spans (perf.md §1.1: the Intel
// manual's "about 10 cycles" before Skylake, "as many as 140 cycles" from Skylake on).
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
};
const relax_calibration& calibration();

// How relax_n(n) spends its time.
struct relax_plan {
  cpu_model model = cpu_model::native;
  double target_ns = 0;              // one emulated relax
  std::uint32_t native_per_relax = 0;  // this CPU's relaxes per emulated relax (0 when shorter)
  std::uint64_t loop_per_relax_q10 = 0;  // dependent-loop iterations per emulated relax, x1024
  double expected_ticks_per_relax = 0;
};

// The plan for a model (custom: `relax_ns`; native: this CPU's relax). Throws
// std::invalid_argument for a non-positive or absurd relax_ns.
relax_plan make_plan(cpu_model m, double relax_ns = 0);

// Running totals of every delay loop since the process started, summed over threads.
struct spin_totals {
  std::uint64_t calls = 0;       // relax_n calls with n > 0 (InnoDB: spin rounds that delayed)
  std::uint64_t zero_calls = 0;  // relax_n(0): rounds whose random delay came out 0
  std::uint64_t relaxes = 0;     // emulated relaxes issued
  std::uint64_t ticks = 0;       // counter ticks inside the delay loops
  std::uint64_t clipped = 0;     // loops counted at their expected length (preempted)
  std::uint64_t episodes = 0;    // spin episodes begun (a waiter built: the lock was busy)
  std::uint64_t budgets_spent = 0;  // episodes whose spin_loops rounds ran out (then yield / park)
};
spin_totals spin_snapshot();
double ticks_to_ns(std::uint64_t ticks);

class emulated_relaxer {
 public:
  static void relax_n(std::uint32_t n) noexcept;
  static void relax() noexcept { relax_n(1); }
  // One emulated relax in ns: the time policies convert their ns budgets with it, so an
  // emulated Skylake PAUSE is counted at its own length, not this CPU's.
  static double relax_ns() noexcept;

  static void configure(const relax_plan& plan) noexcept;
  static relax_plan plan() noexcept;
  // Measures what the plan achieves: ns per emulated relax over `n` relaxes (not accounted).
  static double measure_achieved_ns(std::uint32_t n = 20000);
};

// Hooks for the stress locks' counting policy (lock_catalog.cpp): per-thread, no shared line.
void note_spin_episode() noexcept;
void note_budget_spent() noexcept;

// Spends about `ns` nanoseconds on the dependent loop: the workload's own CPU work.
void busy_work_ns(double ns) noexcept;

}  // namespace spinwise::stress
