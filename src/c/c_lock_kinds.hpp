#pragma once
// The mutex kinds of the C front ends (src/c/c_api.cpp's spinwise_mutex_t, src/sqlite/sqlite.cpp's SQLite
// mutexes): each a C++ lock with a statistics class, by the names and in the order of
// <spinwise/spinwise.h>'s spinwise_mutex_kind; and the thread token their recursive mutexes name
// their owner by. Private to the libraries; one of each for both.

#include <string_view>

#include "spinwise/adaptive_policy.hpp"
#include "spinwise/detail/process_state.hpp"
#include "spinwise/hybrid_mutex.hpp"
#include "spinwise/lock_stats.hpp"
#include "spinwise/mcs_mutex.hpp"
#include "spinwise/tas_mutex.hpp"
#include "spinwise/ticket_mutex.hpp"
#include "spinwise/ttas_mutex.hpp"

// A statistics lock class: a type whose `name` is the class's name in the reports.
#define SPINWISE_STATS_CLASS(id, text)             \
  struct id {                                      \
    static constexpr std::string_view name = text; \
  };

namespace spinwise::c_kinds {

// kind::lock<Class>: the kind's C++ lock, counting into the class Class. Every kind but adaptive
// keeps its C++ alias's policy and Tag, so hybrid_mutex.delay_unit_ns tunes a C hybrid mutex as it
// tunes a C++ one; adaptive learns one spin budget per class (its knobs are the adaptive family's).
// The kinds are not made from the library's list of its locks (detail/lock_list.hpp): they are its
// exclusive locks in the order of an ABI enum (spinwise_mutex_kind), and adaptive is a policy.
template <class Alias>
struct alias_kind {
  template <class Class>
  using lock = typename Alias::template with_stats<Class>;
};
using hybrid = alias_kind<hybrid_mutex>;
struct adaptive {
  template <class Class>
  using lock = hybrid_mutex_t<adaptive_policy<Class>, class_stats<Class>>;
};
using tas = alias_kind<tas_mutex>;
using ttas = alias_kind<ttas_mutex>;
using ticket = alias_kind<ticket_mutex>;
using mcs = alias_kind<mcs_mutex>;

// The calling thread's token: the address of its spinwise thread state, the thread_local every
// spinwise module of the process already shares (never null, distinct among live threads). So a
// recursive mutex that a host locked is the same thread's in a plugin with its own copy of the
// library, once the state is shared (detail/process_state.hpp says when it is). It is trivially
// destructible, so it stays valid in pthread key destructors, after the C++ thread_locals' ends.
inline const void* this_thread_token() noexcept { return &detail::this_thread_state(); }

// The names, by spinwise_mutex_kind value, and as an error message lists them.
inline constexpr const char* kNames[] = {"hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"};
inline constexpr const char* kNameList = "hybrid, adaptive, tas, ttas, ticket, mcs";

}  // namespace spinwise::c_kinds
