#include "emulated_relaxer.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "spinwise/runtime/counter_timing.hpp"
#include "spinwise/runtime/order_stats.hpp"
#include "spinwise/runtime/relax_cost.hpp"

namespace spinwise::stress {

namespace {

// custom is what --relax-ns sets: printed, not a --cpu-model value.
constexpr detail::enum_name<cpu_model> kCpuModelNames[] = {{cpu_model::native, "native"},
                                                           {cpu_model::broadwell, "broadwell"},
                                                           {cpu_model::skylake, "skylake"},
                                                           {cpu_model::custom, "custom", false}};

}  // namespace

std::string_view to_string(cpu_model m) noexcept { return name_in(kCpuModelNames, m); }

bool parse_cpu_model(std::string_view s, cpu_model& out) noexcept { return parse_in(kCpuModelNames, s, out); }

namespace {

// Median ns per iteration of the dependent loop, timed with the cycle counter.
double measure_loop_iter_ns() {
  constexpr std::uint32_t kIters = 20000;  // ~7 us at one iteration per cycle
  cpu_relax_n(relax_kind::none, kIters);   // warm-up
  const std::vector<double> ticks = runtime::time_trials(15, kIters, runtime::counter_read_overhead(),
                                                         [] { cpu_relax_n(relax_kind::none, kIters); });
  return std::max(runtime::ticks_to_ns(runtime::median(ticks), counter_frequency()), 0.01);
}

relax_calibration calibrate() {
  relax_calibration c;
  c.kind = active_relax();
  c.counter_hz = static_cast<double>(counter_frequency());
  relax_cost_options opt;
  opt.kind = c.kind;
  const relax_cost rc = measure_relax_cost(opt);
  c.native_relax_ns = rc.trials > 0 && rc.ns_median > 0 ? rc.ns_median : 0.05;
  c.loop_iter_ns = measure_loop_iter_ns();
  c.counter_read_ns = runtime::ticks_to_ns(runtime::counter_read_overhead(), counter_frequency());
  return c;
}

// The active plan, as plain numbers the spin path can read without ordering.
std::atomic<std::uint32_t> g_native_per_relax{0};
std::atomic<std::uint64_t> g_loop_q10{0};
std::atomic<double> g_expected_ticks{0.0};
std::atomic<bool> g_native{true};
std::atomic<double> g_target_ns{0.0};
std::atomic<std::uint8_t> g_model{0};

// The drift (start_drift): its pattern, and what a drifted relax_n() needs per call.
std::atomic<bool> g_drift_on{false};
std::atomic<double> g_drift_factor{1.0};
std::atomic<std::uint64_t> g_drift_seed{0};
std::atomic<std::uint64_t> g_drift_start{0};
std::atomic<std::uint64_t> g_drift_generation{0};  // a thread whose place is older starts over
std::atomic<double> g_drift_ns_per_tick{0.0};
std::atomic<double> g_drift_read_ns{0.0};
std::atomic<double> g_drift_native_ns{1.0};
std::atomic<double> g_drift_loop_ns{1.0};

}  // namespace

namespace {

// The process's first calibration; the one in use (use_loop_calibration() sets its loop figure
// between runs); and the long loop calibration, once measured.
struct calibration_state {
  relax_calibration first, now;
  double long_ms = 0, long_loop_ns = 0;  // long_ms 0: not measured yet
};

calibration_state& calibration_store() {
  static calibration_state s = [] {
    calibration_state c;
    c.first = c.now = calibrate();
    return c;
  }();
  return s;
}

// ns per iteration of the dependent loop over trials of 60000 iterations (~20 us) back to back for
// `ms`: the fastest. A slower clock (a host that drops the core from turbo to base while other
// cores are busy), a job on the core's sibling thread or a preemption only ever make a trial slower,
// and on a busy VM they come and go over tens of ms: there the typical trial wandered by up to half
// again between windows while the fastest stayed put (seen while writing this on the loaded
// development VM; bench/stress/variance.sh measures it). The first calibration's median of 15
// trials within 0.1 ms is one snapshot of whichever state the machine was in.
double measure_loop_iter_ns_over(double ms) {
  constexpr std::uint32_t kIters = 60000;
  const double overhead = runtime::counter_read_overhead();
  const double hz = static_cast<double>(counter_frequency());
  cpu_relax_n(relax_kind::none, kIters);  // warm-up
  std::vector<double> ticks;
  const std::uint64_t end = read_counter() + static_cast<std::uint64_t>(ms * 1e-3 * hz);
  while (ticks.size() < 15 || read_counter() < end) {
    ticks.push_back(runtime::time_trial(kIters, overhead, [] { cpu_relax_n(relax_kind::none, kIters); }));
  }
  return std::max(runtime::ticks_to_ns(*std::min_element(ticks.begin(), ticks.end()), counter_frequency()),
                  0.01);
}

}  // namespace

const relax_calibration& calibration() { return calibration_store().now; }

double use_loop_calibration(double calibrate_ms) {
  calibration_state& s = calibration_store();
  if (!(calibrate_ms > 0)) {
    s.now.loop_iter_ns = s.first.loop_iter_ns;
  } else {
    if (s.long_ms != calibrate_ms) {
      s.long_loop_ns = measure_loop_iter_ns_over(calibrate_ms);
      s.long_ms = calibrate_ms;
    }
    s.now.loop_iter_ns = s.long_loop_ns;
  }
  return s.now.loop_iter_ns;
}

relax_plan make_plan(cpu_model m, double relax_ns) {
  const relax_calibration& c = calibration();
  relax_plan p;
  p.model = m;
  switch (m) {
    case cpu_model::native:
      p.target_ns = c.native_relax_ns;
      break;
    case cpu_model::broadwell:
      p.target_ns = kBroadwellRelaxNs;
      break;
    case cpu_model::skylake:
      p.target_ns = kSkylakeRelaxNs;
      break;
    case cpu_model::custom:
      if (!(relax_ns > 0.0) || !(relax_ns <= 100'000.0)) {
        throw std::invalid_argument("--relax-ns must be in (0, 100000] ns, got " + std::to_string(relax_ns));
      }
      p.target_ns = relax_ns;
      break;
  }
  if (m != cpu_model::native) {
    const double native = c.native_relax_ns;
    p.native_per_relax =
        p.target_ns >= native ? static_cast<std::uint32_t>(std::floor(p.target_ns / native)) : 0;
    const double rest_ns = p.target_ns - p.native_per_relax * native;
    p.loop_per_relax_q10 = static_cast<std::uint64_t>(std::llround(rest_ns / c.loop_iter_ns * 1024.0));
  }
  p.expected_ticks_per_relax = p.target_ns * c.counter_hz / 1e9;
  return p;
}

void emulated_relaxer::configure(const relax_plan& plan) noexcept {
  g_native.store(plan.model == cpu_model::native, std::memory_order_relaxed);
  g_native_per_relax.store(plan.native_per_relax, std::memory_order_relaxed);
  g_loop_q10.store(plan.loop_per_relax_q10, std::memory_order_relaxed);
  g_expected_ticks.store(plan.expected_ticks_per_relax, std::memory_order_relaxed);
  g_target_ns.store(plan.target_ns, std::memory_order_relaxed);
  g_model.store(static_cast<std::uint8_t>(plan.model), std::memory_order_relaxed);
}

double emulated_relaxer::relax_ns() noexcept { return g_target_ns.load(std::memory_order_relaxed); }

relax_plan emulated_relaxer::plan() noexcept {
  relax_plan p;
  p.model = static_cast<cpu_model>(g_model.load(std::memory_order_relaxed));
  p.target_ns = g_target_ns.load(std::memory_order_relaxed);
  p.native_per_relax = g_native_per_relax.load(std::memory_order_relaxed);
  p.loop_per_relax_q10 = g_loop_q10.load(std::memory_order_relaxed);
  p.expected_ticks_per_relax = g_expected_ticks.load(std::memory_order_relaxed);
  return p;
}

void emulated_relaxer::start_drift(const drift_pattern& p, std::uint64_t start_ticks) noexcept {
  const relax_calibration& c = calibration();
  g_drift_factor.store(p.factor, std::memory_order_relaxed);
  g_drift_seed.store(p.seed, std::memory_order_relaxed);
  g_drift_start.store(start_ticks, std::memory_order_relaxed);
  g_drift_ns_per_tick.store(1e9 / c.counter_hz, std::memory_order_relaxed);
  g_drift_read_ns.store(c.counter_read_ns, std::memory_order_relaxed);
  g_drift_native_ns.store(c.native_relax_ns, std::memory_order_relaxed);
  g_drift_loop_ns.store(c.loop_iter_ns, std::memory_order_relaxed);
  g_drift_generation.fetch_add(1, std::memory_order_relaxed);
  g_drift_on.store(p.factor > 1.0, std::memory_order_relaxed);
}

void emulated_relaxer::stop_drift() noexcept { g_drift_on.store(false, std::memory_order_relaxed); }

namespace {

// A thread's place in the drift pattern and the relax length of its current segment.
// Constant-initialized: an access is a TLS-relative load with no guard.
struct drift_place {
  std::uint64_t generation = 0;
  drift_cursor cursor;
  double start_ns = 0, end_ns = 0;  // the segment relax_ns is for (end 0: none yet)
  double level = 1.0;
  double relax_ns = 0;   // one emulated relax in this segment: level x the plan's length
  bool natives = false;  // spent as this CPU's relaxes plus the loop (else the loop alone)
  bool held = false;     // inside a round (begin_round): the segment is current, read no counter
  // Per call, multiplications only: a division costs as much as a short chunk's remainder.
  double read_ns = 0, native_ns = 1, per_native_ns = 1, per_loop_ns = 1;
};
thread_local drift_place t_drift;

drift_place& place_at(std::uint64_t now) noexcept {
  drift_place& d = t_drift;
  const std::uint64_t gen = g_drift_generation.load(std::memory_order_relaxed);
  if (d.generation != gen) {
    d = drift_place{};
    d.generation = gen;
    d.cursor = drift_cursor(
        {g_drift_factor.load(std::memory_order_relaxed), g_drift_seed.load(std::memory_order_relaxed)});
    d.read_ns = g_drift_read_ns.load(std::memory_order_relaxed);
    d.native_ns = g_drift_native_ns.load(std::memory_order_relaxed);
    d.per_native_ns = 1.0 / d.native_ns;
    d.per_loop_ns = 1.0 / g_drift_loop_ns.load(std::memory_order_relaxed);
  }
  const std::uint64_t start = g_drift_start.load(std::memory_order_relaxed);
  // A counter behind the start (read on another CPU) is the start.
  const double per_tick = g_drift_ns_per_tick.load(std::memory_order_relaxed);
  const double t = now > start ? static_cast<double>(now - start) * per_tick : 0.0;
  if (t < d.start_ns || t >= d.end_ns) {
    const drift_segment& s = d.cursor.at(t);
    d.start_ns = s.start_ns;
    d.end_ns = s.end_ns;
    d.level = s.level;
    d.relax_ns = s.level * g_target_ns.load(std::memory_order_relaxed);
    // As make_plan: a relax shorter than this CPU's is the loop alone.
    d.natives = d.relax_ns >= d.native_ns;
  }
  return d;
}

void spend(std::uint64_t natives, std::uint64_t loops) noexcept {
  for (std::uint64_t left = natives; left > 0;) {
    const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, 0xffffffffu));
    cpu_relax_n(chunk);
    left -= chunk;
  }
  for (std::uint64_t left = loops; left > 0;) {
    const auto chunk = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, 0xffffffffu));
    cpu_relax_n(relax_kind::none, chunk);
    left -= chunk;
  }
}

