#pragma once
// rw_spinlock: the name spin_shared_mutex had before 0.2.0, kept so that code written against it
// compiles unchanged (the same type, the same knobs).

#include "spinwise/lock_stats.hpp"
#include "spinwise/spin_shared_mutex.hpp"

namespace spinwise {

template <class Policy, class Stats = no_stats>
using rw_spinlock_t = spin_shared_mutex_t<Policy, Stats>;
using rw_spinlock = spin_shared_mutex;
using rw_spinlock_tag = spin_shared_mutex_tag;

}  // namespace spinwise
