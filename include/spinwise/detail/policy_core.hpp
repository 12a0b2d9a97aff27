#pragma once
// The skeleton every wait policy shares (wait_policy.hpp states the contract): the knob interface,
// the spin budget and the waiter. A policy adds only its delay rule, which spends one round's
// delay through Relax and returns the relaxes it issued, and the accessors named after its knobs.
//
//   struct my_rule {                          // per-wait state, if any (e.g. a conversion rate)
//     template <class Relax, class Until>
//     std::uint64_t delay(std::uint64_t knobs, std::uint32_t round, Until& until) noexcept;
//   };
//
// `until` is the lock's "may I stop waiting?" (the word looks free): a rule that hands off
// promptly asks it between chunks of relaxes and ends the round when it says true
// (prompt_time_policy's, via relax_for_ns, at each counter check, or every kDelayPollNs when the
// lock wrapped it in poll_eagerly: pass `until` on unchanged, or that request is lost). A rule
// may ignore it, and the defaults' do: innodb (MySQL's ut_delay counts instructions and does not
// look), time and exp_backoff (each poll inside a backoff is a load of the holder's line). A rule
// with the two-argument delay(knobs, round) never ends early.
//   template <class Tag, class Relax>
//   struct my_policy : detail::policy_base<my_spec, Tag, Relax, my_rule> { ... };
//
// The waiter re-reads the knob word every round (one relaxed load, two with a Tag override), so
// a change made while a thread spins applies from its next round, the budget included.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/detail/clock_bounded_delay.hpp"
#include "spinwise/detail/knob_word.hpp"
#include "spinwise/knob_status.hpp"

namespace spinwise::detail {

template <class Rule, class Relax, class Until, class = void>
struct rule_takes_until : std::false_type {};
template <class Rule, class Relax, class Until>
struct rule_takes_until<Rule, Relax, Until,
                        std::void_t<decltype(std::declval<Rule&>().template delay<Relax>(
                            std::uint64_t{}, std::uint32_t{}, std::declval<Until&>()))>> : std::true_type {};

// One busy-lock episode: up to spin_loops rounds (the Spec's field kSpinLoops), each the Rule's
// delay, its relaxes counted for the statistics.
template <class Spec, class Tag, class Relax, class Rule>
class rounds_waiter {
 public:
  using relax = Relax;  // what snooze() issues: statistics price a snooze by it

  rounds_waiter() noexcept : loops_(knob_get(knob_word<Spec, Tag>(), Spec::kSpinLoops)) {}

  // One round. Never blocks, never yields. The round ends early once until() says true
  // (asked at each counter check by the time rules, ~100 ns, or every kDelayPollNs for a
  // poll_eagerly predicate; see the rule contract above).
  void snooze() noexcept { snooze(never_ready{}); }
  template <class Until>
  void snooze(Until&& until) noexcept {
    const std::uint64_t w = knob_word<Spec, Tag>();
    loops_ = knob_get(w, Spec::kSpinLoops);
    if constexpr (rule_takes_until<Rule, Relax, std::remove_reference_t<Until>>::value) {
      relaxes_ += rule_.template delay<Relax>(w, rounds_, until);
    } else {
      relaxes_ += rule_.template delay<Relax>(w, rounds_);
    }
    ++rounds_;
  }
  // The spin budget is spent: yield (spin locks) or yield once and park (hybrid locks).
  bool is_completed() const noexcept { return rounds_ >= loops_; }
  std::uint32_t rounds() const noexcept { return rounds_; }
  std::uint64_t relaxes() const noexcept { return relaxes_; }  // issued so far (statistics)

 private:
  Rule rule_;
  std::uint64_t relaxes_ = 0;
  std::uint32_t rounds_ = 0;
  std::uint32_t loops_;
};

// w.snooze(until) where the waiter takes a predicate (every spinwise policy's does), else
// w.snooze(): a policy written to the older contract still works, its rounds just never end early.
template <class Waiter, class Until, class = void>
struct waiter_takes_until : std::false_type {};
template <class Waiter, class Until>
struct waiter_takes_until<Waiter, Until,
                          std::void_t<decltype(std::declval<Waiter&>().snooze(std::declval<Until&>()))>>
    : std::true_type {};

template <class Waiter, class Until>
SPINWISE_ALWAYS_INLINE void snooze_until(Waiter& w, Until& until) noexcept {
  if constexpr (waiter_takes_until<Waiter, Until>::value) {
    w.snooze(until);
  } else {
    w.snooze();
  }
}

// Tells a waiter how its spinning ended, where it wants to know (adaptive_policy learns from it):
// won = the lock was taken while the waiter spun; false = its budget ran out first.
template <class Waiter, class = void>
struct waiter_learns : std::false_type {};
template <class Waiter>
struct waiter_learns<Waiter, std::void_t<decltype(std::declval<Waiter&>().finish(true))>> : std::true_type {};

template <class Waiter>
SPINWISE_ALWAYS_INLINE void finish_spin(Waiter& w, bool won) noexcept {
  if constexpr (waiter_learns<Waiter>::value) w.finish(won);
}

// The static side of a policy: its knobs (knob_api), its types and the spin budget every policy
// has. Tag = void: the process-wide knobs; any other Tag: per-field overrides for the locks using
// it. Relax: what a round issues (cpu_relaxer, or an emulated relax).
template <class Spec, class Tag, class Relax, class Rule>
struct policy_base : knob_api<Spec, Tag> {
  using tag = Tag;
  using relax = Relax;
  using waiter = rounds_waiter<Spec, Tag, Relax, Rule>;

  static knob_status set_spin_loops(std::uint32_t v) noexcept { return api::set_field(Spec::kSpinLoops, v); }
  static std::uint32_t spin_loops() noexcept { return field(Spec::kSpinLoops); }

 protected:
  using api = knob_api<Spec, Tag>;
  static std::uint32_t field(std::size_t i) noexcept { return knob_get(knob_word<Spec, Tag>(), i); }
};

}  // namespace spinwise::detail
