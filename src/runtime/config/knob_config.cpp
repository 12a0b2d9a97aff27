// Knobs from files and the environment, SPINWISE_RELAX's report, and the start-up call.
#include "spinwise/runtime/knob_config.hpp"

#include <cstdlib>
#include <string>

#include "common/small_file.hpp"
#include "spinwise/detail/env.hpp"

namespace spinwise {

knob_config_status load_knobs(const std::string& path) {
  const detail::small_file f = detail::read_small_file(path, kMaxKnobFileBytes);
  if (f.error != detail::small_file_error::none) {
    knob_config_status st;
    st.code = f.error == detail::small_file_error::not_found ? errc::knob_file_not_found
                                                             : errc::knob_file_unreadable;
    const bool named =
        f.error == detail::small_file_error::not_regular || f.error == detail::small_file_error::too_large;
    st.message = "cannot read knob file " + path + (named ? " (it " + f.why + ")" : ": " + f.why) +
                 "; no knob was changed";
    return st;
  }
  knob_config_status st = apply_knobs(f.text, knob_text_format::lines);
  if (!st)
    st.message = path + ":" + std::to_string(st.line) + ": " + st.message.substr(st.message.find(": ") + 2);
  return st;
}

knob_config_status load_knobs_from_env() {
  const char* text = detail::env("SPINWISE_KNOBS");
  if (text == nullptr || *text == '\0') {
    knob_config_status st;
    st.message = "SPINWISE_KNOBS is not set; the knobs keep their values";
    return st;
  }
  knob_config_status st = apply_knobs(text);
  if (st) {
    st.message =
        "SPINWISE_KNOBS applied " + std::to_string(st.applied) + (st.applied == 1 ? " knob" : " knobs");
  } else {
    st.message = "SPINWISE_KNOBS " + st.message;
  }
  return st;
}

relax_env_report check_relax_env() {
  relax_env_report r;
  r.active = active_relax();  // resolves SPINWISE_RELAX as the first cpu_relax() does
  const std::string active(to_string(r.active));
  const char* env = detail::env("SPINWISE_RELAX");
  if (env == nullptr || *env == '\0') {
    r.message = "SPINWISE_RELAX is not set; cpu_relax() issues " + active;
    return r;
  }
  r.set = true;
  const std::string value = env;
  relax_kind wanted{};
  if (!parse_relax_kind(value, wanted)) {
    std::string known;
    for (relax_kind k : kAllRelaxKinds) (known += known.empty() ? "" : ", ") += std::string(to_string(k));
    r.code = errc::relax_unknown;
    r.message = "SPINWISE_RELAX='" + value + "' names no relax kind (known: " + known +
                "); ignored, cpu_relax() issues " + active;
  } else if (!relax_supported(wanted)) {
    r.code = errc::relax_unsupported;
    r.message = "SPINWISE_RELAX=" + value + ": this CPU or the " + std::string(backend_name()) +
                " backend cannot issue " + value + "; ignored, cpu_relax() issues " + active;
  } else {
    r.message = r.active == wanted ? "SPINWISE_RELAX=" + value + " applied; cpu_relax() issues " + active
                                   : "SPINWISE_RELAX=" + value + " is usable, but cpu_relax() issues " +
                                         active + " (chosen before the variable was set, or by set_relax())";
  }
  return r;
}

namespace {

// An unset SPINWISE_PROFILE is no failure (startup_status::ok()).
bool profile_failed(const profile_status& p) noexcept { return !p.ok() && p.code != profile_errc::not_set; }

}  // namespace

std::error_code startup_status::error_code() const noexcept {
  if (profile_failed(profile)) return profile.error_code();
  if (!knobs.ok()) return knobs.error_code();
  return relax.error_code();
}

std::string startup_status::message() const {
  std::string out;
  const auto line = [&out](bool failed, const char* part, const std::string& m) {
    if (failed) out += (out.empty() ? "spinwise " : "\nspinwise ") + std::string(part) + ": " + m;
  };
  line(profile_failed(profile), "profile", profile.message);
  line(!knobs.ok(), "knobs", knobs.message);
  line(!relax.ok(), "relax", relax.message);
  return out;
}

std::string startup_status::notes() const {
  return "spinwise profile: " + profile.message + "\nspinwise knobs: " + knobs.message +
         "\nspinwise relax: " + relax.message;
}

startup_status configure_from_env(const profile_load_options& opt) {
  startup_status st;
  st.profile = load_profile_from_env(opt);
  if (st.profile.ok()) {
    st.profile.message =
        std::string(detail::env("SPINWISE_PROFILE")) +
        (opt.apply ? " applied" : " is valid (not applied: profile_load_options::apply is false)");
  }
  st.knobs = load_knobs_from_env();
  st.relax = check_relax_env();
  return st;
}

}  // namespace spinwise
