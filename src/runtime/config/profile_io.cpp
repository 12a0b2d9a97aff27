// Profile files: the atomic write (runtime/atomic_file.hpp), the bounded read, $SPINWISE_PROFILE.
#include <cstdlib>
#include <exception>

#include "common/small_file.hpp"
#include "config/profile_internal.hpp"
#include "spinwise/detail/env.hpp"
#include "spinwise/runtime/atomic_file.hpp"

namespace spinwise {

using detail::kProfileUnchanged;
using detail::profile_failure;

bool write_profile(const std::string& path, const calibration_result& r, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  std::string text;
  try {
    text = profile_to_json(r);
  } catch (const std::exception& e) {
    return fail(std::string("could not build the profile: ") + e.what());
  }
  return write_file_atomically(path, text, error);
}

namespace {

// The file's text (bounded, regular files only), or why not.
profile_status read_profile_text(const std::string& path, std::string& text) {
  detail::small_file f;
  try {
    f = detail::read_small_file(path, kMaxProfileBytes);
  } catch (const std::exception& e) {
    return profile_failure(profile_errc::unreadable,
                           "cannot read profile " + path + ": " + e.what() + kProfileUnchanged);
  }
  switch (f.error) {
    case detail::small_file_error::none:
      break;
    case detail::small_file_error::not_found:
    case detail::small_file_error::cannot_open:
      return profile_failure(
          f.error == detail::small_file_error::not_found ? profile_errc::not_found : profile_errc::unreadable,
          "cannot open profile " + path + ": " + f.why + kProfileUnchanged);
    case detail::small_file_error::not_regular:
      return profile_failure(profile_errc::unreadable, "profile " + path + " " + f.why + kProfileUnchanged);
    case detail::small_file_error::cannot_read:
      return profile_failure(profile_errc::unreadable,
                             "cannot read profile " + path + ": " + f.why + kProfileUnchanged);
    case detail::small_file_error::too_large:
      return profile_failure(profile_errc::too_large, "profile " + path + " is larger than " +
                                                          std::to_string(kMaxProfileBytes >> 20) + " MiB" +
                                                          kProfileUnchanged);
  }
  text = std::move(f.text);
  return {};
}

}  // namespace

profile_status read_profile(const std::string& path, calibration_result& out) {
  std::string text;
  if (profile_status st = read_profile_text(path, text); !st) return st;
  profile_status st = parse_profile(text, out);
  if (!st) st.message = path + ": " + st.message;
  return st;
}

profile_status load_profile(const std::string& path, const profile_load_options& opt) {
  std::string text;
  if (profile_status st = read_profile_text(path, text); !st) return st;
  profile_status st = load_profile_text(text, opt);
  if (!st) st.message = path + ": " + st.message;
  return st;
}

profile_status load_profile_from_env(const profile_load_options& opt) {
  const char* path = detail::env("SPINWISE_PROFILE");
  if (path == nullptr || *path == '\0') {
    return profile_failure(profile_errc::not_set, "SPINWISE_PROFILE is not set; the defaults stay in force");
  }
  return load_profile(path, opt);
}

}  // namespace spinwise
