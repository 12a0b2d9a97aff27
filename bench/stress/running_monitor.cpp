#include "running_monitor.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "spinwise/runtime/order_stats.hpp"

namespace spinwise::stress {

running_monitor::running_monitor(double period_ms, const std::atomic<bool>& measuring)
    : period_ms_(period_ms), measuring_(measuring), thread_([this] { loop(); }) {}

running_monitor::~running_monitor() { stop(); }

void running_monitor::stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

std::vector<int> running_monitor::open_task_stats() {
  std::vector<int> fds;
  const long self = syscall(SYS_gettid);
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return fds;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (std::strtol(e->d_name, nullptr, 10) == self) continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/stat";
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fds.push_back(fd);
  }
  closedir(d);
  return fds;
}

int running_monitor::count_running(const std::vector<int>& fds) {
  int running = 0, read_any = 0;
  char buf[1024];
  for (int fd : fds) {
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "tid (comm) S ...": comm may hold spaces and parentheses, so look after the last ')'.
    const char* close = std::strrchr(buf, ')');
    if (close == nullptr || close[1] != ' ') continue;
    ++read_any;
    if (close[2] == 'R') ++running;
  }
  return read_any > 0 ? running : -1;
}

void running_monitor::loop() {
  const std::vector<int> fds = open_task_stats();
  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(period_ms_));
  auto next = std::chrono::steady_clock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    next += period;
    std::this_thread::sleep_until(next);
    if (!measuring_.load(std::memory_order_relaxed)) continue;
    const int r = count_running(fds);
    if (r >= 0) samples_.push_back(static_cast<std::uint16_t>(std::min(r, 65535)));
  }
  for (int fd : fds) close(fd);
}

running_monitor::summary running_monitor::result() const {
  summary s;
  s.samples = samples_.size();
  if (samples_.empty()) return s;
  double sum = 0, sq = 0;
  for (std::uint16_t v : samples_) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  s.mean = sum / static_cast<double>(s.samples);
  s.stddev = std::sqrt(std::max(0.0, sq / static_cast<double>(s.samples) - s.mean * s.mean));
  const std::vector<double> sorted =
      runtime::sorted_sample(std::vector<double>(samples_.begin(), samples_.end()));
  s.p50 = runtime::median_sorted(sorted);
  s.p99 = runtime::quantile_sorted(sorted, 0.99);
  s.max = static_cast<unsigned>(sorted.back());
  const std::size_t stride = (samples_.size() + kMaxSeries - 1) / kMaxSeries;
  for (std::size_t i = 0; i < samples_.size(); i += stride) s.series.push_back(samples_[i]);
  return s;
}

}  // namespace spinwise::stress
