// The statistics report at exit (SPINWISE_PRELOAD_STATS), and the registry's locks held across
// fork() (interposer.hpp).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "interposer.hpp"
#include "spinwise/runtime/stats_report.hpp"

namespace spinwise::preload {

// fork() with statistics on: the registry's locks are held across it (stats_report.hpp), so a
// child never inherits one that a thread of the parent held (it hung in exit(), in the report).
// The handlers' own lock calls count nothing (tl_state.inside): counting could take those very locks.
void stats_fork_prepare() noexcept {
  ++tl_state.inside;
  stats_atfork_prepare();
}
void stats_fork_parent() noexcept {
  stats_atfork_parent();
  --tl_state.inside;
}
void stats_fork_child() noexcept {
  stats_atfork_child();
  profile_fork_child();
  --tl_state.inside;
}

bool took_interposed_locks(const stats_snapshot& snap) noexcept {
  for (const auto& c : snap.classes)
    if (c.name.rfind("preload.", 0) == 0 && c.totals.acquisitions != 0) return true;
  return false;
}

void write_report(const char* path, const std::string& text, const char* what) noexcept {
  try {
    // "%p" in the name: the process ID (a program that forks children that exit normally).
    std::string name = path;
    for (std::size_t at = name.find("%p"); at != std::string::npos; at = name.find("%p"))
      name.replace(at, 2, std::to_string(getpid()));
    path = name.c_str();
    // Never through a symbolic link (O_NOFOLLOW): in a shared directory such as /tmp, another
    // user's link at the name would have this process write, or truncate, the file it names.
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      std::size_t done = 0;
      while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      if (close(fd) != 0 || done != text.size())
        std::fprintf(stderr, "spinwise-preload: could not write %s\n", path);
    } else {
      std::fprintf(stderr, "spinwise-preload: could not open %s: %s\n", path,
                   errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
    }
  } catch (...) {
    std::fprintf(stderr, "spinwise-preload: out of memory for the %s\n", what);
  }
}

void write_stats_at_exit() noexcept {
  const char* path = detail::env("SPINWISE_PRELOAD_STATS");
  if (path == nullptr) return;
  ++tl_state.inside;
  try {
    const stats_snapshot snap = take_stats_snapshot();
    // A process that took no lock (a wrapper such as timeout(1), which the variable reaches too)
    // leaves the file to the one that did.
    if (took_interposed_locks(snap)) write_report(path, format_stats_json(snap), "statistics report");
  } catch (...) {
    std::fprintf(stderr, "spinwise-preload: out of memory for the statistics report\n");
  }
  --tl_state.inside;
}

}  // namespace spinwise::preload
