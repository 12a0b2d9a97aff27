#pragma once
// The decision rule of adaptive_policy (adaptive_policy.hpp): from what a lock class's contended
// waits did over one window, the spin budget of the next. A pure function of its inputs, so that
// a test can drive it with scripted outcomes (tests/locks/adaptive_test.cpp) and the same
// outcomes always give the same budgets.
//
// A wait's spin ends in a win (the lock was taken while the waiter spun) or a loss (the budget ran
// out; the waiter then parks or yields). One window is kAdaptiveWindow such ends. The rule, in
// order:
//   1. fewer than a quarter won: spinning does not pay here (holders hold long, or are preempted).
//      Halve the budget.
//   2. at least half won, and at least an eighth of the wins came in the budget's second half:
//      the budget binds (waits end just before it, so more end just after it). Double it.
//   3. wins, none late: they end early; trim the budget to four times the mean win (at most
//      halving it in one window), so that losses waste less.
//   4. the CPU cap: the window's spin time over the process CPU time of the same interval must not
//      exceed cpu_pct percent. Above it, the budget is scaled down by cap / share; a growth is
//      limited to what keeps the share at the cap.
//   5. clamped to [min_ns, max_ns].
// Spinning time that a preemption inflated is counted at the rounds' length (the waiter clips it),
// so a descheduled waiter does not read as spinning.

#include <algorithm>
#include <cstdint>

namespace spinwise::detail {

// Ends per decision. 64: a decision every 64 contended waits of the class, and a win fraction
// known to about +-0.06 (one standard error at p = 0.5).
inline constexpr std::uint32_t kAdaptiveWindow = 64;

// What one window of a class's waits did.
struct adaptive_window {
  std::uint64_t wins = 0;       // spins that ended in the lock
  std::uint64_t losses = 0;     // spins whose budget ran out
  std::uint64_t late_wins = 0;  // wins after more than half the budget
  std::uint64_t win_ns = 0;     // spin time of the wins, summed
  std::uint64_t spin_ns = 0;    // spin time of wins and losses, summed

  constexpr std::uint64_t ends() const noexcept { return wins + losses; }

  // One spin's end: `spun_ns` of spinning under a budget of `budget_ns`.
  constexpr void add(bool won, std::uint64_t spun_ns, std::uint32_t budget_ns) noexcept {
    spin_ns += spun_ns;
    if (won) {
      ++wins;
      win_ns += spun_ns;
      if (2 * spun_ns > budget_ns) ++late_wins;
    } else {
      ++losses;
    }
  }
};

struct adaptive_bounds {
  std::uint32_t min_ns = 200;
  std::uint32_t max_ns = 50'000;
  std::uint32_t cpu_pct = 10;  // the class's spin time may be at most this share of process CPU
};

enum class adaptive_step : std::uint8_t { hold, grow, shrink, trim, cpu_capped };

struct adaptive_decision {
  std::uint32_t budget_ns;
  adaptive_step step;
};

// The next budget after `budget_ns` given window `w`, during which the process used
// `process_cpu_ns` of CPU (0: unknown, no cap applied).
constexpr adaptive_decision adapt_budget(std::uint32_t budget_ns, const adaptive_window& w,
                                         std::uint64_t process_cpu_ns, const adaptive_bounds& b) noexcept {
  const auto clamp = [&b](double ns) {
    const double lo = b.min_ns, hi = std::max(b.min_ns, b.max_ns);
    return static_cast<std::uint32_t>(std::clamp(ns, lo, hi) + 0.5);
  };
  const double budget = budget_ns;
  double next = budget;
  adaptive_step step = adaptive_step::hold;
  const std::uint64_t n = w.ends();
  if (n > 0) {
    if (w.wins * 4 < n) {
      next = budget / 2;
      step = adaptive_step::shrink;
    } else if (w.wins * 2 >= n && w.late_wins * 8 >= w.wins) {
      next = budget * 2;
      step = adaptive_step::grow;
    } else if (w.late_wins == 0 && w.wins > 0) {
      const double trimmed = 4.0 * static_cast<double>(w.win_ns) / static_cast<double>(w.wins);
      if (trimmed < budget) {
        next = std::max(trimmed, budget / 2);
        step = adaptive_step::trim;
      }
    }
  }
  if (process_cpu_ns > 0 && b.cpu_pct < 100) {
    const double share = static_cast<double>(w.spin_ns) / static_cast<double>(process_cpu_ns);
    const double cap = b.cpu_pct / 100.0;
    if (share > cap) {
      next = std::min(next, budget * cap / share);
      step = adaptive_step::cpu_capped;
    } else if (next > budget && share > 0 && share * next / budget > cap) {
      next = budget * cap / share;  // grow only up to the cap
      step = next > budget ? adaptive_step::grow : adaptive_step::cpu_capped;
    }
  }
  return {clamp(next), step};
}

}  // namespace spinwise::detail
