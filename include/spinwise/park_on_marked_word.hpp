#pragma once
// park_on_marked_word<Policy>: Policy (its rounds, its budget, its Tag and knobs) for a
// hybrid_mutex whose waits do not spin on a lock that has a sleeper of its own. A wait episode
// that starts on a marked lock word (2: a waiter may sleep there) parks at once: no round, no
// yield, nothing learnt. An episode that starts on a word merely held (1) is Policy's, spinning
// included, a woken waiter's next episode too (parking every episode after a waiter's first
// sleep as well was tried and cost the bounded buffer most of its gain: measured in
// bench/results/programs-zen4/).
//
//   using engine_mutex = hybrid_mutex_t<park_on_marked_word<hybrid_mutex::policy>>;
//
// When: a lock whose users you do not know (the LD_PRELOAD interposer's): once a lock has put a
// waiter to sleep, its waits are glibc's (mark the word, sleep, the unlock wakes one), so a lock
// held across a sched_yield() or a long section costs what a futex mutex costs, not a spin budget
// per wait on top; a burst of short waits on a quiet lock still spins and is caught. The rule is
// per lock (park_behind_sleepers.hpp's is per class of locks).
//
// How: the lock passes "marked" to its wait's step (detail/wait_core.hpp); the protocol is
// unchanged (a wait may always go to the futex after zero rounds: tests/models/hybrid_mutex.pml).

namespace spinwise {

template <class Policy>
struct park_on_marked_word : Policy {
  static constexpr bool kParkOnMarkedWord = true;
};

}  // namespace spinwise
