#pragma once
// Calibration profiles: a versioned JSON document that spinwise-calibrate writes and engines load
// at start-up (spinwise::runtime).
//
// Loading applies the profile's per-CPU cost of the active relax kind to the time-based policies'
// ns-to-relax conversion (install_relax_ns in <spinwise/relax_table.hpp>: every lock on time_policy
// or exp_backoff_policy, the shared latches included) and its counter rate (set_counter_frequency).
// innodb_policy counts relaxes and uses neither. Loading sets no knob: the recommendations a
// profile carries (delay_unit_ns, MySQL's multiplier) are for the reader, and spin_wait_delay,
// delay_unit_ns and spin_loops stay what the engine set. It is all or nothing: a missing,
// unreadable, empty, truncated, malformed, wrong-version, invalid or other-machine profile, or one
// without the active relax kind, returns a status that says so and changes nothing. No input
// crashes the loader (a libFuzzer target runs it in the test suite).
//
// An engine's start-up:
//   if (auto st = spinwise::load_profile_from_env(); !st && st.code != spinwise::profile_errc::not_set)
//     log("spinwise profile not applied: %s", st.message.c_str());   // defaults stay in force
//
// The format, and what applying changes and what not: docs/profile-format.md. Version 1 is the
// only one so far.

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "spinwise/errc.hpp"
#include "spinwise/runtime/calibration.hpp"

namespace spinwise {

inline constexpr int kProfileVersion = 1;
inline constexpr std::string_view kProfileFormat = "spinwise-profile";
inline constexpr std::size_t kMaxProfileBytes = 64u << 20;  // a 1024-CPU profile with --c2c is ~10 MB
inline constexpr int kMaxProfileDepth = 32;                 // the format nests 6 deep

enum class profile_errc : unsigned char {
  ok = 0,
  not_set,        // load_profile_from_env: SPINWISE_PROFILE is unset or empty (not an error)
  not_found,      // no such file
  unreadable,     // exists but cannot be read (permissions, a directory, an I/O error)
  too_large,      // over kMaxProfileBytes
  empty,          // zero bytes or only whitespace
  truncated,      // the JSON ends early (a partial copy, a full disk)
  malformed,      // not JSON, or nested deeper than kMaxProfileDepth
  wrong_version,  // not a spinwise profile, or a version this spinwise cannot read
  invalid,        // JSON of the right version with a missing, mistyped or out-of-range field
  other_machine,  // made on a machine of another type
  kind_missing,   // has no measurement of the active relax kind
  rejected,       // install_relax_ns refused the values
};

}  // namespace spinwise

template <>
struct std::is_error_code_enum<spinwise::profile_errc> : std::true_type {};

namespace spinwise {

std::string_view to_string(profile_errc e) noexcept;

// profile_errc is a std::error_code enum of spinwise's error category (<spinwise/errc.hpp>):
// value kProfileErrcBase + e, so `ec == profile_errc::not_found` holds for a profile_status's code.
static_assert(static_cast<int>(profile_errc::rejected) == detail::kLastProfileErrc,
              "keep detail::kErrcInfo's profile entries in step with profile_errc");
inline std::error_code make_error_code(profile_errc e) noexcept {
  if (e == profile_errc::ok) return {};
  return {kProfileErrcBase + static_cast<int>(e), error_category()};
}

struct profile_status {
  profile_errc code = profile_errc::ok;
  std::string message;  // one line, says what was wrong (with the JSON path) and that nothing changed

  bool ok() const noexcept { return code == profile_errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  std::error_code error_code() const noexcept { return make_error_code(code); }
  operator std::error_code() const noexcept { return error_code(); }
};

struct profile_load_options {
  bool check_machine = true;  // compare the profile's machine with this one (machine_mismatch)
  bool apply = true;          // false: validate only
};

// The profile document of `r` (version kProfileVersion), pretty-printed with `indent` (-1: one line).
std::string profile_to_json(const calibration_result& r, int indent = 2);

// Writes the document to a temporary file next to `path` and renames it into place, so readers
// never see half a profile. False with the reason on failure.
bool write_profile(const std::string& path, const calibration_result& r, std::string* error);

// Parses and validates a document (no machine check, nothing applied).
profile_status parse_profile(std::string_view text, calibration_result& out);
// Reads a profile file (at most kMaxProfileBytes, a regular file) and parses it: nothing applied.
profile_status read_profile(const std::string& path, calibration_result& out);

// Applies a parsed profile to this process: the active relax kind's per-CPU costs (CPUs the
// profile did not measure get the median of their core kind, others the median of all) and the
// counter rate. No knob. All or nothing.
profile_status apply_profile(const calibration_result& profile);

// Parse, check the machine, apply. The file variant reads at most kMaxProfileBytes.
profile_status load_profile_text(std::string_view text, const profile_load_options& opt = {});
profile_status load_profile(const std::string& path, const profile_load_options& opt = {});
// load_profile($SPINWISE_PROFILE); code not_set (and nothing changed) when it is unset or empty.
profile_status load_profile_from_env(const profile_load_options& opt = {});

}  // namespace spinwise
