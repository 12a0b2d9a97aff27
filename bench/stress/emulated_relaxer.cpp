#include "emulated_relaxer.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "spinwise/runtime/relax_cost.hpp"

namespace spinwise::stress {

std::string_view to_string(cpu_model m) noexcept {
  switch (m) {
    case cpu_model::native: return "native";
    case cpu_model::broadwell: return "broadwell";
    case cpu_model::skylake: return "skylake";
    case cpu_model::custom: return "custom";
  }
  return "unknown";
}

bool parse_cpu_model(std::string_view s, cpu_model& out) noexcept {
  for (cpu_model m : {cpu_model::native, cpu_model::broadwell, cpu_model::skylake}) {
    if (to_string(m) == s) {
      out = m;
      return true;
    }
  }
  return false;
}

namespace {

// Median ns per iteration of the dependent loop, timed with the cycle counter.
double measure_loop_iter_ns(double counter_hz) {
  constexpr std::uint32_t kIters = 20000;  // ~7 us at one iteration per cycle
  std::vector<double> per;
  cpu_relax_n(relax_kind::none, kIters);  // warm-up
  for (int t = 0; t < 15; ++t) {
    const std::uint64_t a = read_counter();
    cpu_relax_n(relax_kind::none, kIters);
    const std::uint64_t b = read_counter();
    per.push_back(static_cast<double>(b - a) * 1e9 / counter_hz / kIters);
  }
  std::sort(per.begin(), per.end());
  return std::max(per[per.size() / 2], 0.01);
}

relax_calibration calibrate() {
  relax_calibration c;
  c.kind = active_relax();
  c.counter_hz = static_cast<double>(counter_frequency());
  relax_cost_options opt;
  opt.kind = c.kind;
  const relax_cost rc = measure_relax_cost(opt);
  c.native_relax_ns = rc.trials > 0 && rc.ns_median > 0 ? rc.ns_median : 0.05;
  c.loop_iter_ns = measure_loop_iter_ns(c.counter_hz);
  return c;
}

// One thread's accumulators. Only the owner writes (load + store, no read-modify-write on the
// spin path); snapshots read them from other threads, hence atomics with relaxed order.
struct thread_spin {
  std::atomic<std::uint64_t> calls{0}, zero_calls{0}, relaxes{0}, ticks{0}, clipped{0};
  std::atomic<std::uint64_t> episodes{0}, budgets_spent{0};
};

struct spin_registry {
  std::mutex mu;
  std::deque<thread_spin> all;  // stable addresses; threads come and go, entries stay
};

spin_registry& registry() {
  static spin_registry r;
  return r;
}

thread_spin& my_spin() {
  thread_local thread_spin* mine = [] {
    spin_registry& r = registry();
    std::lock_guard<std::mutex> g(r.mu);
    return &r.all.emplace_back();
  }();
  return *mine;
}

inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t d) noexcept {
  c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

// The active plan, as plain numbers the spin path can read without ordering.
std::atomic<std::uint32_t> g_native_per_relax{0};
std::atomic<std::uint64_t> g_loop_q10{0};
std::atomic<double> g_expected_ticks{0.0};
std::atomic<bool> g_native{true};
std::atomic<double> g_target_ns{0.0};
std::atomic<std::uint8_t> g_model{0};

}  // namespace

const relax_calibration& calibration() {
  static const relax_calibration c = calibrate();
  return c;
}

double ticks_to_ns(std::uint64_t ticks) { return static_cast<double>(ticks) * 1e9 / calibration().counter_hz; }

relax_plan make_plan(cpu_model m, double relax_ns) {
  const relax_calibration& c = calibration();
  relax_plan p;
  p.model = m;
  switch (m) {
    case cpu_model::native: p.target_ns = c.native_relax_ns; break;
    case cpu_model::broadwell: p.target_ns = kBroadwellRelaxNs; break;
    case cpu_model::skylake: p.target_ns = kSkylakeRelaxNs; break;
    case cpu_model::custom:
      if (!(relax_ns > 0.0) || !(relax_ns <= 100'000.0)) {
        throw std::invalid_argument("--relax-ns must be in (0, 100000] ns, got " + std::to_string(relax_ns));
      }
      p.target_ns = relax_ns;
      break;
  }
  if (m != cpu_model::native) {
    const double native = c.native_relax_ns;
    p.native_per_relax = p.target_ns >= native ? static_cast<std::uint32_t>(std::floor(p.target_ns / native)) : 0;
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

namespace {

inline void issue(std::uint32_t n) noexcept {
  if (g_native.load(std::memory_order_relaxed)) {
    cpu_relax_n(n);
    return;
  }
  const std::uint64_t natives = static_cast<std::uint64_t>(n) * g_native_per_relax.load(std::memory_order_relaxed);
  const std::uint64_t loops = (static_cast<std::uint64_t>(n) * g_loop_q10.load(std::memory_order_relaxed) + 512) >> 10;
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

}  // namespace

void emulated_relaxer::relax_n(std::uint32_t n) noexcept {
  thread_spin& s = my_spin();
  if (n == 0) {
    bump(s.zero_calls, 1);
    return;
  }
  const std::uint64_t t0 = read_counter();
  issue(n);
  const std::uint64_t t1 = read_counter();
  std::uint64_t ticks = t1 - t0;
  const double expected = g_expected_ticks.load(std::memory_order_relaxed) * n;
  const double limit = 2.0 * expected + 50e-6 * calibration().counter_hz;
  if (static_cast<double>(ticks) > limit) {
    ticks = static_cast<std::uint64_t>(expected);
    bump(s.clipped, 1);
  }
  bump(s.calls, 1);
  bump(s.relaxes, n);
  bump(s.ticks, ticks);
}

double emulated_relaxer::measure_achieved_ns(std::uint32_t n) {
  std::vector<double> per;
  issue(n / 10);  // warm-up
  for (int t = 0; t < 7; ++t) {
    const std::uint64_t a = read_counter();
    issue(n);
    const std::uint64_t b = read_counter();
    per.push_back(ticks_to_ns(b - a) / n);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

spin_totals spin_snapshot() {
  spin_registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  spin_totals t;
  for (const thread_spin& s : r.all) {
    t.calls += s.calls.load(std::memory_order_relaxed);
    t.zero_calls += s.zero_calls.load(std::memory_order_relaxed);
    t.relaxes += s.relaxes.load(std::memory_order_relaxed);
    t.ticks += s.ticks.load(std::memory_order_relaxed);
    t.clipped += s.clipped.load(std::memory_order_relaxed);
    t.episodes += s.episodes.load(std::memory_order_relaxed);
    t.budgets_spent += s.budgets_spent.load(std::memory_order_relaxed);
  }
  return t;
}

void note_spin_episode() noexcept { bump(my_spin().episodes, 1); }
void note_budget_spent() noexcept { bump(my_spin().budgets_spent, 1); }

void busy_work_ns(double ns) noexcept {
  if (!(ns > 0.0)) return;
  const double iters = ns / calibration().loop_iter_ns + 0.5;
  cpu_relax_n(relax_kind::none, iters >= 4e9 ? 0xffffffffu : static_cast<std::uint32_t>(iters));
}

}  // namespace spinwise::stress
