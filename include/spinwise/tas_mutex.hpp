#pragma once
// tas_mutex: test-and-set spin lock, every attempt an atomic exchange.
//
// The simplest lock there is, kept as the reference point of the family. Each retry is an RMW
// that pulls the lock's line away from the holder (who needs it back to release), so under
// contention waiters slow down the very thread they wait for; backoff between attempts is what
// keeps it usable, hence the default exp_backoff_policy (Anderson 1990). Prefer ttas_mutex, which
// polls with plain loads, and hybrid_mutex wherever waits can be long or threads outnumber CPUs.
//
// Cost: 4 bytes. Uncontended lock+unlock = one xchg + one release store; the lock's line stays in
// the owner's cache while no other thread touches it. Contended, every attempt is an exchange, so
// every attempt moves the line to the waiter and the holder must take it back to release.
// Figures for one machine: bench/results/report.md in the spinwise repository. Spinning is
// bounded by the policy's spin_loops; past it a waiter yields between attempts, so it progresses
// when threads outnumber CPUs (at a yield per attempt).

#include "spinwise/detail/flag_raw.hpp"
#include "spinwise/detail/lock_shell.hpp"
#include "spinwise/exp_backoff_policy.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
using tas_mutex_t = detail::lock_shell<detail::flag_raw<Policy, /*kTestFirst=*/false>, Stats>;

struct tas_mutex_tag;
// Knobs for every tas_mutex: tas_mutex::policy::set_min_delay_ns(...) etc.
using tas_mutex = tas_mutex_t<exp_backoff_policy<tas_mutex_tag>>;

static_assert(sizeof(tas_mutex) == 4, "tas_mutex is one 32-bit word");
static_assert(sizeof(tas_mutex::with_stats<struct tas_mutex_tag>) == 4,
              "statistics live in per-thread shards, not in the lock");

}  // namespace spinwise
