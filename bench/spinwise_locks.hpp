#pragma once
// spinwise's locks as the tools that measure them know them: spinwise-bench (micro/lock_list.hpp),
// spinwise-stress (stress/lock_catalog.cpp) and spinwise-cell, the harness of bench/compare.sh
// (compare/cell.cpp). A lock the library gains (its header in spinwise.hpp) is one line of
// SPINWISE_BENCH_LOCKS away from all three:
//
//   X(lock, shape, when_spent, order)
//
// lock        the public alias spinwise::lock, and the lock's name on every tool's command line, in
//             its output and its JSON; the tools that need the template use spinwise::lock##_t
// shape       exclusive, or shared (it has lock_shared, and the tools' readers take it shared)
// when_spent  what a waiter does once its spin budget is spent: yields, or parks (sleeps in the
//             kernel until woken)
// order       barging (whoever comes first takes a released lock), or fifo (in arrival order:
//             spinwise-bench holds it to a fairness target the others are not held to)
//
// The peers (std, glibc, oneTBB, abseil) and the policy and statistics variants are each tool's own
// choice and stay in its list.
//
// Older revisions: bench/compare.sh compiles spinwise-cell, and this file with it, against the
// headers of each revision it compares, which may predate a lock of the table. So this file needs
// nothing but spinwise.hpp (in every revision, the umbrella includes all of that revision's locks),
// and a lock the headers lack is named by an incomplete stand-in instead of failing the build:
// declared<R::type> is then false, and the cell leaves that lock out. spinwise-bench and
// spinwise-stress, built against this tree only, instantiate every row, so a row naming no lock
// stops their build.

#include <type_traits>

#include "spinwise/spinwise.hpp"

// Grouped as the tools list them: exclusive locks, then shared ones.
#define SPINWISE_BENCH_LOCKS(X)                  \
  X(tas_mutex, exclusive, yields, barging)       \
  X(ttas_mutex, exclusive, yields, barging)      \
  X(ticket_mutex, exclusive, yields, fifo)       \
  X(mcs_mutex, exclusive, yields, fifo)          \
  X(hybrid_mutex, exclusive, parks, barging)     \
  X(spin_shared_mutex, shared, yields, barging)  \
  X(hybrid_shared_mutex, shared, parks, barging) \
  X(sx_lock, shared, parks, barging)

// The stand-ins: one incomplete type per row, never defined.
namespace spinwise_bench_absent {
#define SPINWISE_BENCH_STAND_IN_(lock, shape, when_spent, order) struct lock;
SPINWISE_BENCH_LOCKS(SPINWISE_BENCH_STAND_IN_)
#undef SPINWISE_BENCH_STAND_IN_
}  // namespace spinwise_bench_absent

namespace spinwise::bench_catalog {

enum class shape : bool { exclusive, shared };
enum class when_spent : bool { yields, parks };
enum class order : bool { barging, fifo };

// A using-directive's names take part in unqualified lookup as members of the nearest namespace
// enclosing both it and the nominated namespace, here the global one: a row's lock name is looked
// up in namespace spinwise first, and reaches its stand-in only where spinwise has no such name.
using namespace ::spinwise_bench_absent;

// One struct per row, <lock>_row: R::type (spinwise::<lock>, or its stand-in), R::name, and the
// row's columns as R::shared, R::parks, R::fifo.
#define SPINWISE_BENCH_ROW_(lock, shape_, when_spent_, order_)                  \
  struct lock##_row {                                                           \
    using type = lock;                                                          \
    static constexpr const char* name = #lock;                                  \
    static constexpr bool shared = shape::shape_ == shape::shared;              \
    static constexpr bool parks = when_spent::when_spent_ == when_spent::parks; \
    static constexpr bool fifo = order::order_ == order::fifo;                  \
  };
SPINWISE_BENCH_LOCKS(SPINWISE_BENCH_ROW_)
#undef SPINWISE_BENCH_ROW_

// False for a stand-in: the headers compiled against lack that lock.
template <class L, class = void>
inline constexpr bool declared = false;
template <class L>
inline constexpr bool declared<L, std::void_t<decltype(sizeof(L))>> = true;

// Calls v(R{}) for every row R, in the table's order.
template <class Visitor>
void each_lock(Visitor&& v) {
#define SPINWISE_BENCH_VISIT_(lock, shape, when_spent, order) v(lock##_row{});
  SPINWISE_BENCH_LOCKS(SPINWISE_BENCH_VISIT_)
#undef SPINWISE_BENCH_VISIT_
}

}  // namespace spinwise::bench_catalog
