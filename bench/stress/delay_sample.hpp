#pragma once
// How long the stress locks' spin delays really were: per round, the achieved length against the
// requested one (time policies), and the achieved length itself (every policy).
//
// A worker points the thread's sink at its own sample for the sub-queries it measures (engine.cpp);
// the policy wrapper (counted_policy.hpp) and the time policies' timed rules (timed_rules.hpp)
// record into it, so a round costs nothing more outside the window. Two figures:
//   - accuracy, time and exp_backoff only: actual / requested for each round that asked for a
//     delay and ran its course, actual timed with the cycle counter around the rule's
//     relax_for_ns (the two reads' own cost taken off), by requested length (below 200 ns,
//     200 ns to 20 us, above). A round that the lock's until() ended early (a policy that hands
//     off promptly: the lock came free) measures the lock, not the clock: it is counted apart
//     (accuracy_early), so that the clock-bounded delays' accuracy under drift reads on its own;
//   - round length, every policy: the achieved ns of each round that issued relaxes, and that
//     length per relax issued (what one emulated relax really cost; the drift shows there).
// A round preempted by the library's rule (more than twice its expected time plus 50 us:
// detail::wait_meter::clip_preempted) is counted apart and left out of both: it measures the
// scheduler, not the delay. Expected: the requested ns (accuracy); relaxes x the nominal relax
// (round length).

#include <algorithm>
#include <cstdint>

#include "histogram.hpp"  // bench/common: the tools' histograms
#include "lock_catalog.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/lock_stats.hpp"

namespace spinwise::stress {

struct delay_sample {
  // Bands of requested length: [0, 200 ns), [200 ns, 20 us], above. 200 ns is the time policy's
  // default unit; below it a delay is a few relaxes and one check interval (100 ns) is a large
  // share of it.
  static constexpr double kBandEdgeNs[2] = {200.0, 20'000.0};
  static constexpr int kBands = 3;

  // Set before the threads start (engine.cpp).
  double hz = 0;                   // counter ticks per second
  double read_overhead_ticks = 0;  // one pair of counter reads, taken off every timed delay

  // time policies
  bench::ratio_histogram accuracy[kBands];  // actual / requested
  std::uint64_t accuracy_preempted = 0;
  std::uint64_t accuracy_early = 0;  // rounds ended early by the lock's until(): not in accuracy[]
  double requested_min_ns = 0, requested_max_ns = 0;

  // every policy
  bench::latency_histogram round_ticks;  // achieved length of a round that issued relaxes
  bench::ratio_histogram relax_stretch;  // that length / (relaxes x nominal relax)
  std::uint64_t rounds_preempted = 0;

  static int band(double requested_ns) noexcept {
    return requested_ns < kBandEdgeNs[0] ? 0 : requested_ns <= kBandEdgeNs[1] ? 1 : 2;
  }

  // One delay of a time policy: `requested_ns`, timed at `took` ticks (reads included); `early`:
  // the lock's until() ended it.
  void record_request(double requested_ns, std::uint64_t took, bool early = false) noexcept {
    if (early) {
      ++accuracy_early;
      return;
    }
    const double want = requested_ns * hz * 1e-9;
    if (preempted(took, want)) {
      ++accuracy_preempted;
      return;
    }
    const double got = std::max(0.0, static_cast<double>(took) - read_overhead_ticks);
    const bool first = accuracy[0].count() + accuracy[1].count() + accuracy[2].count() == 0;
    requested_min_ns = first ? requested_ns : std::min(requested_min_ns, requested_ns);
    requested_max_ns = first ? requested_ns : std::max(requested_max_ns, requested_ns);
    accuracy[band(requested_ns)].record(got / want);
  }

  // One round that issued `relaxes`, expected at `ticks_per_relax` each, timed at `took` ticks.
  void record_round(std::uint64_t took, std::uint64_t relaxes, double ticks_per_relax) noexcept {
    const double expected = static_cast<double>(relaxes) * ticks_per_relax;
    if (preempted(took, expected)) {
      ++rounds_preempted;
      return;
    }
    const double got = std::max(0.0, static_cast<double>(took) - read_overhead_ticks);
    round_ticks.record(static_cast<std::uint64_t>(got));
    relax_stretch.record(got / expected);
  }

  void merge(const delay_sample& o) noexcept;

 private:
  // The library's rule, as the lock statistics apply it.
  bool preempted(std::uint64_t took, double expected_ticks) const noexcept {
    using meter = detail::wait_meter<class_stats<stress_latch_class>>;
    return meter::clip_preempted(took, 1, expected_ticks, hz) != took;
  }
};

// The sample the calling thread's delays go to; nullptr outside a measured sub-query.
// Constant-initialized, so an access is one TLS-relative load with no guard.
inline thread_local delay_sample* t_delay_sink = nullptr;

inline void delay_sample::merge(const delay_sample& o) noexcept {
  const bool mine = accuracy[0].count() + accuracy[1].count() + accuracy[2].count() > 0;
  const bool theirs = o.accuracy[0].count() + o.accuracy[1].count() + o.accuracy[2].count() > 0;
  if (theirs) {
    requested_min_ns = mine ? std::min(requested_min_ns, o.requested_min_ns) : o.requested_min_ns;
    requested_max_ns = mine ? std::max(requested_max_ns, o.requested_max_ns) : o.requested_max_ns;
  }
  for (int b = 0; b < kBands; ++b) accuracy[b].merge(o.accuracy[b]);
  accuracy_preempted += o.accuracy_preempted;
  accuracy_early += o.accuracy_early;
  round_ticks.merge(o.round_ticks);
  relax_stretch.merge(o.relax_stretch);
  rounds_preempted += o.rounds_preempted;
  if (hz == 0) {
    hz = o.hz;
    read_overhead_ticks = o.read_overhead_ticks;
  }
}

}  // namespace spinwise::stress
