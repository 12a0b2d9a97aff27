#pragma once
// ttas_mutex: test-and-test-and-set spin lock (InnoDB's TTASMutex), the default spinwise spin lock.
//
// A waiter polls the word with plain loads, which keep its copy of the line shared, and tries
// the exchange only when the lock looks free; between polls it waits per its policy, for at most
// spin_loops rounds, then yields between polls. Unfair: a releasing thread can re-take the lock
// before a waiter notices (TTAS at 2 threads: per-thread op-count CoV 0.13-0.23 on our VM).
//
// When not to use it: when waits can be long (use hybrid_mutex, which parks), when threads
// routinely outnumber CPUs (yielding spinners still burn the slices the holder needs), or when
// you need FIFO fairness (ticket_mutex, mcs_mutex).
//
// Default policy: time_policy. It is InnoDB's algorithm (random [0, spin_wait_delay) units per
// round, 30 rounds, defaults 6 / 30) with the unit given in time, 200 ns, what it was on the CPUs
// InnoDB's defaults were tuned on; innodb_policy would make the same wait 3x longer on our
// Emerald Rapids VM and 14x on Skylake. Use ttas_mutex_t<innodb_policy<>> to replay MySQL exactly.
//
// Cost: 4 bytes. Uncontended lock+unlock = one xchg + one release store, nothing else: the
// policy is only consulted once the lock was found busy, and the lock's line stays in the owner's
// cache while no other thread touches it. A waiter polls with plain loads, so it holds a shared
// copy and moves no line while the holder keeps the lock; a release costs it one line transfer
// to see the word free and another for its exchange. Figures for one machine:
// bench/results/report.md in the spinwise repository.

#include <type_traits>

#include "spinwise/config.hpp"
#include "spinwise/detail/flag_word.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/detail/wait_core.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

namespace detail {

// The algorithm (the shell, detail/lock_shell.hpp, makes it a lock).
template <class Policy>
class ttas_raw : public flag_word {
 public:
  using policy = Policy;

 protected:
  // No load first: on an uncontended lock it would only add a shared->exclusive upgrade of the
  // line.
  bool acquire_fast() noexcept { return exchange_free(); }
  // A busy lock costs a load, not a stolen line.
  bool try_acquire() noexcept { return looks_free() && exchange_free(); }

  // InnoDB's spin: poll, wait a round, poll again; try the exchange only on a free-looking word
  // and, if another thread won it, keep going on the same budget (MySQL is_free + try_lock).
  // Where the policy hands off promptly (prompt_time_policy), a round ends early once the word
  // looks free, polled every kDelayPollNs of relaxes (25 ns on x86) rather than at each counter
  // check; time_policy's rounds run their course. Budget spent: a yield per poll, to let a
  // preempted holder run.
  template <class Stats, class Deadline>
  SPINWISE_COLD bool acquire_slow(const Deadline& d, lock_site site) noexcept {
    spin_then_yield<Policy, Stats> wt(this, lock_mode::x, site);
    do {
      while (!looks_free()) {
        if (d.expired()) return false;
        wt.pause(poll_eagerly([this] { return looks_free(); }));
      }
    } while (!exchange_free());
    wt.entered();
    return true;
  }
};

}  // namespace detail

template <class Policy, class Stats = no_stats>
using ttas_mutex_t = detail::lock_shell<detail::ttas_raw<Policy>, Stats>;

struct ttas_mutex_tag;
// Knobs for every ttas_mutex: ttas_mutex::policy::set_spin_wait_delay(...) etc.
using ttas_mutex = ttas_mutex_t<time_policy<ttas_mutex_tag>>;

static_assert(sizeof(ttas_mutex) == 4, "ttas_mutex is one 32-bit word");

}  // namespace spinwise
