#pragma once
// What one contended run did, per thread, that Google Benchmark cannot tell us (its counters are
// summed over threads, and every thread runs the same number of iterations): acquisitions, CPU
// time and context switches, the fairness window, and the time cap that stops a run which would
// take minutes.

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "spinwise/arch.hpp"

namespace spinwise::bench {

// Most threads a contended benchmark may use (the slots below are preallocated).
inline constexpr int kMaxThreads = 256;

inline std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The longest one benchmark run may take (set once at start-up from the mode). A FIFO lock whose
// next owner is preempted, or a pinned handoff on a loaded machine, can take milliseconds per
// acquisition; Google Benchmark sizes a run from a faster trial run and cannot stop it early, so
// the benchmark bodies stop working once this has passed and report what they did until then
// (the `capped` counter says so).
inline std::chrono::nanoseconds& run_cap() noexcept {
  static std::chrono::nanoseconds v{std::chrono::seconds(3)};
  return v;
}

// Sets `expired` once run_cap() has passed, unless destroyed first. One sleeping thread per run.
class run_deadline {
 public:
  explicit run_deadline(std::atomic<bool>& expired)
      : deadline_(std::chrono::steady_clock::now() + run_cap()) {
    thread_ = std::thread([this, &expired] {
      std::unique_lock<std::mutex> l(m_);
      if (!cv_.wait_until(l, deadline_, [this] { return done_; }))
        expired.store(true, std::memory_order_relaxed);
    });
  }
  ~run_deadline() {
    {
      std::lock_guard<std::mutex> l(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  run_deadline(const run_deadline&) = delete;
  run_deadline& operator=(const run_deadline&) = delete;

 private:
  std::chrono::steady_clock::time_point deadline_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// CPU time and context switches of the calling thread. CPU time from CLOCK_THREAD_CPUTIME_ID:
// getrusage's ru_utime leaves out the time since the thread's last scheduler tick (up to 4 ms),
// which is the whole run in quick mode.
struct thread_usage {
  std::uint64_t cpu_ns = 0;
  std::uint64_t voluntary_switches = 0;
  std::uint64_t involuntary_switches = 0;
};

// A CPU clock's time in ns: this thread's (CLOCK_THREAD_CPUTIME_ID) or another's (its
// pthread_getcpuclockid clock); 0 when it cannot be read.
inline std::uint64_t clock_ns(clockid_t c) noexcept {
  struct timespec ts {};
  if (clock_gettime(c, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline thread_usage read_thread_usage() noexcept {
  thread_usage u;
  u.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  struct rusage ru {};
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    u.voluntary_switches = static_cast<std::uint64_t>(ru.ru_nvcsw);
    u.involuntary_switches = static_cast<std::uint64_t>(ru.ru_nivcsw);
  }
  return u;
}

// What one benchmark thread did in one run, written by that thread only. The acquisition count
// is atomic because other threads read it mid-run (the fairness window below), and so is the
// flag that publishes the thread's CPU clock to them.
struct alignas(kCacheLinePad) thread_slot {
  std::atomic<std::uint64_t> acquisitions{0};
  clockid_t cpu_clock{};
  std::atomic<bool> has_cpu_clock{false};
  std::uint64_t begin_ns = 0;  // steady clock at the first iteration
  std::uint64_t end_ns = 0;    // and after the last
  thread_usage usage_begin, usage_end;
  std::uint64_t extra = 0;  // scenario-specific (the contended bodies count writes here)
};

// The per-run record of a contended benchmark.
//
// Fairness is the spread of per-thread acquisitions over a window in which every thread was
// competing. Google Benchmark gives each thread the same iteration count, so totals are equal by
// construction; what differs is how far each thread gets while all of them run. The window opens
// when the last thread enters the loop (it snapshots everyone's count) and closes when the first
// thread finishes (it snapshots again). Oversubscribed threads can start late, after a scheduler
// slice or more: if the first finisher comes before the last starter, or the window holds fewer
// acquisitions than there are threads, the window is [start, first finish] instead.
// fair_window_acq tells how many acquisitions the figure rests on.
struct run_record {
  explicit run_record(int threads) : threads_(threads) {}

  thread_slot& slot(int i) noexcept { return slots_[i]; }

  // Each thread, before started(): lets the window's snapshots read this thread's CPU time.
  static void publish_cpu_clock(thread_slot& t) noexcept {
    if (pthread_getcpuclockid(pthread_self(), &t.cpu_clock) == 0)
      t.has_cpu_clock.store(true, std::memory_order_release);
  }

  // Each thread, just before its first acquisition.
  void started() noexcept {
    if (started_.fetch_add(1, std::memory_order_acq_rel) + 1 != threads_) return;
    open_ns_ = now_ns();  // before the snapshot, close_ns_ after its own: the window holds both
    snapshot(open_, open_cpu_);
    int expected = kStarting;
    phase_.compare_exchange_strong(expected, kOpen, std::memory_order_acq_rel);  // fails if already closed
  }

  // Each thread, right after its last acquisition.
  void finished() noexcept {
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    int p = phase_.load(std::memory_order_acquire);
    if (p == kStarting && phase_.compare_exchange_strong(p, kClosedEarly, std::memory_order_acq_rel)) {
      opened_ = false;  // the last starter's snapshot, if any, is ignored
    }
    snapshot(close_, close_cpu_);
    close_ns_ = now_ns();
  }

  struct summary {
    double total = 0, wall_s = 0;
    double cov = 0, min_count = 0, max_count = 0, window_total = 0;
    // CPU time within the window of the thread with the fewest acquisitions (of several tied,
    // the one that ran most) and of the one with the most, in ns: whether a starved thread was
    // refused the lock while it ran, or was off its CPU. 0 when the thread had no CPU in the
    // window, had not started by its close, or its CPU clock could not be read.
    double min_count_cpu_ns = 0, max_count_cpu_ns = 0;
    // How long the window lasted (steady clock), and whether it opened at all: false when the
    // first finisher came before the last starter, or the window held fewer acquisitions than
    // threads, and the counts are taken from each thread's start instead.
    double window_ns = 0;
    bool window_opened = false;
    double cpu_ns = 0, voluntary = 0, involuntary = 0;
    double extra = 0;
    bool capped = false;
  };

  // Thread 0, after the loop (Google Benchmark's stop barrier orders every thread's writes first).
  summary summarize() const {
    summary s;
    std::uint64_t begin = ~std::uint64_t{0}, end = 0;
    for (int i = 0; i < threads_; ++i) {
      const thread_slot& t = slots_[i];
      s.total += static_cast<double>(t.acquisitions.load(std::memory_order_relaxed));
      begin = std::min(begin, t.begin_ns);
      end = std::max(end, t.end_ns);
      s.cpu_ns += static_cast<double>(t.usage_end.cpu_ns - t.usage_begin.cpu_ns);
      s.voluntary += static_cast<double>(t.usage_end.voluntary_switches - t.usage_begin.voluntary_switches);
      s.involuntary +=
          static_cast<double>(t.usage_end.involuntary_switches - t.usage_begin.involuntary_switches);
      s.extra += static_cast<double>(t.extra);
    }
    // The window: from the opening snapshot, or from each thread's start when the first finisher
    // came before the last starter, or when the window holds fewer acquisitions than threads.
    bool whole = !opened_;
    const auto in_window = [&](int i) { return static_cast<double>(close_[i] - (whole ? 0 : open_[i])); };
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < threads_; ++i) sum += in_window(i);
    if (sum < threads_) whole = true;
    sum = 0;
    s.min_count = 1e300;
    s.min_count_cpu_ns = -1;
    for (int i = 0; i < threads_; ++i) {
      const double w = in_window(i);
      const double cpu = window_cpu_ns(i, whole);
      sum += w;
      sum_sq += w * w;
      // Of the threads tied at the fewest (often several at 0), the one that ran most: its CPU
      // time says whether any of them ran.
      if (w < s.min_count || (w == s.min_count && cpu > s.min_count_cpu_ns)) {
        s.min_count = w;
        s.min_count_cpu_ns = cpu;
      }
      if (w > s.max_count) {
        s.max_count = w;
        s.max_count_cpu_ns = cpu;
      }
    }
    s.window_total = sum;
    s.window_opened = !whole;
    const std::uint64_t from = whole ? begin : open_ns_;
    s.window_ns = close_ns_ > from ? static_cast<double>(close_ns_ - from) : 0;
    s.wall_s = end > begin ? static_cast<double>(end - begin) * 1e-9 : 0;
    const double mean = sum / threads_;
    const double var = std::max(0.0, sum_sq / threads_ - mean * mean);
    s.cov = mean > 0 ? std::sqrt(var) / mean : 0;
    return s;
  }

 private:
  static constexpr int kStarting = 0, kOpen = 1, kClosedEarly = 2;

  // Each thread's count and CPU clock, read together (a preemption between the two passes of
  // separate loops would skew them by a scheduler slice).
  void snapshot(std::uint64_t* out, std::uint64_t* cpu_out) noexcept {
    for (int i = 0; i < threads_; ++i) {
      const thread_slot& t = slots_[i];
      out[i] = t.acquisitions.load(std::memory_order_relaxed);
      cpu_out[i] = t.has_cpu_clock.load(std::memory_order_acquire) ? clock_ns(t.cpu_clock) : 0;
    }
  }

  // Thread i's CPU time from the window's opening (or its own start) to the window's close.
  double window_cpu_ns(int i, bool from_start) const noexcept {
    const std::uint64_t from = from_start ? slots_[i].usage_begin.cpu_ns : open_cpu_[i];
    const std::uint64_t to = close_cpu_[i];
    return to > from && from != 0 ? static_cast<double>(to - from) : 0;
  }

  int threads_;
  thread_slot slots_[kMaxThreads];
  std::atomic<int> started_{0};
  std::atomic<int> phase_{kStarting};
  std::atomic<bool> closed_{false};
  bool opened_ = true;  // written by the first finisher before its snapshot, read after the run
  std::uint64_t open_[kMaxThreads] = {};
  std::uint64_t close_[kMaxThreads] = {};
  std::uint64_t open_cpu_[kMaxThreads] = {};
  std::uint64_t close_cpu_[kMaxThreads] = {};
  std::uint64_t open_ns_ = 0, close_ns_ = 0;  // steady clock before the open snapshot, after the close one
};

// Publishes a run_record's summary as Google Benchmark counters. Only thread 0 calls this, so the
// per-thread summing Google Benchmark does leaves the values as they are.
inline void publish(benchmark::State& state, const run_record::summary& s) {
  using benchmark::Counter;
  const double total = std::max(s.total, 1.0);
  state.counters["acq_per_s"] = Counter(s.wall_s > 0 ? s.total / s.wall_s : 0);
  state.counters["fair_cov"] = Counter(s.cov);
  state.counters["fair_min"] = Counter(s.min_count);
  state.counters["fair_max"] = Counter(s.max_count);
  state.counters["fair_window_acq"] = Counter(s.window_total);
  state.counters["fair_window_ms"] = Counter(s.window_ns * 1e-6);
  state.counters["fair_window_open"] = Counter(s.window_opened ? 1 : 0);
  state.counters["fair_min_cpu_ms"] = Counter(s.min_count_cpu_ns * 1e-6);
  state.counters["fair_max_cpu_ms"] = Counter(s.max_count_cpu_ns * 1e-6);
  state.counters["cpu_ns_per_acq"] = Counter(s.cpu_ns / total);
  state.counters["csw_per_acq"] = Counter((s.voluntary + s.involuntary) / total);
  state.counters["vcsw_per_acq"] = Counter(s.voluntary / total);
  state.counters["cpus_busy"] = Counter(s.wall_s > 0 ? s.cpu_ns * 1e-9 / s.wall_s : 0);
  state.counters["capped"] = Counter(s.capped ? 1 : 0);
}

}  // namespace spinwise::bench
