#pragma once
// park_behind_sleepers<Policy, Class>: Policy (its rounds, its budget, its Tag and knobs) for a
// hybrid_mutex whose waits should not spin while another waiter of the same Class sleeps. Such a
// wait parks at once: no round, no yield, and nothing learnt (adaptive_policy hears of no spin).
//
//   using btree_mutex = hybrid_mutex_t<park_behind_sleepers<hybrid_mutex::policy, struct btree>>;
//
// When: critical sections of microseconds (a B-tree operation, a statement step) on a machine
// whose threads outnumber its CPUs. There a sleeping waiter means the lock is held long enough to
// put waiters to sleep, and a CPU given to a spinner is taken from the threads that were woken or
// have other work; a plain futex mutex then uses about half the CPU per operation. With no sleeper
// (two threads on two CPUs, say) the wait is Policy's, spinning included, and keeps its catches.
// Measured: bench/results/sqlite-emr-sleepers/ (SQLite's shared-cache and serialized modes).
//
// When not: short sections (an allocator's lock), where one preempted spinner puts a waiter to
// sleep, and then every wait would park until the sleepers drain: a process-wide rule cost SQLite's
// static_mem most of its lead (bench/results/sqlite-emr-sleepers/). The rule is per Class for that
// reason.
//
// How: the class's parking waits count their sleeps in one atomic (detail/wait_core.hpp's
// sleepers<Policy>), changed around each futex wait, which already costs a system call; a wait
// reads it once, before its first round. Only hybrid_mutex counts its sleeps; the other parking
// locks take Policy's wait unchanged (a static_assert would be wrong: their waits never read it).
// The lock's protocol is unchanged (a wait may always go to the futex after zero rounds:
// tests/models/hybrid_mutex.pml lets it).

namespace spinwise {

template <class Policy, class Class = void>
struct park_behind_sleepers : Policy {
  static constexpr bool kParkBehindSleepers = true;
};

}  // namespace spinwise
