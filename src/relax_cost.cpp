#include "spinwise/runtime/relax_cost.hpp"

#include <sched.h>

#include <algorithm>
#include <vector>

namespace spinwise {
namespace {

// Value at quantile q (0..1) of a sorted sample, nearest rank.
double quantile(const std::vector<double>& sorted, double q) {
  const auto idx = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(idx, sorted.size() - 1)];
}

// The cost of two back-to-back counter reads, taken as the minimum of many: the floor that every
// timed trial includes once.
double counter_overhead() {
  std::uint64_t best = ~std::uint64_t{0};
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t a = read_counter();
    const std::uint64_t b = read_counter();
    best = std::min(best, b - a);
  }
  return static_cast<double>(best);
}

}  // namespace

relax_cost measure_relax_cost(const relax_cost_options& opt) {
  relax_cost r;
  r.kind = opt.kind;
  r.cpu = sched_getcpu();
  if (!relax_supported(opt.kind) || opt.trials == 0 || opt.relaxes_per_trial == 0) return r;

  r.counter_overhead_ticks = counter_overhead();
  std::vector<double> per_relax;
  per_relax.reserve(opt.trials);
  cpu_relax_n(opt.kind, opt.relaxes_per_trial);  // warm-up: page in the loop, wake the core
  for (std::uint32_t t = 0; t < opt.trials; ++t) {
    const std::uint64_t c0 = read_counter();
    cpu_relax_n(opt.kind, opt.relaxes_per_trial);
    const std::uint64_t c1 = read_counter();
    const double ticks = std::max(0.0, static_cast<double>(c1 - c0) - r.counter_overhead_ticks);
    per_relax.push_back(ticks / opt.relaxes_per_trial);
  }

  std::sort(per_relax.begin(), per_relax.end());
  r.trials = opt.trials;
  r.relaxes_per_trial = opt.relaxes_per_trial;
  r.ticks_min = per_relax.front();
  r.ticks_median = quantile(per_relax, 0.5);
  r.ticks_p90 = quantile(per_relax, 0.9);
  r.ns_median = r.ticks_median * 1e9 / static_cast<double>(counter_frequency());
  return r;
}

}  // namespace spinwise
