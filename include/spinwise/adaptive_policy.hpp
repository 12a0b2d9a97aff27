#pragma once
// adaptive_policy: a spin budget that tunes itself, per lock class, within a CPU cap.
//
// A waiter spins, in rounds of exponential backoff (uniform [c/2, c] ns, c = 64 ns x 2^round up
// to 1 us, each ended early once the lock word looks free), until the lock is taken or its
// class's current budget of spinning time is spent; then a spin lock yields between polls and a
// hybrid lock yields once and parks, as with every policy. How each spin ended (won in the lock,
// or lost to the budget) and how long it spun go into the class's window; every 64 ends the
// window decides the next budget (detail/adaptive_controller.hpp has the rule): halve it while
// spinning mostly fails, double it while most spins win and some win late, trim it to four times
// the mean win when wins all come early, and never let the class's spin time exceed
// spin_cpu_pct percent of the process's CPU time over the window (CLOCK_PROCESS_CPUTIME_ID, read
// once per decision). The budget stays within [min_spin_ns, max_spin_ns].
//
// Bounded spinning: a wait stops spinning once its rounds have spent its budget, or after
// budget / 32 ns rounds (adaptive_max_rounds), whichever comes first. A round spends its length on
// the counter and, when it ran its course, at least the time it asked for, so neither a relax
// table that rounds a round to no relaxes (a relax cost of microseconds) nor a counter that stands
// still keeps the budget from running out. With a working counter and a right table a wait spins
// at most its budget and one round. A wrong table stretches that only where time is taken from
// the table: the relaxes after the last counter check of a round that until() ended (one check
// interval's worth at most, per round), and every relax while the counter stands still (a round
// then issues at most 16x its converted count, detail/clock_bounded_delay.hpp).
//
// The class is the Tag: every lock of one Tag shares one budget, in every module of the process
// (the state is a named object in the process-wide state, detail/process_state.hpp). A
// Tag-less adaptive_policy<> is one class for all its locks.
//
// What it costs: nothing on the uncontended path (the policy is consulted only once the lock
// was found busy). A contended wait reads the budget (one relaxed load of a shared line that
// changes once per window) and adds its end to a per-thread tally; every 16 ends a thread folds
// its tally into the class's counters (five atomic adds), and one fold in four triggers a
// decision (one try-CAS of a flag, a clock_gettime, one store).
//
// Deterministic under seed_spin_jitter: its jitter is the thread's generator, and its decisions
// are a pure function of the outcomes and the CPU clock.
//
// When not to use it: to replay a MySQL setting (innodb_policy), or where the same wait must
// always cost the same (a benchmark baseline: time_policy with fixed knobs).
//
// Knobs (process-wide, or per Tag as for every policy):
//   spin_cpu_pct  1..100, default 10: the cap on the class's spin share of process CPU (100: none)
//   min_spin_ns   0..1000000, default 200: the smallest budget (0 lets spinning stop for good:
//                 with no spin there are no wins to learn from)
//   max_spin_ns   1..1000000, default 50000, >= min_spin_ns: the largest budget

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string_view>
#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/adaptive_controller.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/cpu_time.hpp"
#include "spinwise/detail/jitter.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/detail/policy_core.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise {

// The knobs: X(name, min, max, default) (the file top says what each means).
// min_spin_ns <= max_spin_ns (kOrder below).
#define SPINWISE_ADAPTIVE_KNOBS(X) \
  X(spin_cpu_pct, 1, 100, 10)      \
  X(min_spin_ns, 0, 1000000, 200)  \
  X(max_spin_ns, 1, 1000000, 50000)

struct adaptive_settings {
  SPINWISE_ADAPTIVE_KNOBS(SPINWISE_KNOB_SETTING)
};

