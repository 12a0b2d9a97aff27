// The atomic whole-file write (spinwise/runtime/atomic_file.hpp).
#include "spinwise/runtime/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace spinwise {

namespace {

// write() until done; false with errno set on failure.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

bool write_file_atomically(const std::string& asked, const std::string& text, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  // A link is written through: the file it names is replaced, the link stays.
  std::string path = asked;
  struct stat st {};
  if (::lstat(asked.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    const std::unique_ptr<char, decltype(&std::free)> real(::realpath(asked.c_str(), nullptr), &std::free);
    if (real != nullptr) path = real.get();
  }
  // Not a regular file (/dev/null, /dev/stdout, a FIFO): written in place. A rename would put a
  // regular file where the device or the pipe was.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return fail("cannot write " + asked + ": " + std::strerror(errno));
    const bool ok = write_all(fd, text);
    const int e = errno;
    ::close(fd);
    return ok ? true : fail("cannot write " + asked + ": " + std::strerror(e));
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // Errors name the file asked for; the temporary beside it is an implementation detail.
  if (fd < 0) return fail("cannot create " + asked + ": " + std::strerror(errno));
  bool written = write_all(fd, text) && ::fsync(fd) == 0;
  int e = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    e = errno;
  }
  if (!written) {
    ::unlink(tmp.c_str());
    return fail("cannot write " + asked + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("cannot replace " + asked + ": " + std::strerror(e));
  }
  // The rename is in the directory: flush it too. The file is in place whatever this answers.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace spinwise
