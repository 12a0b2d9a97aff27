#include "spinwise/runtime/relax_cost.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/cycles.hpp"
#include "spinwise/runtime/order_stats.hpp"

namespace spinwise {
namespace {

volatile std::uint64_t g_sink = 0;

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
  const std::vector<double> probes =
      runtime::time_trials(5, kProbe, overhead, [kind] { cpu_relax_n(kind, kProbe); });
  const double ticks_per_relax = std::max(*std::min_element(probes.begin(), probes.end()), 1e-3);
  const double ticks_wanted = trial_ns * 1e-9 * static_cast<double>(counter_frequency());
  const double n = ticks_wanted / ticks_per_relax;
  return static_cast<std::uint32_t>(std::clamp(n, 16.0, 1'048'576.0));
}

}  // namespace

relax_cost measure_relax_cost(const relax_cost_options& opt) {
  relax_cost r;
  r.kind = opt.kind;
  r.cpu = sched_getcpu();
  const bool size_ok = opt.relaxes_per_trial > 0 || (opt.trial_ns > 0 && std::isfinite(opt.trial_ns));
  if (!relax_supported(opt.kind) || opt.trials == 0 || !size_ok) return r;

  r.counter_overhead_ticks = runtime::counter_read_overhead();
  const std::uint32_t n = opt.relaxes_per_trial > 0
                              ? opt.relaxes_per_trial
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
      const double per = runtime::time_trial(n, r.counter_overhead_ticks, [&] { cpu_relax_n(opt.kind, n); });
      if (p0_ok && opt.perf->read(p1)) {
        per_relax_cycles.push_back(std::max(0.0, static_cast<double>(p1 - p0) - cycles_overhead) / n);
      }
      per_relax.push_back(per);
      this_round.push_back(per);
    }
    done += in_round;
    round_medians.push_back(runtime::median(std::move(this_round)));
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
  r.ns_median = runtime::ticks_to_ns(r.ticks_median, counter_frequency());
  return r;
}

}  // namespace spinwise
