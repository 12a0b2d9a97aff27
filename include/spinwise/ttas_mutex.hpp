#pragma once
// ttas_mutex: test-and-test-and-set spin lock (InnoDB's TTASMutex), the default spinwise spin lock.
//
// A waiter polls the word with plain loads, which keep its copy of the line shared, and tries
// the exchange only when the lock looks free; between polls it waits per its policy, for at most
// spin_loops rounds, then yields between polls. Unfair: a releasing thread can re-take the lock
// before a waiter notices (TTAS at 2 threads: per-thread op counts come out uneven).
//
// When not to use it: when waits can be long (use hybrid_mutex, which parks), when threads
// routinely outnumber CPUs (yielding spinners still burn the slices the holder needs), or when
// you need FIFO fairness (ticket_mutex, mcs_mutex).
//
// Default policy: time_policy. It is InnoDB's algorithm (random [0, spin_wait_delay) units per
// round, 30 rounds, defaults 6 / 30) with the unit given in time, 200 ns, what it was on the CPUs
// InnoDB's defaults were tuned on; innodb_policy would make the same wait 3x longer on an Emerald
// Rapids with a ~13 ns PAUSE (bench/results/calibration-vms/README.md) and 14x on Skylake. Use
// ttas_mutex_t<innodb_policy<>> to replay MySQL exactly.
//
// Cost: 4 bytes. Uncontended lock+unlock = one xchg + one release store, nothing else: the
// policy is only consulted once the lock was found busy, and the lock's line stays in the owner's
// cache while no other thread touches it. A waiter polls with plain loads, so it holds a shared
// copy and moves no line while the holder keeps the lock; a release costs it one line transfer
// to see the word free and another for its exchange. Figures for one machine:
// bench/results/report.md in the spinwise repository.

#include "spinwise/detail/flag_raw.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/time_policy.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
using ttas_mutex_t = detail::lock_shell<detail::flag_raw<Policy, /*kTestFirst=*/true>, Stats>;

struct ttas_mutex_tag;
// Knobs for every ttas_mutex: ttas_mutex::policy::set_spin_wait_delay(...) etc.
using ttas_mutex = ttas_mutex_t<time_policy<ttas_mutex_tag>>;

static_assert(sizeof(ttas_mutex) == 4, "ttas_mutex is one 32-bit word");
static_assert(sizeof(ttas_mutex::with_stats<struct ttas_mutex_tag>) == 4,
              "statistics live in per-thread shards, not in the lock");

}  // namespace spinwise