namespace detail {

struct adaptive_knobs {
  SPINWISE_KNOB_TABLE(adaptive, adaptive_settings, SPINWISE_ADAPTIVE_KNOBS);
  static constexpr knob_order kOrder{field::min_spin_ns, field::max_spin_ns};
};
struct adaptive_spec : knob_spec<adaptive_knobs> {};

// The budget a class starts with: about what time_policy's defaults spin before parking on
// average when a wait does not end first (~15 us), halved, so that a class that spinning does not
// help starts shrinking from a modest figure.
inline constexpr std::uint32_t kAdaptiveInitialNs = 8000;
// A thread folds its ends into the class every this many.
inline constexpr std::uint32_t kAdaptiveFold = 16;

// One class's learning state, process-wide. Counters and the budget sit on separate lines: the
// budget is read by every contended wait, the counters are written by folds.
struct adaptive_class_state {
  alignas(kStatePad) std::atomic<std::uint32_t> budget_ns{kAdaptiveInitialNs};
  std::atomic<std::uint64_t> decisions{0};
  alignas(kStatePad) std::atomic<std::uint64_t> wins{0}, losses{0}, late_wins{0}, win_ns{0}, spin_ns{0};
  std::atomic<bool> deciding{false};
  std::atomic<std::uint64_t> last_cpu_ns{0};  // process CPU time at the last decision (0: none yet)
};

inline constexpr int kAdaptiveObject = 4;  // detail::object_kind for adaptive_class_state

template <class Tag>
struct adaptive_key {};

// The class's state, found and cached (found_once: no function-local static's guard). nullptr
// only with on_busy::give_up, when finding it would wait for a thread inside the process-wide
// lists' lock (the state does not exist yet).
template <class Tag>
SPINWISE_COLD adaptive_class_state* find_adaptive_state(on_busy mode) noexcept {
  constexpr std::string_view key = type_signature<adaptive_key<Tag>>();
  adaptive_class_state* s = nullptr;
  if constexpr (!names_type_without_linkage(key)) {
    bool busy = false;
    s = static_cast<adaptive_class_state*>(find_object(
        kAdaptiveObject, key, [] { return static_cast<void*>(new (std::nothrow) adaptive_class_state); },
        mode, &busy));
    if (busy) return nullptr;
  }
  if (s == nullptr) {
    // A Tag no other module can name (or no memory): constant-initialized, no guard.
    alignas(kStatePad) static adaptive_class_state local;
    s = &local;
  }
  found_once<adaptive_class_state, adaptive_key<Tag>>::ptr.store(s, std::memory_order_release);
  return s;
}

// For the API (may wait for the lists' lock the first time).
template <class Tag>
SPINWISE_ALWAYS_INLINE adaptive_class_state& adaptive_state() noexcept {
  adaptive_class_state* s =
      found_once<adaptive_class_state, adaptive_key<Tag>>::ptr.load(std::memory_order_acquire);
  if (SPINWISE_UNLIKELY(s == nullptr)) s = find_adaptive_state<Tag>(on_busy::wait);
  return *s;
}
// For waiters, which never wait for it: nullptr while the state does not exist yet and another
// thread holds the lists' lock (the waiter then starts from the initial budget, and its ends wait
// in its tally for the next fold).
template <class Tag>
SPINWISE_ALWAYS_INLINE adaptive_class_state* adaptive_state_now() noexcept {
  adaptive_class_state* s =
      found_once<adaptive_class_state, adaptive_key<Tag>>::ptr.load(std::memory_order_acquire);
  return SPINWISE_LIKELY(s != nullptr) ? s : find_adaptive_state<Tag>(on_busy::give_up);
}

// Moves `w` into the class's counters and, once a window is full, decides (one thread at a
// time; a thread that finds another deciding leaves its ends for the next decision). The five
// counters are taken one by one, not as one snapshot: a fold landing in between splits across two
// windows (a window may then read a few more late wins than wins). The rule tolerates that; it
// never makes a decision undefined.
// `cpu_ns`: the process CPU time now (0: read the clock).
SPINWISE_COLD inline void adaptive_fold(adaptive_class_state& s, adaptive_window& w, std::uint64_t knobs,
                                        std::uint64_t cpu_ns = 0) noexcept {
  s.wins.fetch_add(w.wins, std::memory_order_relaxed);
  s.losses.fetch_add(w.losses, std::memory_order_relaxed);
  s.late_wins.fetch_add(w.late_wins, std::memory_order_relaxed);
  s.win_ns.fetch_add(w.win_ns, std::memory_order_relaxed);
  s.spin_ns.fetch_add(w.spin_ns, std::memory_order_relaxed);
  w = adaptive_window{};
  if (s.wins.load(std::memory_order_relaxed) + s.losses.load(std::memory_order_relaxed) < kAdaptiveWindow)
    return;
  if (s.deciding.exchange(true, std::memory_order_acquire)) return;
  adaptive_window full;
  full.wins = s.wins.exchange(0, std::memory_order_relaxed);
  full.losses = s.losses.exchange(0, std::memory_order_relaxed);
  full.late_wins = s.late_wins.exchange(0, std::memory_order_relaxed);
  full.win_ns = s.win_ns.exchange(0, std::memory_order_relaxed);
  full.spin_ns = s.spin_ns.exchange(0, std::memory_order_relaxed);
  const std::uint64_t now = cpu_ns != 0 ? cpu_ns : process_cpu_ns();
  const std::uint64_t before = s.last_cpu_ns.exchange(now, std::memory_order_relaxed);
  const std::uint64_t interval = before != 0 && now > before ? now - before : 0;
  using field = adaptive_spec::field;
  const adaptive_decision d =
      adapt_budget(s.budget_ns.load(std::memory_order_relaxed), full, interval,
                   {knob_get(knobs, field::min_spin_ns), knob_get(knobs, field::max_spin_ns),
                    knob_get(knobs, field::spin_cpu_pct)});
  s.budget_ns.store(d.budget_ns, std::memory_order_relaxed);
  s.decisions.fetch_add(1, std::memory_order_relaxed);
  s.deciding.store(false, std::memory_order_release);
}

// The calling thread's ends not folded yet, per class; what is left is folded when the thread
// exits, so a short-lived thread's waits still count.
template <class Tag>
struct adaptive_tally {
  adaptive_window w;
  ~adaptive_tally() {
    if (w.ends() > 0) adaptive_fold(adaptive_state<Tag>(), w, knob_word<adaptive_spec, Tag>());
  }
  static adaptive_tally& mine() noexcept {
    static thread_local adaptive_tally t;
    return t;
  }
};

// One spin's end, into the thread's tally; folded every kAdaptiveFold ends.
template <class Tag>
void adaptive_record(bool won, std::uint64_t spun_ns, std::uint32_t budget_ns) noexcept {
  adaptive_window& w = adaptive_tally<Tag>::mine().w;
  w.add(won, spun_ns, budget_ns);
  if (SPINWISE_UNLIKELY(w.ends() >= kAdaptiveFold)) {
    if (adaptive_class_state* s = adaptive_state_now<Tag>())
      adaptive_fold(*s, w, knob_word<adaptive_spec, Tag>());
  }
}

// The first round's ceiling and the cap of a round, in ns.
inline constexpr std::uint32_t kAdaptiveFirstRoundNs = 64;
inline constexpr std::uint32_t kAdaptiveMaxRoundNs = 1024;
// The shortest round a waiter asks for: the first round's c/2.
inline constexpr std::uint32_t kAdaptiveMinRoundNs = kAdaptiveFirstRoundNs / 2;

// The most rounds one spin of `budget_ns` takes: the budget in rounds of the shortest length. A
// round that runs its course counts at least what it asked for, so only rounds that until() ended
// and that measured less than that can reach it: a counter that stands still and a lock word that
// keeps looking free (taken by another thread each time) still end the spin.
constexpr std::uint32_t adaptive_max_rounds(std::uint32_t budget_ns) noexcept {
  return static_cast<std::uint32_t>((std::uint64_t{budget_ns} + kAdaptiveMinRoundNs - 1) /
                                    kAdaptiveMinRoundNs);
}

// The lock's until(), noting in `said` whether it ended the round. An eager predicate stays
// eager: a plain wrapper would drop the lock's request to be polled between counter checks
// (poll_eagerly, detail/clock_bounded_delay.hpp).
template <class Until>
struct noted_until {
  Until& until;
  bool& said;
  bool operator()() const noexcept { return said = static_cast<bool>(until()); }
};
template <class Until>
auto note_until(Until& until, bool& said) noexcept {
  if constexpr (polls_eagerly<std::remove_cv_t<Until>>::value) {
    return poll_eagerly(noted_until<Until>{until, said});
  } else {
    return noted_until<Until>{until, said};
  }
}

// One busy-lock episode of adaptive_policy. It ends (is_completed) once its rounds have spent the
// budget the class had when it began, or after adaptive_max_rounds(budget) rounds, whatever the
// relax table and the counter say (time_round has the rule).
template <class Tag, class Relax>
class adaptive_waiter {
 public:
  using relax = Relax;

