#pragma once
// errc: spinwise's error codes, their std::error_category (error_category()) and make_error_code.

#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "spinwise/detail/process_state.hpp"

namespace spinwise {

// One error style for spinwise: every status type (knob_status, knob_config_status,
// profile_status, the start-up report) converts to a std::error_code in error_category(), whose
// values are the enumerators below (profile errors are profile_errc + kProfileErrcBase, declared
// in <spinwise/runtime/profile.hpp>). Each code is also equivalent to a std::errc condition
// (detail::kErrcInfo), so `ec == std::errc::invalid_argument` keeps working where code that
// predates the category tested for it.
enum class errc : int {
  knob_out_of_range = 1,     // a value outside its knob's bounds
  unknown_knob = 2,          // no knob of that name in the class or family
  inconsistent_knobs = 3,    // values each in range that break a rule together (exp_backoff min > max)
  unknown_knob_class = 4,    // no lock class or policy family of that name
  duplicate_knob = 5,        // the same knob twice in one batch
  knob_syntax = 6,           // a malformed entry: no '=', no <class>.<knob>, not a number
  knob_file_not_found = 7,   // load_knobs: no such file
  knob_file_unreadable = 8,  // load_knobs: cannot be read, a directory, or too large
  knob_class_exists = 9,     // register_knob_class: the name is taken
  bad_knob_class_name = 10,  // register_knob_class: empty, too long, or not [A-Za-z0-9_]
  no_memory = 11,            // register_knob_class: no memory for the entry
  relax_unknown = 20,        // SPINWISE_RELAX names no relax kind (a typo)
  relax_unsupported = 21,    // SPINWISE_RELAX names a kind this CPU or build cannot issue
  unknown_stats_class = 30,  // a run-time statistics switch names no lock class in use
  watchdog_running = 31,     // start_watchdog: it runs already (stop it first)
};

// profile_errc e (<spinwise/runtime/profile.hpp>) is the value kProfileErrcBase + e.
inline constexpr int kProfileErrcBase = 100;

}  // namespace spinwise

template <>
struct std::is_error_code_enum<spinwise::errc> : std::true_type {};

namespace spinwise {

namespace detail {

// Every value of the category: its message, and the generic condition it is equivalent to
// (std::errc{}: none). profile_errc's values follow the order profile.hpp declares them in (a
// static_assert there keeps them in step).
struct errc_info {
  int value;
  const char* message;
  std::errc condition;
};

inline constexpr errc_info kErrcInfo[] = {
    {1, "knob value out of range", std::errc::argument_out_of_domain},
    {2, "unknown knob", std::errc::invalid_argument},
    {3, "inconsistent knob values", std::errc::invalid_argument},
    {4, "unknown knob class", std::errc::invalid_argument},
    {5, "knob set twice in one batch", std::errc::invalid_argument},
    {6, "malformed knob entry", std::errc::invalid_argument},
    {7, "knob file not found", std::errc::no_such_file_or_directory},
    {8, "knob file unreadable", std::errc::io_error},
    {9, "knob class already registered", std::errc::file_exists},
    {10, "invalid knob class name", std::errc::invalid_argument},
    {11, "out of memory", std::errc::not_enough_memory},
    {20, "SPINWISE_RELAX names no relax kind", std::errc::invalid_argument},
    {21, "SPINWISE_RELAX names a kind this CPU cannot issue", std::errc::not_supported},
    {30, "no lock class of that name is in use", std::errc::invalid_argument},
    {31, "the stuck-wait watchdog runs already", std::errc::device_or_resource_busy},
    {kProfileErrcBase + 1, "SPINWISE_PROFILE is not set", std::errc{}},  // not an error of any errno kind
    {kProfileErrcBase + 2, "profile not found", std::errc::no_such_file_or_directory},
    {kProfileErrcBase + 3, "profile unreadable", std::errc::io_error},
    {kProfileErrcBase + 4, "profile too large", std::errc::file_too_large},
    {kProfileErrcBase + 5, "profile empty", std::errc::invalid_argument},
    {kProfileErrcBase + 6, "profile truncated", std::errc::invalid_argument},
    {kProfileErrcBase + 7, "profile malformed", std::errc::invalid_argument},
    {kProfileErrcBase + 8, "profile of a wrong version", std::errc::invalid_argument},
    {kProfileErrcBase + 9, "profile invalid", std::errc::invalid_argument},
    {kProfileErrcBase + 10, "profile made on another machine", std::errc::invalid_argument},
    {kProfileErrcBase + 11, "profile lacks the active relax kind", std::errc::invalid_argument},
    {kProfileErrcBase + 12, "profile rejected", std::errc::invalid_argument},
};
inline constexpr int kLastProfileErrc = 12;

constexpr const errc_info* find_errc_info(int ev) noexcept {
  for (const errc_info& i : kErrcInfo) {
    if (i.value == ev) return &i;
  }
  return nullptr;
}

// The category is one object per process, like the rest of spinwise's process-wide state
// (detail/process_state.hpp): std::error_code compares categories by address, so a per-module copy
// would make a plugin's error unequal to the host's. Default visibility and an inline variable:
// the dynamic linker unifies it across modules.
class SPINWISE_PROCESS_WIDE error_category_v1 final : public std::error_category {
 public:
  const char* name() const noexcept override { return "spinwise"; }

  std::string message(int ev) const override {
    if (ev == 0) return "success";
    const errc_info* i = find_errc_info(ev);
    return i != nullptr ? i->message : "unknown spinwise error";
  }

  std::error_condition default_error_condition(int ev) const noexcept override {
    const errc_info* i = find_errc_info(ev);
    if (i == nullptr || i->condition == std::errc{}) return {ev, *this};
    return i->condition;
  }
};

SPINWISE_PROCESS_WIDE inline error_category_v1 shared_error_category_v1;

}  // namespace detail

// spinwise's error category ("spinwise"), one per process.
inline const std::error_category& error_category() noexcept { return detail::shared_error_category_v1; }

inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

}  // namespace spinwise
