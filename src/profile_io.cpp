// Profile files: the atomic write (temporary file + rename), the bounded read, $SPINWISE_PROFILE.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "profile_internal.hpp"

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
  if (fd < 0) return fail("cannot create " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail("cannot write " + tmp + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("cannot write " + tmp + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
  return true;
}

profile_status load_profile(const std::string& path, const profile_load_options& opt) {
  std::string text;
  try {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      return profile_failure(e == ENOENT || e == ENOTDIR ? profile_errc::not_found : profile_errc::unreadable,
                             "cannot open profile " + path + ": " + std::strerror(e) + kProfileUnchanged);
    }
    struct stat sb {};
    if (::fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      ::close(fd);
      return profile_failure(profile_errc::unreadable,
                             "profile " + path + " is a directory" + kProfileUnchanged);
    }
    char buf[65536];
    for (;;) {
      const ssize_t got = ::read(fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        const int e = errno;
        ::close(fd);
        return profile_failure(profile_errc::unreadable,
                               "cannot read profile " + path + ": " + std::strerror(e) + kProfileUnchanged);
      }
      if (got == 0) break;
      text.append(buf, static_cast<std::size_t>(got));
      if (text.size() > kMaxProfileBytes) {
        ::close(fd);
        return profile_failure(profile_errc::too_large, "profile " + path + " is larger than " +
                                                            std::to_string(kMaxProfileBytes >> 20) + " MiB" +
                                                            kProfileUnchanged);
      }
    }
    ::close(fd);
  } catch (const std::exception& e) {
    return profile_failure(profile_errc::unreadable,
                           "cannot read profile " + path + ": " + e.what() + kProfileUnchanged);
  }
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
