#pragma once
// The mutex kinds of the C front ends (src/c_api.cpp's spinwise_mutex_t, src/sqlite.cpp's SQLite
// mutexes): each a C++ lock with a statistics class, by the names and in the order of
// <spinwise/spinwise.h>'s spinwise_mutex_kind. Private to the libraries; one list for both.

#include <string_view>

#include "spinwise/adaptive_policy.hpp"
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
struct hybrid {
  template <class Class>
  using lock = hybrid_mutex::with_stats<Class>;
};
struct adaptive {
  template <class Class>
  using lock = hybrid_mutex_t<adaptive_policy<Class>, class_stats<Class>>;
};
struct tas {
  template <class Class>
  using lock = tas_mutex::with_stats<Class>;
};
struct ttas {
  template <class Class>
  using lock = ttas_mutex::with_stats<Class>;
};
struct ticket {
  template <class Class>
  using lock = ticket_mutex::with_stats<Class>;
};
struct mcs {
  template <class Class>
  using lock = mcs_mutex::with_stats<Class>;
};

// The names, by spinwise_mutex_kind value, and as an error message lists them.
inline constexpr const char* kNames[] = {"hybrid", "adaptive", "tas", "ttas", "ticket", "mcs"};
inline constexpr const char* kNameList = "hybrid, adaptive, tas, ttas, ticket, mcs";

}  // namespace spinwise::c_kinds
