#pragma once
// Samples how many of this process's threads are running (state R in /proc/self/task/*/stat):
// the incident's "running threads jumped past 100 and fell back", which averages hide.
//
// One thread, started with the workload's threads already alive: it opens each task's stat file
// once and re-reads it with pread every period (about 1-2 us per thread on our VM, so 25 threads
// every 10 ms cost well under 1% of one CPU). It does not count itself. Where /proc cannot be
// read (some emulators) it reports zero samples instead of failing the run.

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace spinwise::stress {

class running_monitor {
 public:
  struct summary {
    std::uint64_t samples = 0;
    double mean = 0, stddev = 0;
    double p50 = 0, p99 = 0;  // order statistics of the samples (runtime/order_stats.hpp)
    unsigned max = 0;
    std::vector<std::uint16_t> series;  // at most kMaxSeries samples, evenly thinned
  };
  static constexpr std::size_t kMaxSeries = 1000;

  // Samples every `period_ms` while `measuring` is true, until stop().
  running_monitor(double period_ms, const std::atomic<bool>& measuring);
  ~running_monitor();
  running_monitor(const running_monitor&) = delete;
  running_monitor& operator=(const running_monitor&) = delete;

  void stop();
  summary result() const;  // after stop()

  // Counts the tasks in state R among the open stat files; -1 when none can be read.
  static int count_running(const std::vector<int>& fds);
  // Opens /proc/self/task/<tid>/stat for every task but the caller's.
  static std::vector<int> open_task_stats();

 private:
  void loop();

  double period_ms_;
  const std::atomic<bool>& measuring_;
  std::atomic<bool> stop_{false};
  std::vector<std::uint16_t> samples_;  // written by the monitor thread, read after join
  std::thread thread_;
};

}  // namespace spinwise::stress
