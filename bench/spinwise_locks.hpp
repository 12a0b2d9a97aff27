#pragma once
// spinwise's locks as the tools that measure them know them: spinwise-bench (micro/lock_list.hpp),
// spinwise-stress (stress/lock_catalog.cpp) and spinwise-cell, the harness of bench/compare.sh
// (compare/cell.cpp). The rows are the library's list of its locks, SPINWISE_LOCKS
// (include/spinwise/detail/lock_list.hpp, which says what each column means): a lock the library
// gains is measured by all three. The tools use a row's lock name on their command lines, in their
// output and JSON, spinwise::lock##_t where they need the template; spinwise-bench holds a fifo
// lock to a fairness target the others are not held to.
//
// The peers (std, glibc, oneTBB, abseil) and the policy and statistics variants are each tool's own
// choice and stay in its list.
//
// Older revisions: bench/compare.sh compiles spinwise-cell, and this file with it, against the
// headers of each revision it compares, which may predate a lock of the table. So this file needs
// nothing but spinwise.hpp (in every revision, the umbrella includes all of that revision's locks)
// and the table of this checkout, read by its path here after the revision's own (if it has one)
// is undefined; a lock the headers lack is named by an incomplete stand-in instead of failing the
// build:
// declared<R::type> is then false, and the cell leaves that lock out. spinwise-bench and
// spinwise-stress, built against this tree only, instantiate every row, so a row naming no lock
// stops their build.

#include <type_traits>

#include "spinwise/spinwise.hpp"
// This checkout's table, not the revision's.
#undef SPINWISE_LOCKS
#undef SPINWISE_LOCK_ALIASES
#include "../include/spinwise/detail/lock_list.hpp"

// The stand-ins: one incomplete type per row, never defined.
namespace spinwise_bench_absent {
#define SPINWISE_BENCH_STAND_IN_(lock, shape, when_spent, order) struct lock;
SPINWISE_LOCKS(SPINWISE_BENCH_STAND_IN_)
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
SPINWISE_LOCKS(SPINWISE_BENCH_ROW_)
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
  SPINWISE_LOCKS(SPINWISE_BENCH_VISIT_)
#undef SPINWISE_BENCH_VISIT_
}

}  // namespace spinwise::bench_catalog
