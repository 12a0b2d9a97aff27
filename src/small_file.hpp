#pragma once
// Reading a small configuration file whole, with a size cap (knob files; profile_io.cpp reads
// profiles the same way). Not installed.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace spinwise::detail {

enum class small_file_error { none, not_found, unreadable, too_large };

struct small_file {
  small_file_error error = small_file_error::none;
  std::string why;   // "No such file or directory", "is a directory", "larger than N bytes"
  std::string text;  // the whole file when error == none
};

// At most max_bytes of `path`. Never throws but for std::bad_alloc.
inline small_file read_small_file(const std::string& path, std::size_t max_bytes) {
  small_file f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    f.error = e == ENOENT || e == ENOTDIR ? small_file_error::not_found : small_file_error::unreadable;
    f.why = std::strerror(e);
    return f;
  }
  struct stat sb {};
  if (::fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    ::close(fd);
    f.error = small_file_error::unreadable;
    f.why = "is a directory";
    return f;
  }
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      f.error = small_file_error::unreadable;
      f.why = std::strerror(errno);
      break;
    }
    if (got == 0) break;
    f.text.append(buf, static_cast<std::size_t>(got));
    if (f.text.size() > max_bytes) {
      f.error = small_file_error::too_large;
      f.why = "larger than " + std::to_string(max_bytes) + " bytes";
      break;
    }
  }
  ::close(fd);
  if (f.error != small_file_error::none) f.text.clear();
  return f;
}

}  // namespace spinwise::detail