  adaptive_waiter() noexcept
      : budget_ns_(start_budget()),
        max_rounds_(adaptive_max_rounds(budget_ns_)),
        completed_(budget_ns_ == 0) {}

  // One round: uniform [c/2, c] ns, c = 64 ns x 2^round capped at 1 us, ended early by until().
  void snooze() noexcept { snooze(never_ready{}); }

  // The class's budget now (its initial value while the class state cannot be had without waiting).
  static std::uint32_t start_budget() noexcept {
    const adaptive_class_state* s = adaptive_state_now<Tag>();
    return s != nullptr ? s->budget_ns.load(std::memory_order_relaxed) : kAdaptiveInitialNs;
  }
  template <class Until>
  void snooze(Until&& until) noexcept {
    const std::uint64_t ceiling = std::min<std::uint64_t>(
        std::uint64_t{kAdaptiveFirstRoundNs} << std::min<std::uint32_t>(rounds_, 8), kAdaptiveMaxRoundNs);
    const std::uint64_t ns = ceiling - jitter_below(static_cast<std::uint32_t>(ceiling / 2 + 1));
    bool ended_early = false;
    std::uint64_t took_ticks;
    const std::uint64_t n = relax_for_ns_timed<Relax>(static_cast<double>(ns), rates_,
                                                      note_until(until, ended_early), took_ticks);
    relaxes_ += n;
    ++rounds_;
    const round_ns t = time_round(took_ticks, n, static_cast<double>(ns), ended_early);
    spent_ns_ += t.spent;
    spun_ns_ += t.spun;
    if (spent_ns_ >= budget_ns_ || rounds_ >= max_rounds_) completed_ = true;
  }
  bool is_completed() const noexcept { return completed_; }
  std::uint32_t rounds() const noexcept { return rounds_; }
  std::uint64_t relaxes() const noexcept { return relaxes_; }

