#include "spinwise/runtime/relax_cost.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "spinwise/runtime/cycles.hpp"

namespace spinwise {
namespace {

volatile std::uint64_t g_sink = 0;

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

// User-mode cycles between two perf reads with nothing in between (the floor each counted
// trial includes), minimum of several.
double perf_overhead(const perf_cycle_counter& perf) {
  std::uint64_t best = ~std::uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    std::uint64_t a = 0, b = 0;
    if (!perf.read(a)) return 0;
    // The two counter reads every counted trial makes.
    const std::uint64_t c0 = read_counter();
    g_sink = read_counter() - c0;
    if (!perf.read(b)) return 0;
    best = std::min(best, b - a);
  }
  return static_cast<double>(best);
}

// Relaxes that fill about `trial_ns`, from a short probe: the fastest of a few 64-relax runs.
std::uint32_t relaxes_for_trial(relax_kind kind, double trial_ns, double overhead) {
  constexpr std::uint32_t kProbe = 64;
  double best = 1e300;
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t c0 = read_counter();
    cpu_relax_n(kind, kProbe);
    const std::uint64_t c1 = read_counter();
    best = std::min(best, std::max(0.0, static_cast<double>(c1 - c0) - overhead));
  }
  const double ticks_per_relax = std::max(best / kProbe, 1e-3);
  const double ticks_wanted = trial_ns * 1e-9 * static_cast<double>(counter_frequency());
  const double n = ticks_wanted / ticks_per_relax;
  return static_cast<std::uint32_t>(std::clamp(n, 16.0, 1'048'576.0));
}

double median_sorted(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

relax_cost measure_relax_cost(const relax_cost_options& opt) {
  relax_cost r;
  r.kind = opt.kind;
  r.cpu = sched_getcpu();
  const bool size_ok = opt.relaxes_per_trial > 0 || (opt.trial_ns > 0 && std::isfinite(opt.trial_ns));
  if (!relax_supported(opt.kind) || opt.trials == 0 || !size_ok) return r;

  r.counter_overhead_ticks = counter_overhead();
  const std::uint32_t n = opt.relaxes_per_trial > 0 ? opt.relaxes_per_trial
                                                    : relaxes_for_trial(opt.kind, opt.trial_ns, r.counter_overhead_ticks);
  const bool count_cycles = opt.perf != nullptr && opt.perf->valid();
  const double cycles_overhead = count_cycles ? perf_overhead(*opt.perf) : 0.0;
  const std::uint32_t rounds = std::clamp<std::uint32_t>(opt.rounds, 1, opt.trials);

  std::vector<double> per_relax, per_relax_cycles, round_medians;
  per_relax.reserve(opt.trials);
  cpu_relax_n(opt.kind, n);  // warm-up: page in the loop, wake the core
  std::uint32_t done = 0;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    const std::uint32_t in_round = (opt.trials - done) / (rounds - round);
    std::vector<double> this_round;
    for (std::uint32_t t = 0; t < in_round; ++t) {
      std::uint64_t p0 = 0, p1 = 0;
      const bool p0_ok = count_cycles && opt.perf->read(p0);
      const std::uint64_t c0 = read_counter();
      cpu_relax_n(opt.kind, n);
      const std::uint64_t c1 = read_counter();
      if (p0_ok && opt.perf->read(p1)) {
        per_relax_cycles.push_back(std::max(0.0, static_cast<double>(p1 - p0) - cycles_overhead) / n);
      }
      const double per = detail::ticks_per_relax(c0, c1, r.counter_overhead_ticks, n);
      per_relax.push_back(per);
      this_round.push_back(per);
    }
    done += in_round;
    round_medians.push_back(median_sorted(std::move(this_round)));
  }

  r.trials = opt.trials;
  r.relaxes_per_trial = n;
  r.ticks = summarize(per_relax, opt.limits);
  if (rounds > 1) r.round_drift = check_drift(r.ticks, round_medians, opt.limits);
  if (!per_relax_cycles.empty()) r.perf_cycles = summarize(per_relax_cycles, opt.limits);
  r.samples = std::move(per_relax);
  r.cycle_samples = std::move(per_relax_cycles);
  r.ticks_min = r.ticks.min;
  r.ticks_median = r.ticks.median;
  r.ticks_p90 = r.ticks.p90;
  r.ns_median = detail::ticks_to_ns(r.ticks_median, counter_frequency());
  return r;
}

namespace detail {

double ticks_per_relax(std::uint64_t c0, std::uint64_t c1, double overhead_ticks,
                       std::uint32_t relaxes) noexcept {
  return std::max(0.0, static_cast<double>(c1 - c0) - overhead_ticks) / relaxes;
}

double ticks_to_ns(double ticks, std::uint64_t counter_hz) noexcept {
  return ticks * 1e9 / static_cast<double>(counter_hz);
}

}  // namespace detail

}  // namespace spinwise
