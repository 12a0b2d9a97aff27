#pragma once
// The work that stands for a critical section and for the work outside it: a calibrated loop of
// dependent arithmetic, so "cs_ns=100" means 100 ns of work on this CPU, plus the rw scenario's
// per-thread coin for read vs write.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spinwise/arch.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise::bench {

// One step of a 64-bit LCG per iteration: a multiply and an add on a loop-carried dependency, so
// the CPU cannot overlap iterations (a loop of independent work would run several per cycle and
// make "100 ns" mean less on a wider core). DoNotOptimize keeps the compiler from folding it.
inline std::uint64_t dependent_work(std::uint64_t x, std::uint64_t iterations) noexcept {
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
  }
  return x;
}

// Nanoseconds per dependent_work iteration on this CPU: the fastest of 7 trials of 2^18
// iterations (interruptions only ever add time). Set once, at start-up, before any benchmark.
inline double& work_ns_per_iteration() noexcept {
  static double v = 0;
  return v;
}

inline double calibrate_work() {
  constexpr std::uint32_t kIterations = 1u << 18;
  std::uint64_t x = 1;
  auto trial = [&x] { x = dependent_work(x, kIterations); };
  trial();  // warm-up: clock ramp, page faults
  const std::vector<double> ticks =
      runtime::time_trials(7, kIterations, runtime::counter_read_overhead(), trial);
  benchmark::DoNotOptimize(x);
  const double best = runtime::ticks_to_ns(runtime::summarize_order(ticks).min, counter_frequency());
  work_ns_per_iteration() = std::max(best, 0.01);
  return work_ns_per_iteration();
}

inline std::uint64_t iterations_for_ns(double ns) noexcept {
  if (!(ns > 0)) return 0;
  return static_cast<std::uint64_t>(ns / work_ns_per_iteration() + 0.5);
}

// xorshift64: the rw benchmark's per-thread coin for read vs write. No shared state.
struct xorshift64 {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

}  // namespace spinwise::bench
