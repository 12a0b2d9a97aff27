#include "measurement.hpp"

#include <string>

#include "lock_catalog.hpp"
#include "spinwise/detail/cpu_time.hpp"
#include "spinwise/runtime/counter_timing.hpp"

namespace spinwise::stress {

namespace {

double per_s(std::uint64_t n, double window_s) { return static_cast<double>(n) / window_s; }

// The lock under test's class in a window's statistics; nullptr when it recorded nothing.
const lock_class_stats* stress_class(const stats_snapshot& window) {
  for (const lock_class_stats& c : window.classes) {
    if (c.name == kStressLatchClass) return &c;
  }
  return nullptr;
}

}  // namespace

instant instant::now() {
  instant i;
  i.wall = std::chrono::steady_clock::now();
  i.cpu_ns = static_cast<double>(spinwise::detail::process_cpu_ns());
  getrusage(RUSAGE_SELF, &i.ru);
  i.stats = take_stats_snapshot();
  return i;
}

double ticks_to_ns(double ticks) { return runtime::ticks_to_ns(ticks, counter_frequency()); }

latency_summary summarize_ticks(const bench::latency_histogram& h) {
  latency_summary s;
  s.count = h.count();
  s.mean_ns = ticks_to_ns(h.mean());
  s.p50_ns = ticks_to_ns(static_cast<double>(h.percentile(50)));
  s.p95_ns = ticks_to_ns(static_cast<double>(h.percentile(95)));
  s.p99_ns = ticks_to_ns(static_cast<double>(h.percentile(99)));
  s.p999_ns = ticks_to_ns(static_cast<double>(h.percentile(99.9)));
  s.max_ns = ticks_to_ns(static_cast<double>(h.max()));
  return s;
}

void add_spin_and_waits(run_result& r, const instant& a, const instant& b, const spin_tally& tally) {
  const lock_info& info = *find_lock(r.config.lock.lock);
  const stats_snapshot window = diff_stats(a.stats, b.stats);
  const lock_class_stats* cls = info.lock_stats ? stress_class(window) : nullptr;
  const lock_stats_totals lib = cls != nullptr ? cls->totals : lock_stats_totals{};

  r.process_cpu_ns = b.cpu_ns - a.cpu_ns;
  r.spin_ns = ticks_to_ns(static_cast<double>(lib.spin_ticks));
  r.spin_cpu_share = r.process_cpu_ns > 0 ? r.spin_ns / r.process_cpu_ns : 0;
  r.spin_machine_share = r.spin_ns / (r.window_s * 1e9 * r.cpus);
  r.relaxes = lib.relaxes;
  r.spin_rounds = tally.delay_rounds;
  r.zero_rounds = tally.zero_rounds;
  r.clipped_rounds = tally.preempted_rounds;

  r.counted = info.spinwise;
  r.parking_lock = info.parks;
  if (!r.counted) return;
  r.spin_episodes = tally.episodes;
  r.budgets_spent = tally.budgets_spent;
  r.parks = r.parking_lock ? r.budgets_spent : 0;
  if (cls != nullptr) {
    r.parks_exact = true;
    r.parks = lib.parks;
    r.yields = lib.yields;
    r.contended = lib.contended;
    stats_snapshot only = window;
    only.classes = {*cls};
    r.semaphores = format_stats_text(only);
  }
  r.parks_per_s = per_s(r.parks, r.window_s);
  r.budgets_spent_per_s = per_s(r.budgets_spent, r.window_s);
}

namespace {

ratio_summary summarize(const bench::ratio_histogram& h) {
  ratio_summary s;
  s.rounds = h.count();
  if (s.rounds == 0) return s;
  s.p10 = h.percentile(10);
  s.p50 = h.percentile(50);
  s.p90 = h.percentile(90);
  s.min = h.min();
  s.max = h.max();
  return s;
}

}  // namespace

void add_delay_figures(run_result& r, const delay_sample& s) {
  delay_accuracy_summary& a = r.delay_accuracy;
  a.applies = r.policy == policy_kind::time || r.policy == policy_kind::exp_backoff;
  if (a.applies) {
    bench::ratio_histogram all;
    for (int b = 0; b < delay_sample::kBands; ++b) {
      all.merge(s.accuracy[b]);
      a.bands[b] = summarize(s.accuracy[b]);
    }
    a.all = summarize(all);
    a.preempted = s.accuracy_preempted;
    a.early = s.accuracy_early;
    a.requested_min_ns = s.requested_min_ns;
    a.requested_max_ns = s.requested_max_ns;
  }
  round_length_summary& l = r.round_length;
  l.rounds = s.round_ticks.count();
  l.preempted = s.rounds_preempted;
  if (l.rounds > 0) {
    l.p10_ns = ticks_to_ns(static_cast<double>(s.round_ticks.percentile(10)));
    l.p50_ns = ticks_to_ns(static_cast<double>(s.round_ticks.percentile(50)));
    l.p90_ns = ticks_to_ns(static_cast<double>(s.round_ticks.percentile(90)));
    l.relax_p10_ns = s.relax_stretch.percentile(10) * r.emulated_relax_ns;
    l.relax_p50_ns = s.relax_stretch.percentile(50) * r.emulated_relax_ns;
    l.relax_p90_ns = s.relax_stretch.percentile(90) * r.emulated_relax_ns;
  }
}

void add_context_switches(run_result& r, const instant& a, const instant& b) {
  r.vcsw = static_cast<std::uint64_t>(b.ru.ru_nvcsw - a.ru.ru_nvcsw);
  r.ivcsw = static_cast<std::uint64_t>(b.ru.ru_nivcsw - a.ru.ru_nivcsw);
  r.vcsw_per_s = per_s(r.vcsw, r.window_s);
  r.ivcsw_per_s = per_s(r.ivcsw, r.window_s);
}

}  // namespace spinwise::stress
