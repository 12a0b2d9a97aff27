// Profile files: the atomic write (temporary file + rename), the bounded read, $SPINWISE_PROFILE.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "profile_internal.hpp"
#include "small_file.hpp"

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
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // Errors name the file asked for; the temporary beside it is an implementation detail.
  if (fd < 0) return fail("cannot create " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail("cannot write " + path + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("cannot write " + path + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
  return true;
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
  const char* path = std::getenv("SPINWISE_PROFILE");
  if (path == nullptr || *path == '\0') {
    return profile_failure(profile_errc::not_set, "SPINWISE_PROFILE is not set; the defaults stay in force");
  }
  return load_profile(path, opt);
}

}  // namespace spinwise
