#pragma once
// Knobs from configuration, and the one start-up call (spinwise::runtime).
//
//   SPINWISE_PROFILE=/etc/spinwise/profile.json      a calibration profile (profile.hpp)
//   SPINWISE_KNOBS="hybrid_mutex.spin_wait_delay=6,time.delay_unit_ns=150"
//   SPINWISE_RELAX=isb                                the relax instruction (arch.hpp)
//
// configure_from_env() loads the profile (relax costs and the counter rate, never a knob), then
// applies the knobs (the two change disjoint things, so their order only fixes the report's), then reports
// what became of SPINWISE_RELAX, which cpu_relax() reads by itself at first use and silently ignores when it
// names no kind (a typo) or one this CPU cannot issue. Each part succeeds or fails on its own and all or
// nothing: a part that fails changes nothing and its defaults stay in force. An engine logs the problems,
// and if it likes the full outcome:
//
//   const spinwise::startup_status st = spinwise::configure_from_env();
//   if (!st.ok()) log_warning("%s", st.message().c_str());  // only the parts that failed
//   log_info("%s", st.notes().c_str());                      // every part, unset ones included
//
// The knob syntax <spinwise/knob_text.hpp>, the registry <spinwise/knob_class.hpp>, the errors
// <spinwise/errc.hpp>; docs/knobs.md is the manual.

#include <cstddef>
#include <string>
#include <system_error>

#include "spinwise/arch.hpp"
#include "spinwise/errc.hpp"
#include "spinwise/knob_text.hpp"
#include "spinwise/runtime/profile.hpp"

namespace spinwise {

inline constexpr std::size_t kMaxKnobFileBytes = 1u << 20;

// Reads a knob file and applies it: one "<class>.<knob> = <value>" per line, '#' comments, blank
// lines and whitespace ignored (apply_knobs with knob_text_format::lines). All or nothing; a
// message starts with "<path>:<line>: ". A missing file is errc::knob_file_not_found, an
// unreadable one (or a directory, or one over kMaxKnobFileBytes) errc::knob_file_unreadable.
knob_config_status load_knobs(const std::string& path);

// apply_knobs($SPINWISE_KNOBS). Unset or empty: ok, nothing applied, message says so.
// The message of an ok outcome says how many knobs were applied (for the log).
knob_config_status load_knobs_from_env();

// What became of SPINWISE_RELAX.
struct relax_env_report {
  errc code{};          // errc::relax_unknown, errc::relax_unsupported, or errc{} (unset, empty or applied)
  bool set = false;     // SPINWISE_RELAX is set and not empty
  relax_kind active{};  // what cpu_relax() issues now
  std::string message;  // one line, for the log

  bool ok() const noexcept { return code == errc{}; }
  explicit operator bool() const noexcept { return ok(); }
  std::error_code error_code() const noexcept { return ok() ? std::error_code{} : make_error_code(code); }
  operator std::error_code() const noexcept { return error_code(); }
};

// Resolves the active relax kind (as the first cpu_relax() would) and says whether SPINWISE_RELAX
// took effect: errc::relax_unknown for a name that is no relax kind, errc::relax_unsupported for a
// kind this CPU or this build's backend cannot issue (both ignored: the backend default is used).
relax_env_report check_relax_env();

// The outcome of configure_from_env(), part by part.
struct startup_status {
  profile_status profile;    // profile_errc::not_set when SPINWISE_PROFILE is unset (not a failure)
  knob_config_status knobs;  // ok with applied == 0 when SPINWISE_KNOBS is unset
  relax_env_report relax;

  // No part failed (an unset variable is not a failure).
  bool ok() const noexcept {
    return (profile.ok() || profile.code == profile_errc::not_set) && knobs.ok() && relax.ok();
  }
  explicit operator bool() const noexcept { return ok(); }
  // The first failure's code (profile, knobs, relax), or no error.
  std::error_code error_code() const noexcept;
  // One line per part that failed ("spinwise profile: ...", "spinwise knobs: ...", "spinwise relax:
  // ..."), in that order; empty when ok(). An unset variable is no failure and is not here.
  std::string message() const;
  // Three lines, one per part as message() writes them, each part's outcome whether it failed or
  // not ("SPINWISE_PROFILE is not set; the defaults stay in force", "SPINWISE_KNOBS applied 2
  // knobs"): for an informational log line.
  std::string notes() const;
};

// Loads $SPINWISE_PROFILE (load_profile_from_env(opt)), applies $SPINWISE_KNOBS
// (load_knobs_from_env()) and checks $SPINWISE_RELAX (check_relax_env()). Call it once at
// start-up, before the engine's threads wait on locks (it is thread-safe, but waits that began
// before it keep the values they read). Never throws but for std::bad_alloc.
startup_status configure_from_env(const profile_load_options& opt = {});

}  // namespace spinwise
