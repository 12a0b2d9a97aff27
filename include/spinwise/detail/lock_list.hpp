// spinwise's locks, listed once: a row per public lock alias spinwise::<lock> (its header
// <spinwise/<lock>.hpp>, which spinwise.hpp includes), exclusive locks first, then shared ones.
//
//   X(lock, shape, when_spent, order)
//
// lock        the public alias, and the lock's name wherever spinwise names it: a knob class
//             (knob_class.hpp), the tools' command lines, output and JSON (bench/spinwise_locks.hpp)
// shape       exclusive, or shared (it has lock_shared)
// when_spent  what a waiter does once its spin budget is spent: yields, or parks (sleeps in the
//             kernel until woken)
// order       barging (whoever comes first takes a released lock), or fifo (in arrival order)
//
// Not made from it, and why: spinwise.hpp's includes (an #include cannot come from a macro); the
// C API's mutex kinds (src/c/c_lock_kinds.hpp), the exclusive locks in the order of an ABI enum
// (<spinwise/spinwise.h>) and a policy variant (adaptive); the interposer's kinds
// (src/preload/interposer.hpp), the locks that fit beside glibc's fields and survive fork().
//
// No #include and no code, only the table, and no #pragma once: the same definitions twice are
// allowed, and bench/spinwise_locks.hpp puts this file of its own checkout in place of the table of
// an older revision's headers (bench/compare.sh), which may be this very file.
#define SPINWISE_LOCKS(X)                        \
  X(tas_mutex, exclusive, yields, barging)       \
  X(ttas_mutex, exclusive, yields, barging)      \
  X(ticket_mutex, exclusive, yields, fifo)       \
  X(mcs_mutex, exclusive, yields, fifo)          \
  X(hybrid_mutex, exclusive, parks, barging)     \
  X(spin_shared_mutex, shared, yields, barging)  \
  X(hybrid_shared_mutex, shared, parks, barging) \
  X(sx_lock, shared, parks, barging)

// Other names of a lock, X(name, lock): the same type under a second public alias.
#define SPINWISE_LOCK_ALIASES(X) X(rw_spinlock, spin_shared_mutex)
