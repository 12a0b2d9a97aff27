#pragma once
// What a stress run counts about spinning that the library's lock statistics do not.
//
// The time spent in spin delays, the relaxes issued, contended waits, yields and parks come from
// the lock class the stress locks record into (class_stats, lock_catalog.hpp). The stress locks'
// policy wrapper (counted_policy.hpp) adds what only it can see: which rounds delayed, which came
// out zero-length and which were preempted; spin episodes begun and the episodes whose spin budget
// ran out.
//
// A tally is the calling thread's own: plain counters, written and read only by that thread. The
// engine reads a worker's tally around each sub-query and keeps what a measured sub-query added,
// so the figures cover the same sub-queries as every other per-worker figure.

#include <cstdint>

namespace spinwise::stress {

struct spin_tally {
  std::uint64_t delay_rounds = 0;      // rounds that issued relaxes (InnoDB: spin rounds that delayed)
  std::uint64_t zero_rounds = 0;       // rounds whose random delay came out 0
  std::uint64_t preempted_rounds = 0;  // delaying rounds preempted, counted at their relaxes' cost
  std::uint64_t episodes = 0;          // spin episodes begun (a waiter built: the lock was busy)
  std::uint64_t budgets_spent = 0;     // episodes whose spin_loops rounds ran out (then yield / park)

  spin_tally& operator+=(const spin_tally& o) noexcept {
    delay_rounds += o.delay_rounds;
    zero_rounds += o.zero_rounds;
    preempted_rounds += o.preempted_rounds;
    episodes += o.episodes;
    budgets_spent += o.budgets_spent;
    return *this;
  }
  friend spin_tally operator-(spin_tally a, const spin_tally& b) noexcept {
    a.delay_rounds -= b.delay_rounds;
    a.zero_rounds -= b.zero_rounds;
    a.preempted_rounds -= b.preempted_rounds;
    a.episodes -= b.episodes;
    a.budgets_spent -= b.budgets_spent;
    return a;
  }
};

// Constant-initialized, so an access is one TLS-relative load with no guard.
inline thread_local spin_tally t_spin_tally;

inline spin_tally& this_thread_tally() noexcept { return t_spin_tally; }

}  // namespace spinwise::stress