  // How the spin ended (the locks call it through detail::finish_spin): into the class's window.
  void finish(bool won) noexcept {
    adaptive_record<Tag>(won, static_cast<std::uint64_t>(spun_ns_), budget_ns_);
  }

  std::uint32_t budget_ns() const noexcept { return budget_ns_; }
  std::uint32_t max_rounds() const noexcept { return max_rounds_; }
  double spent_ns() const noexcept { return spent_ns_; }  // taken from the budget so far
  double spun_ns() const noexcept { return spun_ns_; }    // what the class will learn from

 private:
  struct round_ns {
    double spent;  // taken from the budget
    double spun;   // spinning time, into the class's window
  };

  // One round's time: the counter's measure (as the delay's own checks took it; without a usable
  // counter, the relaxes at their converted cost) and, for a round that ran its course, at least
  // what it asked for. A round measures nothing when the relax table rounds it to no relaxes (a
  // cost above ~2 us, and a profile may hold up to 100 us, makes a round of <= 1 us 0 relaxes) or
  // when the counter stands still; a budget that such rounds did not spend never ran out, and the
  // waiter spun for as long as the lock was held. A round that until() ended spun less than it
  // asked for and counts what it measured (a win is learnt at its length), and no less than its
  // relaxes at their converted cost; adaptive_max_rounds bounds a run of such rounds.
  // A round longer than twice its request plus 50 us (the statistics' rule for a preemption,
  // detail/wait_core.hpp) is learnt at its request, so that time off the CPU does not read as
  // spinning, but spends the budget at its length: a relax table far below the real cost makes
  // every chunk of relaxes that long, and the budget is what bounds the spin.
  round_ns time_round(std::uint64_t took_ticks, std::uint64_t relaxes, double requested,
                      bool ended_early) const noexcept {
    const double issued = static_cast<double>(relaxes) / rates_.relaxes_per_ns;  // converted by now
    const double floor = ended_early ? issued : std::max(requested, issued);
    if (!(rates_.ticks_per_ns > 0.0)) return {floor, floor};
    const double took = static_cast<double>(took_ticks) / rates_.ticks_per_ns;
    const double spent = std::max(took, floor);
    return {spent, took > 2.0 * requested + 50'000.0 ? requested : spent};
  }

  delay_rates rates_;
  double spent_ns_ = 0;
  double spun_ns_ = 0;
  std::uint64_t relaxes_ = 0;
  std::uint32_t rounds_ = 0;
  std::uint32_t budget_ns_;
  std::uint32_t max_rounds_;
  bool completed_;
};

}  // namespace detail

// Tag: the lock class that learns (every lock of one Tag shares one budget) and whose knobs
// override the process-wide ones; Relax as for every policy.
// name() is "adaptive"; set_<knob>() / <knob>() for each row of SPINWISE_ADAPTIVE_KNOBS.
template <class Tag = void, class Relax = cpu_relaxer>
struct adaptive_policy : detail::adaptive_spec::accessors<detail::knob_api<detail::adaptive_spec, Tag>> {
  using tag = Tag;
  using relax = Relax;
  using waiter = detail::adaptive_waiter<Tag, Relax>;

  // What the class has learnt: the budget a wait starts with now, and decisions made so far.
  static std::uint32_t budget_ns() noexcept {
    return detail::adaptive_state<Tag>().budget_ns.load(std::memory_order_relaxed);
  }
  static std::uint64_t decisions() noexcept {
    return detail::adaptive_state<Tag>().decisions.load(std::memory_order_relaxed);
  }
  // Forgets what was learnt (the budget back to its initial value, the window emptied, the
  // decisions counted from 0). Threads keep their unfolded ends; a decision in flight meanwhile
  // may still store its budget. For tests and for a process whose load changed completely.
  static void relearn() noexcept {
    detail::adaptive_class_state& s = detail::adaptive_state<Tag>();
    s.budget_ns.store(detail::kAdaptiveInitialNs, std::memory_order_relaxed);
    s.decisions.store(0, std::memory_order_relaxed);
    for (std::atomic<std::uint64_t>* c : {&s.wins, &s.losses, &s.late_wins, &s.win_ns, &s.spin_ns})
      c->store(0, std::memory_order_relaxed);
    s.last_cpu_ns.store(0, std::memory_order_relaxed);
  }
};

}  // namespace spinwise
