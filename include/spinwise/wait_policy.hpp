#pragma once
// Wait policies: how a lock waits while it is busy. Every spinwise lock is a template over one.
//
// The contract a policy P meets (locks and tools rely on exactly this):
//   typename P::waiter w;   built on the stack when an acquisition finds the lock busy; cheap
//                           (one relaxed load of a knob word)
//   w.snooze(until);        one spin round; a policy that hands off promptly ends it early once
//                           until() (a lock's "the word looks free") says true: prompt_time_policy
//                           asks about every 100 ns (every 25 ns on x86 when the lock wraps it in
//                           detail::poll_eagerly, as ttas_mutex and tas_mutex do) and
//                           adaptive_policy at its counter checks. The others let a round run
//                           its course (polling inside a backoff costs throughput on some CPUs:
//                           time_policy.hpp). w.snooze() = never.
//   w.snooze();             one spin round: waits the policy's (randomized) delay through P's
//                           Relax (innodb, no_backoff: a relax count; time, exp_backoff: until a
//                           deadline on the cycle counter, detail/clock_bounded_delay.hpp); never blocks,
//                           never yields
//   w.is_completed();       true once the budget is spent (spin_loops rounds; adaptive: its
//                           class's learnt budget of spinning time). A spin lock then yields
//                           (std::this_thread::yield) between polls for as long as it waits; a
//                           hybrid lock yields once, then parks on a futex.
//   w.rounds();             rounds snoozed so far
//   w.relaxes();            relax instructions issued so far (for statistics, lock_stats.hpp)
//   w.finish(won);          optional: how the spin ended (won: the lock was taken while spinning;
//                           false: the budget ran out). The locks call it; adaptive learns from it.
//   P::name()               "innodb", "time", "exp_backoff", "no_backoff" or "adaptive"
//   P::current(), P::set(settings), P::set(name, value), P::get(name, out), P::reset(),
//   P::reset(name), P::overridden(), and one set_<knob>() / <knob>() pair per knob: see knob_status.hpp.
//
// The policies (one header each):
//   innodb_policy<Tag, Relax>       MySQL-exact: [0, spin_wait_delay) x pause_multiplier relaxes
//   time_policy<Tag, Relax>         the same shape, the unit in ns (delay_unit_ns)
//   prompt_time_policy<Tag, Relax>  time_policy whose rounds end once the word looks free
//   exp_backoff_policy<Tag, Relax>  exponential with jitter and a cap, in ns
//   no_backoff_policy<Tag, Relax>   one relax per poll, the baseline
//   adaptive_policy<Tag, Relax>     a spin budget in time that each Tag (lock class) learns from
//                                   its waits' outcomes, within a cap on its share of process CPU
// Tag = void names the process-wide knobs; another Tag overrides them for the locks that use it
// (each public lock alias has its own Tag, e.g. ttas_mutex::policy). Relax defaults to
// cpu_relaxer; spinwise-stress plugs an emulated PAUSE, the statistics count relaxes through it.
//
// Jitter comes from a per-thread generator (detail/jitter.hpp); seed_spin_jitter(seed) makes the
// calling thread's delays reproducible.

#include "spinwise/adaptive_policy.hpp"
#include "spinwise/cpu_relaxer.hpp"
#include "spinwise/exp_backoff_policy.hpp"
#include "spinwise/innodb_policy.hpp"
#include "spinwise/knob_status.hpp"
#include "spinwise/no_backoff_policy.hpp"
#include "spinwise/time_policy.hpp"