// n relaxes at the current segment's length. Inside a round the segment is the one begin_round
// found; outside, this call finds it with a counter read and takes the read off its own time (a
// call shorter than one read, such as one Broadwell relax, costs the read).
void issue_drifted(std::uint32_t n) noexcept {
  if (n == 0) return;
  drift_place& held = t_drift;
  const bool in_round = held.held && held.generation == g_drift_generation.load(std::memory_order_relaxed);
  const drift_place& d = in_round ? held : place_at(read_counter());
  const double total = static_cast<double>(n) * d.relax_ns - (in_round ? 0.0 : d.read_ns);
  if (!(total > 0.0)) return;
  double rest = total;
  std::uint64_t natives = 0;
  if (d.natives) {
    natives = static_cast<std::uint64_t>(total * d.per_native_ns);
    rest = total - static_cast<double>(natives) * d.native_ns;
  }
  spend(natives, static_cast<std::uint64_t>(rest * d.per_loop_ns + 0.5));
}

inline void issue(std::uint32_t n) noexcept {
  if (g_drift_on.load(std::memory_order_relaxed)) {
    issue_drifted(n);
    return;
  }
  if (g_native.load(std::memory_order_relaxed)) {
    cpu_relax_n(n);
    return;
  }
  const std::uint64_t natives =
      static_cast<std::uint64_t>(n) * g_native_per_relax.load(std::memory_order_relaxed);
  const std::uint64_t loops =
      (static_cast<std::uint64_t>(n) * g_loop_q10.load(std::memory_order_relaxed) + 512) >> 10;
  spend(natives, loops);
}

}  // namespace

void emulated_relaxer::begin_round(std::uint64_t now) noexcept {
  if (g_drift_on.load(std::memory_order_relaxed)) place_at(now).held = true;
}

void emulated_relaxer::end_round() noexcept { t_drift.held = false; }

double emulated_relaxer::drift_level(std::uint64_t now) noexcept {
  return g_drift_on.load(std::memory_order_relaxed) ? place_at(now).level : 1.0;
}

void emulated_relaxer::relax_n(std::uint32_t n) noexcept { issue(n); }

double emulated_relaxer::measure_achieved_ns(std::uint32_t n) {
  issue(n / 10);  // warm-up
  const std::vector<double> ticks =
      runtime::time_trials(7, n, runtime::counter_read_overhead(), [n] { issue(n); });
  return runtime::ticks_to_ns(runtime::median(ticks), counter_frequency());
}

void busy_work_ns(double ns) noexcept {
  if (!(ns > 0.0)) return;
  const double iters = ns / calibration().loop_iter_ns + 0.5;
  cpu_relax_n(relax_kind::none, iters >= 4e9 ? 0xffffffffu : static_cast<std::uint32_t>(iters));
}

}  // namespace spinwise::stress
