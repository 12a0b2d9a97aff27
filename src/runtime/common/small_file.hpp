#pragma once
// Reading a small configuration file whole, with a size cap: the one reader of profiles
// (profile_io.cpp) and knob files (knob_config.cpp). Not installed.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace spinwise::detail {

enum class small_file_error {
  none,
  not_found,    // open(): ENOENT or ENOTDIR
  cannot_open,  // open(): any other errno (why: strerror)
  not_regular,  // a directory, a FIFO, a device... (why: "is a directory", "is not a regular file")
  cannot_read,  // read() failed (why: strerror)
  too_large,    // more than max_bytes (why: "is larger than N bytes")
};

struct small_file {
  small_file_error error = small_file_error::none;
  std::string why;   // what went wrong, to follow the file's name in a message
  std::string text;  // the whole file when error == none
};

// At most max_bytes of `path`. Only regular files are read: a FIFO without a writer would block
// the caller forever (open is non-blocking for that reason, and fstat decides before any read).
// Never throws but std::bad_alloc, and closes the file on every path, that one included.
inline small_file read_small_file(const std::string& path, std::size_t max_bytes) {
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  };
  small_file f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    f.error = e == ENOENT || e == ENOTDIR ? small_file_error::not_found : small_file_error::cannot_open;
    f.why = std::strerror(e);
    return f;
  }
  const fd_closer closer{fd};
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    f.error = small_file_error::not_regular;
    f.why = S_ISDIR(sb.st_mode) ? "is a directory" : "is not a regular file";
    return f;
  }
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      f.error = small_file_error::cannot_read;
      f.why = std::strerror(errno);
      break;
    }
    if (got == 0) break;
    if (f.text.size() + static_cast<std::size_t>(got) > max_bytes) {
      f.error = small_file_error::too_large;
      f.why = "is larger than " + std::to_string(max_bytes) + " bytes";
      break;
    }
    f.text.append(buf, static_cast<std::size_t>(got));
  }
  if (f.error != small_file_error::none) f.text.clear();
  return f;
}

}  // namespace spinwise::detail
