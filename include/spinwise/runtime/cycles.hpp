#pragma once
// Core cycles: what a relax costs in the unit the CPU vendors document (spinwise::runtime).
//
// The cycle counter spinwise reads (TSC on x86, CNTVCT_EL0 on aarch64) ticks at a fixed rate that
// is not the core clock: on the reference Emerald Rapids VM the TSC runs at 2.3 GHz and the core at
// ~3.0 GHz. Core cycles come from one of two sources, and every figure says which:
//   perf_event   PERF_COUNT_HW_CPU_CYCLES for this thread, user mode only (exact; needs a PMU
//                the kernel exposes: most VMs, containers and our CI machines have none);
//   estimate     the core clock measured with a loop-carried chain of integer additions, one
//                cycle each on every x86-64 and aarch64 core, timed with the counter; cycles =
//                counter ticks / (counter ticks per core cycle).
// The estimate assumes a latency-bound chain; a second chain with two operations per step must
// take twice as long, and that ratio (chain_check, ~2.0) is recorded so a compiler that broke the
// chain, or an emulator, is visible in the result.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spinwise/runtime/sample_summary.hpp"

namespace spinwise {

// Where core-cycle figures come from. automatic: perf_event when it opens, else the estimate.
enum class cycles_source : std::uint8_t { automatic = 0, perf = 1, estimate = 2 };

std::string_view to_string(cycles_source s) noexcept;
bool parse_cycles_source(std::string_view text, cycles_source& out) noexcept;

// PERF_COUNT_HW_CPU_CYCLES of the calling thread in user mode. Move-only; closes on destruction.
class perf_cycle_counter {
 public:
  perf_cycle_counter() = default;
  perf_cycle_counter(const perf_cycle_counter&) = delete;
  perf_cycle_counter& operator=(const perf_cycle_counter&) = delete;
  perf_cycle_counter(perf_cycle_counter&& other) noexcept;
  perf_cycle_counter& operator=(perf_cycle_counter&& other) noexcept;
  ~perf_cycle_counter();

  // Opens the counter for the calling thread (whatever CPU it runs on). False, with the reason in
  // error(), when perf_event_open fails or the counter does not count (no PMU, paranoid setting,
  // seccomp, or SPINWISE_NO_PERF=1 in the environment, which forces the fallback on purpose).
  bool open();
  bool valid() const noexcept { return fd_ >= 0; }
  const std::string& error() const noexcept { return error_; }
  // Cycles counted so far; false if the read fails or the counter was multiplexed off the PMU
  // (then the figure would be scaled, not counted).
  bool read(std::uint64_t& cycles) const noexcept;

 private:
  int fd_ = -1;
  std::string error_;
};

// The core clock of the calling CPU, estimated with the dependent add chain.
struct core_clock_estimate {
  double hz = 0;                 // core cycles per second
  double ticks_per_cycle = 0;    // counter ticks per core cycle (TSC 2.3 GHz / core 3.0 GHz = 0.77)
  sample_summary ticks_per_add;  // the trials behind it, in counter ticks per add
  double chain_check = 0;        // time of a 2-op-per-step chain / 1-op chain: ~2.0 when latency bound
  bool plausible = false;        // chain_check within [1.6, 2.4] and hz within [100 MHz, 10 GHz]
};

// Times `trials` chains of `adds_per_trial` dependent additions on the calling CPU
// (about 1.5 us each at 3 GHz with the defaults; 32 trials take ~0.1 ms with the check).
core_clock_estimate estimate_core_clock(std::uint32_t trials = 31, std::uint32_t adds_per_trial = 4096);

namespace detail {

// The estimate made of its trials (apart so that its verdict can be tested on made-up trials):
// counter ticks per step of the one-operation chain and of the two-operation chain, one of each
// per trial, at a counter of `counter_hz`.
core_clock_estimate core_clock_from_trials(const std::vector<double>& ticks_per_add,
                                           const std::vector<double>& ticks_per_step2,
                                           std::uint64_t counter_hz);

}  // namespace detail

}  // namespace spinwise
