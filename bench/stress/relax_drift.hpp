#pragma once
// A relax whose cost wanders: the pattern behind --relax-drift.
//
// A calibration table gives one cost per relax, but the cost moves under a running wait: a shared
// host's PAUSE wandered between 6 and 10 ns from one half second to the next, and a thread moved
// from a P-core to an E-core sees it change about 3x (detail/clock_bounded_delay.hpp). --relax-drift F
// replays that on the emulated CPU: time since the run started is cut into segments of 2 to 5 ms,
// and in each the emulated relax costs level x its nominal length, the level uniform in [1, F].
// The time policies still convert at the nominal length (emulated_relaxer::relax_ns(), read once
// per wait, as a profile's table would be), so only their clock bound keeps their delays right;
// innodb_policy, an instruction count, stretches with the level.
//
// The pattern is a pure function of (seed, F, time): segment i's length and level are hashed
// from (seed, i), so the same seed gives the same sequence on every thread and every run, and
// every thread sees the same level at the same moment. Looking a time up walks the segments from
// the cursor's, so a thread whose time only moves forward pays one hash per segment it crosses.

#include <cstdint>

namespace spinwise::stress {

// The largest --relax-drift: 100x covers the 14x PAUSE change of the incident with room to spare,
// and keeps a drifted relax of the longest --relax-ns (100 us) under 10 ms.
inline constexpr double kMaxRelaxDrift = 100.0;
inline constexpr double kDriftMinSegmentNs = 2e6;  // a new level every 2..5 ms
inline constexpr double kDriftMaxSegmentNs = 5e6;

struct drift_pattern {
  double factor = 1.0;     // F >= 1; 1: no drift (every level is 1)
  std::uint64_t seed = 0;  // drift_seed(run seed)
};

// The pattern's seed for a run's --seed, apart from the spin jitter's and the workload's streams.
std::uint64_t drift_seed(std::uint64_t run_seed) noexcept;

// One segment of a pattern: [start_ns, end_ns) after the run's start, relaxes at `level` x nominal.
struct drift_segment {
  std::uint64_t index = 0;
  double start_ns = 0, end_ns = 0;
  double level = 1.0;
};

// Segment `i` on its own (its start is the sum of the segments before it: use a cursor).
double drift_segment_length_ns(const drift_pattern& p, std::uint64_t i) noexcept;
double drift_segment_level(const drift_pattern& p, std::uint64_t i) noexcept;

// Where a thread is in a pattern. Constant-initializable, so a thread_local one needs no guard.
class drift_cursor {
 public:
  constexpr drift_cursor() noexcept = default;
  explicit drift_cursor(const drift_pattern& p) noexcept;

  // The segment that holds t_ns (negative times are 0): walks forward from the current segment,
  // or from the first for a time before it (a counter read on another CPU can step back).
  const drift_segment& at(double t_ns) noexcept;
  const drift_pattern& pattern() const noexcept { return p_; }

 private:
  drift_pattern p_{};
  drift_segment s_{0, 0, 0, 1.0};  // end 0: not placed yet (a default cursor)
};

// The level at t_ns after the run's start (a fresh cursor: for tests and reports).
double drift_level_at(const drift_pattern& p, double t_ns) noexcept;

// The time-weighted mean level over [from_ns, to_ns): what F meant for a run's window.
double drift_mean_level(const drift_pattern& p, double from_ns, double to_ns) noexcept;

}  // namespace spinwise::stress
