#include "relax_drift.hpp"

#include <algorithm>

#include "spinwise/detail/jitter.hpp"

namespace spinwise::stress {

namespace {

// Uniform in [0, 1) from 53 bits of a hash.
double unit(std::uint64_t h) noexcept { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Two independent hashes per segment: its length and its level.
std::uint64_t segment_hash(const drift_pattern& p, std::uint64_t i, std::uint64_t which) noexcept {
  return detail::mix64(p.seed ^ detail::mix64((i + 1) * detail::kGoldenGamma + which));
}

}  // namespace

std::uint64_t drift_seed(std::uint64_t run_seed) noexcept {
  return detail::mix64(run_seed ^ 0x64726966742d7278ull);  // "drift-rx": another stream than the jitter's
}

double drift_segment_length_ns(const drift_pattern& p, std::uint64_t i) noexcept {
  return kDriftMinSegmentNs + unit(segment_hash(p, i, 1)) * (kDriftMaxSegmentNs - kDriftMinSegmentNs);
}

double drift_segment_level(const drift_pattern& p, std::uint64_t i) noexcept {
  if (!(p.factor > 1.0)) return 1.0;
  return 1.0 + unit(segment_hash(p, i, 2)) * (p.factor - 1.0);  // [1, F)
}

drift_cursor::drift_cursor(const drift_pattern& p) noexcept : p_(p) {
  s_ = {0, 0.0, drift_segment_length_ns(p_, 0), drift_segment_level(p_, 0)};
}

const drift_segment& drift_cursor::at(double t_ns) noexcept {
  t_ns = std::max(t_ns, 0.0);
  if (t_ns < s_.start_ns || s_.end_ns == 0.0) *this = drift_cursor(p_);
  while (t_ns >= s_.end_ns) {
    const std::uint64_t i = s_.index + 1;
    const double start = s_.end_ns;
    s_ = {i, start, start + drift_segment_length_ns(p_, i), drift_segment_level(p_, i)};
  }
  return s_;
}

double drift_level_at(const drift_pattern& p, double t_ns) noexcept { return drift_cursor(p).at(t_ns).level; }

double drift_mean_level(const drift_pattern& p, double from_ns, double to_ns) noexcept {
  if (!(to_ns > from_ns)) return drift_level_at(p, from_ns);
  drift_cursor c(p);
  double weighted = 0;
  for (double t = from_ns; t < to_ns;) {
    const drift_segment& s = c.at(t);
    const double end = std::min(s.end_ns, to_ns);
    weighted += (end - t) * s.level;
    t = end;
  }
  return weighted / (to_ns - from_ns);
}

}  // namespace spinwise::stress
