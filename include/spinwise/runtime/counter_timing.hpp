#pragma once
// Timing code with the cycle counter (spinwise::runtime): the cost of reading the counter, one
// trial in counter ticks per operation, and ticks as nanoseconds.
//
// Internal to spinwise's own tools (spinwise-calibrate, spinwise-bench, spinwise-stress) and the
// runtime's measurements; installed with the runtime, with no stability promise to engines.
// measure_relax_cost() (relax_cost.hpp) is the relax measurement built on these; any other loop
// a tool times (dependent work, an emulated relax) uses time_trials().

#include <cstdint>
#include <utility>
#include <vector>

#include "spinwise/arch.hpp"

namespace spinwise::runtime {

// Two back-to-back read_counter() calls, in counter ticks: the minimum over `pairs` pairs
// (interruptions only ever add). Every timed trial contains it once, so trials subtract it.
double counter_read_overhead(unsigned pairs = 64) noexcept;

// One trial of `ops` operations timed from counter reading c0 to c1, in counter ticks per
// operation (ops > 0): the reads' own cost (`overhead_ticks`) taken off, never below zero.
double ticks_per_op(std::uint64_t c0, std::uint64_t c1, double overhead_ticks, std::uint32_t ops) noexcept;

// Counter ticks as nanoseconds at a counter of `counter_hz` (normally counter_frequency()): the
// one conversion of every ns figure spinwise measures.
double ticks_to_ns(double ticks, std::uint64_t counter_hz) noexcept;

// One trial: `body()` performs `ops` operations between two counter reads; ticks per operation
// as ticks_per_op() gives them.
template <class Body>
double time_trial(std::uint32_t ops, double overhead_ticks, Body&& body) {
  const std::uint64_t c0 = read_counter();
  std::forward<Body>(body)();
  const std::uint64_t c1 = read_counter();
  return ticks_per_op(c0, c1, overhead_ticks, ops);
}

// `trials` such trials, in trial order (summarize them with order_stats.hpp or summarize()).
template <class Body>
std::vector<double> time_trials(std::uint32_t trials, std::uint32_t ops, double overhead_ticks, Body&& body) {
  std::vector<double> out;
  out.reserve(trials);
  for (std::uint32_t t = 0; t < trials; ++t) out.push_back(time_trial(ops, overhead_ticks, body));
  return out;
}

}  // namespace spinwise::runtime
