#pragma once
// The skeleton every wait policy shares (wait_policy.hpp states the contract): the knob interface,
// the spin budget and the waiter. A policy adds only its delay rule, which spends one round's
// delay through Relax and returns the relaxes it issued, and the accessors named after its knobs.
//
//   struct my_rule {                          // per-wait state, if any (e.g. a conversion rate)
//     template <class Relax>
//     std::uint64_t delay(std::uint64_t knobs, std::uint32_t round) noexcept;
//   };
//   template <class Tag, class Relax>
//   struct my_policy : detail::policy_base<my_spec, Tag, Relax, my_rule> { ... };
//
// The waiter re-reads the knob word every round (one relaxed load, two with a Tag override), so
// a change made while a thread spins applies from its next round, the budget included.

#include <cstdint>

#include "spinwise/detail/knob_store.hpp"
#include "spinwise/knobs.hpp"

namespace spinwise::detail {

// One busy-lock episode: up to spin_loops rounds (the Spec's field kSpinLoops), each the Rule's
// delay, its relaxes counted for the statistics.
template <class Spec, class Tag, class Relax, class Rule>
class rounds_waiter {
 public:
  using relax = Relax;  // what snooze() issues: statistics price a snooze by it

  rounds_waiter() noexcept : loops_(knob_get(knob_word<Spec, Tag>(), Spec::kSpinLoops)) {}

  // One round. Never blocks, never yields.
  void snooze() noexcept {
    const std::uint64_t w = knob_word<Spec, Tag>();
    loops_ = knob_get(w, Spec::kSpinLoops);
    relaxes_ += rule_.template delay<Relax>(w, rounds_);
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
